/**
 * Builds a library's example memory on a worker thread (build-worker.ts), so that a write of
 * usage examples, a start-up load or another worker's change never pauses the main thread for
 * the build: not for its CPU (the sliced path already gave the event loop back every 10 ms) and
 * not for its garbage (the collector's scavenges of the build's young objects were the longest
 * stalls left: 60-95 ms at 16.8k examples). The worker answers with typed arrays (transferred)
 * and a few strings and small maps; `adoptPreparedMemory` makes the memory of them, its caches
 * filled, without computing anything.
 *
 * One worker per process, one build at a time (others wait their turn); it is kept for
 * `IDLE_MS` after a build (the next write of a burst doesn't start a thread again), bounded by
 * `resourceLimits`, and never keeps the process alive while idle. An abort (the client went away,
 * the build time limit) terminates it and throws the signal's reason; a crash, an exit or running
 * out of memory is INTERNAL: either way nothing was built, so nothing is published.
 * @module
 */
import type { Worker } from 'node:worker_threads'
import type { ExamplesConfig } from '../config/schema.ts'
import { abortError, ToolselError, throwIfAborted } from '../errors.ts'
import { runStepsSliced, type Steps } from '../time-slicer.ts'
import { siblingModule, startWorkerThread } from '../worker-thread.ts'
import {
  BUILD_WORKER_ROLE,
  unpackPrepared,
  type MemoryBuildReply,
  type MemoryBuildRequest,
  type PackedExamples,
  type PackedPreparedMemory,
} from './build-worker.ts'
import type { ExampleMemory } from './example-memory.ts'
import { adoptPreparedMemory } from './memory-selection.ts'
import type { UsageExample } from './usage-example.ts'

/**
 * Examples from which a library's memory is built on the worker thread; smaller sets are built
 * in slices on the main thread (`ExampleMemory.buildSliced`), where they stall little and a
 * thread's start would cost more than the build.
 */
export const WORKER_MIN_EXAMPLES = 2000

/** An idle worker is stopped after this long (ms). */
const IDLE_MS = 15_000

/**
 * The worker's old-generation bound, MiB: 128 + 10 KiB per example (16.8k examples build in 64
 * MiB; 99.5k need more than 128).
 */
export function workerHeapLimitMb(examples: number): number {
  return Math.ceil(128 + examples / 100)
}

const ENTRY = siblingModule('build-worker', import.meta.url)

let worker: Worker | undefined
let workerHeapMb = 0
let busy: Worker | undefined
let idleTimer: NodeJS.Timeout | undefined
let nextId = 0
/** The build running now (one at a time); the next waits for it. */
let turn: Promise<void> = Promise.resolve()

/** The worker thread while it builds a memory, else undefined (a test stops it mid-build). */
export function busyBuildWorker(): Worker | undefined {
  return busy
}

/**
 * The memory of `examples`, built and prepared for `config` on the worker thread. Throws the
 * signal's reason once aborted (the worker is stopped), INTERNAL when the worker fails.
 */
export async function buildMemoryOnWorker(
  examples: readonly UsageExample[],
  config: ExamplesConfig,
  signal?: AbortSignal,
): Promise<ExampleMemory> {
  throwIfAborted(signal)
  const previous = turn
  let release!: () => void
  turn = new Promise((resolve) => (release = resolve))
  try {
    await waitOrAbort(previous, signal)
    const packed = await runStepsSliced(packExamples(examples), signal)
    const reply = await runOnWorker(packed, config, signal)
    const prepared = await runStepsSliced(unpackPrepared(reply), signal)
    return adoptPreparedMemory(examples, prepared, config)
  } finally {
    release()
  }
}

function waitOrAbort(promise: Promise<void>, signal?: AbortSignal): Promise<void> {
  if (!signal) return promise
  return new Promise((resolve, reject) => {
    const onAbort = () => reject(abortError(signal))
    signal.addEventListener('abort', onAbort, { once: true })
    void promise.then(() => {
      signal.removeEventListener('abort', onAbort)
      resolve()
    })
  })
}

/** `examples` packed for the thread (see PackedExamples), a step per example. */
export function* packExamples(examples: readonly UsageExample[]): Steps<PackedExamples> {
  const instructionLengths = new Int32Array(examples.length)
  let units = 0
  for (let position = 0; position < examples.length; position += 1) {
    instructionLengths[position] = examples[position].instruction.length
    units += instructionLengths[position]
  }
  const instructions = new Uint16Array(units)
  const toolIndex = new Map<string, number>()
  const toolCounts = new Int32Array(examples.length)
  const tools: number[] = []
  let offset = 0
  for (let position = 0; position < examples.length; position += 1) {
    const example = examples[position]
    const instruction = example.instruction
    for (let index = 0; index < instruction.length; index += 1)
      instructions[offset + index] = instruction.charCodeAt(index)
    offset += instruction.length
    toolCounts[position] = example.tools.length
    for (const id of example.tools) {
      let index = toolIndex.get(id)
      if (index === undefined) toolIndex.set(id, (index = toolIndex.size))
      tools.push(index)
    }
    yield
  }
  return {
    instructions,
    instructionLengths,
    toolIds: [...toolIndex.keys()],
    toolCounts,
    tools: Int32Array.from(tools),
  }
}

function startWorker(examples: number): Worker {
  const heapMb = workerHeapLimitMb(examples)
  if (worker && workerHeapMb >= heapMb) return worker
  if (worker) void worker.terminate()
  const resourceLimits = { maxOldGenerationSizeMb: heapMb, maxYoungGenerationSizeMb: 32 }
  worker = startWorkerThread(ENTRY, { workerData: { role: BUILD_WORKER_ROLE }, resourceLimits })
  workerHeapMb = heapMb
  const started = worker
  started.on('error', () => {})
  started.once('exit', () => {
    if (worker === started) worker = undefined
  })
  return started
}

function runOnWorker(
  examples: PackedExamples,
  config: ExamplesConfig,
  signal?: AbortSignal,
): Promise<PackedPreparedMemory> {
  clearTimeout(idleTimer)
  const thread = startWorker(examples.instructionLengths.length)
  thread.ref()
  busy = thread
  const id = nextId++
  return new Promise((resolve, reject) => {
    const done = () => {
      thread.off('message', onMessage)
      thread.off('error', onError)
      thread.off('exit', onExit)
      signal?.removeEventListener('abort', onAbort)
      busy = undefined
      thread.unref()
      idleTimer = setTimeout(() => {
        if (worker === thread) {
          worker = undefined
          void thread.terminate()
        }
      }, IDLE_MS)
      idleTimer.unref()
    }
    const fail = (message: string, cause?: unknown) => {
      done()
      if (worker === thread) worker = undefined
      void thread.terminate()
      reject(
        new ToolselError('INTERNAL', `The usage-example memory could not be built: ${message}.`, {
          cause,
        }),
      )
    }
    const onMessage = (
      reply: MemoryBuildReply | { id?: undefined; error: { message: string } },
    ) => {
      // The thread's bootstrap reports a module that failed to load without an id.
      if (reply.id === undefined)
        return fail(`its worker module did not load (${reply.error.message})`)
      if (reply.id !== id) return
      if ('error' in reply) return fail(reply.error)
      done()
      resolve(reply.prepared)
    }
    const onError = (error: Error) => fail(`its worker thread failed (${error.message})`, error)
    const onExit = (code: number) => fail(`its worker thread exited (code ${code})`)
    const onAbort = () => {
      done()
      if (worker === thread) worker = undefined
      void thread.terminate()
      reject(abortError(signal!))
    }
    thread.on('message', onMessage)
    thread.on('error', onError)
    thread.on('exit', onExit)
    signal?.addEventListener('abort', onAbort, { once: true })
    const request: MemoryBuildRequest = { id, examples, config }
    try {
      // The typed arrays are moved, not copied (made for this request only).
      thread.postMessage(request, [
        examples.instructions.buffer,
        examples.instructionLengths.buffer,
        examples.toolCounts.buffer,
        examples.tools.buffer,
      ] as ArrayBuffer[])
    } catch (error) {
      fail(`its worker thread could not be sent the examples (${(error as Error).message})`, error)
    }
  })
}
