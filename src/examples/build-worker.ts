/**
 * The worker thread that builds a library's example memory (memory-build-thread.ts starts it and
 * talks to it): from the examples and the library's `examples` configuration it builds the
 * memory and prepares it exactly as the main thread would (`ExampleMemory.build`, then
 * `prepareExampleMemory`: self-check, tool co-occurrence, word-pair memory — the same Steps code,
 * run to the end), and answers with the parts (`preparedMemoryParts`): typed arrays transferred,
 * not copied, and a few strings and small maps. The garbage of the build (per-example term maps,
 * tokens) is this thread's collector's to clear, so it never pauses the main thread.
 * @module
 */
import { parentPort, workerData } from 'node:worker_threads'
import type { ExamplesConfig } from '../config/schema.ts'
import type { Steps } from '../time-slicer.ts'
import type { CooccurrenceCounts } from './example-cooccurrence.ts'
import { ExampleMemory } from './example-memory.ts'
import {
  prepareExampleMemory,
  preparedMemoryParts,
  type PreparedMemoryParts,
} from './memory-selection.ts'
import type { UsageExample } from './usage-example.ts'
import { errorMessage } from '../errors.ts'

/**
 * Examples packed for the thread: the instructions' UTF-16 code units one after the other (with
 * their lengths; a buffer is moved, a string copied: posting 4.6M characters of instructions as
 * one string took 80-230 ms of the main thread, their concatenation as long again), the
 * distinct tool ids once, and per example its tools as indices into them. Copying 16.8k example
 * objects (a structured clone: two arrays and a string each) took 20-190 ms of the main thread;
 * this is two strings and three typed arrays (`packExamples`, made in slices).
 */
export interface PackedExamples {
  /** UTF-16 code units. */
  readonly instructions: Uint16Array
  /** Code units per instruction. */
  readonly instructionLengths: Int32Array
  readonly toolIds: readonly string[]
  /** Tools per example. */
  readonly toolCounts: Int32Array
  /** Indices into `toolIds`, example after example. */
  readonly tools: Int32Array
}

export interface MemoryBuildRequest {
  id: number
  examples: PackedExamples
  config: ExamplesConfig
}

/** `packExamples`'s inverse: the same examples (equal instructions and tool lists, in order). */
export function unpackExamples(packed: PackedExamples): UsageExample[] {
  const examples: UsageExample[] = []
  let start = 0
  let tool = 0
  for (let position = 0; position < packed.instructionLengths.length; position += 1) {
    const end = start + packed.instructionLengths[position]
    const tools: string[] = []
    for (let count = packed.toolCounts[position]; count > 0; count -= 1)
      tools.push(packed.toolIds[packed.tools[tool++]])
    examples.push({ instruction: fromCodeUnits(packed.instructions.subarray(start, end)), tools })
    start = end
  }
  return examples
}

/**
 * A map of counts packed: its keys concatenated (with their lengths) and its values. The
 * co-occurrence's maps hold ~10k keys at 16.8k examples; copied as maps, making their strings
 * took 30-80 ms of the main thread in one piece (a message is read before it is handed over);
 * packed, the main thread unpacks them in slices (`unpackPrepared`).
 */
export interface PackedCounts {
  /** The keys, UTF-16 code units (as `Uint16Array`: moved, not copied). */
  readonly keys: Uint16Array
  /** Code units per key. */
  readonly lengths: Int32Array
  readonly values: Float64Array
}

/** The prepared memory as the thread sends it: the co-occurrence's maps packed. */
export type PackedPreparedMemory = Omit<PreparedMemoryParts, 'cooccurrence'> & {
  readonly cooccurrence?: Record<keyof CooccurrenceCounts, PackedCounts>
}

export type MemoryBuildReply =
  { id: number; prepared: PackedPreparedMemory } | { id: number; error: string }

export function packCounts(counts: ReadonlyMap<string, number>): PackedCounts {
  const keys: string[] = []
  const lengths = new Int32Array(counts.size)
  const values = new Float64Array(counts.size)
  let slot = 0
  for (const [key, value] of counts) {
    keys.push(key)
    lengths[slot] = key.length
    values[slot] = value
    slot += 1
  }
  return { keys: toCodeUnits(keys.join('')), lengths, values }
}

/** `packCounts`'s inverse (the same map, in the same order), a step per key. */
export function* unpackCounts(packed: PackedCounts): Steps<Map<string, number>> {
  const counts = new Map<string, number>()
  let start = 0
  for (let slot = 0; slot < packed.lengths.length; slot += 1) {
    const end = start + packed.lengths[slot]
    counts.set(fromCodeUnits(packed.keys.subarray(start, end)), packed.values[slot])
    start = end
    yield
  }
  return counts
}

/** `text`'s UTF-16 code units (lone surrogates kept, unlike UTF-8). */
export function toCodeUnits(text: string): Uint16Array {
  const units = new Uint16Array(text.length)
  for (let index = 0; index < text.length; index += 1) units[index] = text.charCodeAt(index)
  return units
}

/** `toCodeUnits`'s inverse (a TextDecoder would replace lone surrogates). */
export function fromCodeUnits(units: Uint16Array): string {
  let text = ''
  for (let start = 0; start < units.length; start += 8192)
    text += String.fromCharCode(...units.subarray(start, start + 8192))
  return text
}

/** `prepared` with the co-occurrence's maps packed (see PackedCounts). */
export function packPrepared(prepared: PreparedMemoryParts): PackedPreparedMemory {
  const { cooccurrence, ...rest } = prepared
  if (!cooccurrence) return rest
  return {
    ...rest,
    cooccurrence: {
      uses: packCounts(cooccurrence.uses),
      sizes: packCounts(cooccurrence.sizes),
      pairs: packCounts(cooccurrence.pairs),
      sets: packCounts(cooccurrence.sets),
    },
  }
}

/** `packPrepared`'s inverse, a step per key (the main thread runs it in slices). */
export function* unpackPrepared(packed: PackedPreparedMemory): Steps<PreparedMemoryParts> {
  const { cooccurrence, ...rest } = packed
  if (!cooccurrence) return rest
  const uses = yield* unpackCounts(cooccurrence.uses)
  const sizes = yield* unpackCounts(cooccurrence.sizes)
  const pairs = yield* unpackCounts(cooccurrence.pairs)
  const sets = yield* unpackCounts(cooccurrence.sets)
  return { ...rest, cooccurrence: { uses, sizes, pairs, sets } }
}

/** The buffers of `prepared`'s typed arrays (each once), to transfer rather than copy. */
export function preparedBuffers(prepared: PackedPreparedMemory): ArrayBuffer[] {
  const buffers = new Set<ArrayBuffer>()
  for (const counts of Object.values(prepared.cooccurrence ?? {}))
    for (const array of [counts.keys, counts.lengths, counts.values])
      buffers.add(array.buffer as ArrayBuffer)
  for (const parts of [prepared.memory, prepared.wordPairs]) {
    if (!parts) continue
    for (const array of [
      parts.termStart,
      parts.termTable,
      parts.idf,
      parts.postingStart,
      parts.postingDocs,
      parts.postingWeights,
    ])
      buffers.add(array.buffer as ArrayBuffer)
  }
  return [...buffers]
}

/** What the worker does for one request. */
export function buildPreparedMemory(request: MemoryBuildRequest): PackedPreparedMemory {
  const memory = ExampleMemory.build(unpackExamples(request.examples))
  prepareExampleMemory({ memory }, request.config)
  return packPrepared(preparedMemoryParts(memory, request.config))
}

/** The `workerData` memory-build-thread.ts starts this module's thread with. */
export const BUILD_WORKER_ROLE = 'toolsel-example-memory-build'

if (parentPort && (workerData as { role?: string } | null)?.role === BUILD_WORKER_ROLE) {
  const port = parentPort
  port.on('message', (request: MemoryBuildRequest) => {
    let reply: MemoryBuildReply
    let transfer: ArrayBuffer[] = []
    try {
      const prepared = buildPreparedMemory(request)
      reply = { id: request.id, prepared }
      transfer = preparedBuffers(prepared)
    } catch (error) {
      reply = { id: request.id, error: errorMessage(error) }
    }
    port.postMessage(reply, transfer)
  })
}
