/**
 * A usage example: an instruction someone gave and the tools that really served it. A library may
 * carry examples; they expand each tool's BM25 document with the words people use to ask for it
 * and feed the nearest-example memory.
 * @module
 */
import { z } from 'zod'
import { ToolselError } from '../errors.ts'
import { runSteps, runStepsSliced, type Steps } from '../time-slicer.ts'
import { shownName, shownNames } from '../library/name-characters.ts'
import { ToolIdSchema } from '../library/tool-id-limit.ts'

/** Longest instruction kept in an example, in characters. */
export const MAX_EXAMPLE_INSTRUCTION_CHARS = 8000
/** Most tools one example may name. */
export const MAX_EXAMPLE_TOOLS = 64

export interface UsageExample {
  /** What was asked, as the agent or user wrote it. */
  readonly instruction: string
  /** Ids of the tools that served it, de-duplicated, in the order given. */
  readonly tools: readonly string[]
}

export const UsageExampleSchema = z
  .object({
    instruction: z
      .string()
      .trim()
      .min(1)
      .max(MAX_EXAMPLE_INSTRUCTION_CHARS)
      .describe('The instruction as it was asked.'),
    tools: z
      .array(ToolIdSchema)
      .min(1)
      .max(MAX_EXAMPLE_TOOLS)
      .describe('Ids of the tools that served it (the tools really called).'),
  })
  .strict()

/** Whitespace collapsed and trimmed; tool ids de-duplicated. */
export function normalizeExample(example: {
  instruction: string
  tools: readonly string[]
}): UsageExample {
  return {
    instruction: example.instruction.replace(/\s+/g, ' ').trim(),
    tools: [...new Set(example.tools)],
  }
}

/**
 * Two examples are duplicates when their instructions are equal ignoring case and whitespace and
 * they name the same set of tools.
 */
export function exampleKey(example: UsageExample): string {
  return `${example.instruction.toLowerCase()}\u0000${[...example.tools].sort().join('\u0001')}`
}

/**
 * Where a file's examples came from: the file and each example's `line N` (the line an editor
 * shows, blank lines counted) or `item N` (its place in a JSON array); N counts from 1.
 */
export interface ExamplePlaces {
  readonly source: string
  readonly places: readonly string[]
  /**
   * Examples of the file naming an unknown tool that were counted, not kept (`toolsel index
   * --examples` keeps the first MAX_UNKNOWN_EXAMPLES_KEPT): the message gives their number.
   */
  readonly unlisted?: number
}

/** Examples naming unknown tools that a file reader keeps for the message; the rest are counted. */
export const MAX_UNKNOWN_EXAMPLES_KEPT = 20

/**
 * Throws INVALID_INPUT naming every tool id that `has` does not know (at most 20 in the message,
 * all in `details.ids`). With `from` (examples read from a file), the message names the file and
 * the line of the first example with an unknown id, and says how to find the library's ids.
 * `hint`: a sentence about the ids the unknown ones may have meant (ToolLibrary.unknownIdsHint).
 * `subject`: what the message says named the ids when they were not read from a file, with its
 * verb (`POST /v1/feedback` passes "The feedback's `used` names"); "Usage examples name" by default.
 */
export function assertKnownTools(
  libraryName: string,
  examples: readonly UsageExample[],
  has: (id: string) => boolean,
  from?: ExamplePlaces,
  hint?: (unknown: readonly string[]) => string,
  subject?: string,
): void {
  runSteps(knownToolSteps(libraryName, examples, has, from, hint, subject))
}

/**
 * `assertKnownTools`, yielding to the event loop every few milliseconds (a rebuild checks every
 * example of the library: 5-15 ms in one piece at 16k); the same error.
 */
export function assertKnownToolsSliced(
  libraryName: string,
  examples: readonly UsageExample[],
  has: (id: string) => boolean,
  signal?: AbortSignal,
  hint?: (unknown: readonly string[]) => string,
  subject?: string,
): Promise<void> {
  return runStepsSliced(
    knownToolSteps(libraryName, examples, has, undefined, hint, subject),
    signal,
  )
}

function* knownToolSteps(
  libraryName: string,
  examples: readonly UsageExample[],
  has: (id: string) => boolean,
  from?: ExamplePlaces,
  hint?: (unknown: readonly string[]) => string,
  subject = 'Usage examples name',
): Steps<void> {
  const unknown = new Set<string>()
  let first = -1
  for (const [index, example] of examples.entries()) {
    for (const id of example.tools) {
      if (has(id)) continue
      unknown.add(id)
      if (first < 0) first = index
    }
    yield
  }
  if (unknown.size === 0) return
  const ids = [...unknown]
  if (from === undefined) {
    throw new ToolselError(
      'INVALID_INPUT',
      `${subject} tools that library "${libraryName}" does not have: ${shownNames(ids)}.${hint?.(ids) ?? ''} Use the ids of GET /v1/libraries/${libraryName}/tools/<id> (or search-tools).`,
      { details: { library: libraryName, ids } },
    )
  }
  // Every unknown id with the places that name it (at most MAX_PLACES_SHOWN each), in file order.
  const placesOf = new Map<string, string[]>()
  for (const [index, example] of examples.entries()) {
    for (const id of example.tools) {
      if (has(id)) continue
      const places = placesOf.get(id) ?? []
      places.push(from.places[index])
      placesOf.set(id, places)
    }
  }
  const listed = ids.slice(0, 20).map((id) => {
    const places = placesOf.get(id)!
    const shown = places.slice(0, MAX_PLACES_SHOWN).join(', ')
    const more =
      places.length > MAX_PLACES_SHOWN ? ` and ${places.length - MAX_PLACES_SHOWN} more` : ''
    return `${shownName(id)} (${shown}${more})`
  })
  const others = ids.length > 20 ? ` and ${ids.length - 20} more` : ''
  const unlisted = from.unlisted ?? 0
  const after =
    unlisted > 0
      ? ` ${unlisted} more example(s) after ${from.places.at(-1)} name tools it lacks (not listed).`
      : ''
  throw new ToolselError(
    'INVALID_INPUT',
    `Invalid usage examples in ${from.source}: library "${libraryName}" has no tool ${listed.join(', ')}${others}.${after}${hint?.(ids) ?? ''} Name tools by their ids in the library, as \`toolsel select "<instruction>" --library ${libraryName} --json\` shows them. None of the file was used.`,
    {
      details: {
        library: libraryName,
        ids,
        source: `${from.source} ${from.places[first]}`,
        places: Object.fromEntries([...placesOf].slice(0, 20)),
        ...(unlisted > 0 && { unlistedExamples: unlisted }),
      },
    },
  )
}

/** Places named per unknown id in `assertKnownTools`'s message. */
const MAX_PLACES_SHOWN = 5

/**
 * Parses JSON Lines (`{"instruction": …, "tools": [...]}` per line) or a JSON array of the same
 * objects. Throws INVALID_INPUT naming the line and field of the first bad record.
 */
export function parseExamplesText(text: string, source: string): UsageExample[] {
  return runSteps(parseSteps(text, source))
}

/** One example of a file as it is read: its place (`line 4`, `item 2`) and its record's `id`. */
export interface PlacedExample {
  example: UsageExample
  where: string
  /** With `withIds`: the record's `id` as a string, when it has one. */
  id?: string
}

/**
 * Largest JSON array of examples read, in bytes (it is parsed whole: JSON Lines are read a line
 * at a time instead); a one-line array is refused once the reading passes it (`exampleLineLimit`),
 * not read whole first. 16 MiB is about 200,000 short examples (`toolsel train`'s cap) and
 * peaks at about 0.3 GB in `toolsel index --examples`; 64 MiB was allowed before and a one-line
 * 94 MB array was read whole (433 MB RSS) before it was refused.
 */
export const MAX_EXAMPLES_ARRAY_BYTES = 16 * 1024 * 1024

/**
 * Longest line of a JSON Lines examples file, in bytes. The longest valid example is about 240 KB:
 * an instruction of MAX_EXAMPLE_INSTRUCTION_CHARS (8,000) and MAX_EXAMPLE_TOOLS (64) ids of 500
 * characters and an `id` of 500, every character written as a 6-byte `\uXXXX` escape
 * (8,000 × 6 + 65 × 500 × 6 + a few hundred bytes of keys and quotes); 1 MiB leaves four times
 * that for spaces. A longer line (/dev/zero, a file without line breaks) is refused when the
 * reading passes it, not read to the 256 MiB file limit first.
 */
export const MAX_EXAMPLE_LINE_BYTES = 1024 * 1024

/**
 * Whether examples text (a whole file, or its lines one at a time until this answers) is a JSON
 * array: `[` is its first character after a byte-order mark and JSON's spaces (space, tab, CR,
 * LF; blank lines are spaces); undefined when it holds nothing else. The one decision of every
 * reader: `readExamples`, the line limit of the reading (`exampleLineLimit`), and the examples of
 * a saved index (`parseExamplesText`, `parseExamplesBytesSliced`).
 */
export function isExamplesArray(text: string | Uint8Array): boolean | undefined {
  const code =
    typeof text === 'string' ? (at: number) => text.charCodeAt(at) : (at: number) => text[at]
  let at = 0
  if (typeof text === 'string') {
    if (code(0) === 0xfeff) at = 1
  } else if (code(0) === 0xef && code(1) === 0xbb && code(2) === 0xbf) at = 3
  for (; at < text.length; at += 1) {
    const next = code(at)
    if (next !== 0x20 && next !== 0x0a && next !== 0x0d && next !== 0x09) return next === 0x5b
  }
  return undefined
}

/**
 * The longest line of an examples file (`readLinesUpTo`'s `maxLineBytes`, given its lines until
 * one is not blank): MAX_EXAMPLES_ARRAY_BYTES when the file is a JSON array (`isExamplesArray`),
 * else MAX_EXAMPLE_LINE_BYTES; undefined for a blank line.
 */
export function exampleLineLimit(line: Buffer): number | undefined {
  const array = isExamplesArray(line)
  return array === undefined ? undefined : array ? MAX_EXAMPLES_ARRAY_BYTES : MAX_EXAMPLE_LINE_BYTES
}

/** Why a line of `exampleLineLimit` was refused, for the file's error. */
export function longExampleLineProblem(limit: number): string {
  return limit >= MAX_EXAMPLES_ARRAY_BYTES
    ? `a JSON array of examples is read whole, at most ${MAX_EXAMPLES_ARRAY_BYTES} bytes; write JSON Lines (one example a line), which are read a line at a time`
    : `more than one usage example takes (an instruction of at most ${MAX_EXAMPLE_INSTRUCTION_CHARS} characters and ${MAX_EXAMPLE_TOOLS} tool ids); nothing past it was read`
}

/**
 * The examples of a file's lines (`readDataLines`' batches), handed on a batch at a time as the
 * lines are read, so that a reader that stops (a count cap) or keeps few (the newest) holds few: the records, checks and
 * errors of `parseExamplesText`, each with its place for messages about its content
 * (`assertKnownTools`). With `withIds` (a training examples file, `toolsel train --examples`,
 * `train-data --examples`), a record may also carry an `id` (a string or a number). A JSON array (`isExamplesArray`)
 * is gathered and parsed whole, up to MAX_EXAMPLES_ARRAY_BYTES (counted as the lines' UTF-16
 * characters here, at most their bytes; the reader refuses a longer single line).
 */
export async function* readExamples(
  batches: AsyncIterable<readonly string[]>,
  source: string,
  options: { withIds?: boolean } = {},
): AsyncGenerator<PlacedExample[], void, void> {
  let number = 0
  let array: string[] | undefined
  let jsonLines = false
  let arrayChars = 0
  const placed = (record: unknown, where: string): PlacedExample =>
    placedExample(record, source, where, options.withIds)
  for await (const lines of batches) {
    const examples: PlacedExample[] = []
    for (const line of lines) {
      number += 1
      if (array === undefined) {
        if (jsonLines) {
          if (line.trim().length === 0) continue
        } else {
          const isArray = isExamplesArray(line)
          if (isArray === undefined) continue
          jsonLines = !isArray
        }
        if (jsonLines) {
          examples.push(placed(parseJson(line, `${source} line ${number}`), `line ${number}`))
          continue
        }
        array = []
      }
      arrayChars += line.length + 1
      if (arrayChars > MAX_EXAMPLES_ARRAY_BYTES) {
        throw badExamples(source, longExampleLineProblem(MAX_EXAMPLES_ARRAY_BYTES))
      }
      array.push(line)
    }
    if (examples.length > 0) yield examples
  }
  if (array === undefined) return
  const parsed = parseJson(array.join('\n').trim(), source)
  array = undefined
  if (!Array.isArray(parsed)) throw badExamples(source, 'expected a JSON array of examples')
  yield parsed.map((record, index) => placed(record, `item ${index + 1}`))
}

/** A training example's record: a usage example that may carry its own `id`. */
const TrainingExampleSchema = UsageExampleSchema.extend({
  id: z.union([z.string().min(1).max(500), z.number()]).optional(),
}).strict()

/**
 * `parseExamplesText` of a file's UTF-8 bytes (a saved index's `examples.jsonl`), yielding to the
 * event loop every few milliseconds; the same examples and errors as `parseExamplesText` of the
 * bytes decoded (`Buffer#toString`, a byte-order mark dropped). JSON Lines are decoded one line
 * at a time: decoding 6.7 MB of examples (16.8k) into one string was 50-60 ms in one piece.
 */
export function parseExamplesBytesSliced(
  bytes: Uint8Array,
  source: string,
  signal?: AbortSignal,
): Promise<UsageExample[]> {
  return runStepsSliced(
    parseBytesSteps(Buffer.from(bytes.buffer, bytes.byteOffset, bytes.length), source),
    signal,
  )
}

function* parseSteps(withBom: string, source: string): Steps<UsageExample[]> {
  // A file saved by a Windows editor starts with a byte-order mark, which JSON.parse refuses.
  // (Not a regular expression: /^\uFEFF/ on a 6.7 MB string took 40-50 ms.)
  const text = withBom.charCodeAt(0) === 0xfeff ? withBom.slice(1) : withBom
  const isArray = isExamplesArray(text)
  if (isArray === undefined) return []
  if (isArray) {
    const parsed = parseJson(text.trim(), `${source}`)
    if (!Array.isArray(parsed)) throw badExamples(source, 'expected a JSON array of examples')
    return yield* examplesOf(
      // Counted from 1, as lines are: "item 1" is the array's first record.
      parsed.map((record, index) => ({ record, where: `item ${index + 1}` })),
      source,
    )
  }
  return yield* parseLineSteps(text.split('\n'), source)
}

/**
 * `parseSteps` of `bytes` decoded: JSON Lines line by line (a line break is one byte, 0x0A, never
 * inside another character's bytes, so each line decodes alone to what it is in the whole text);
 * anything else (a JSON array, a file starting with a non-ASCII character) decoded whole.
 */
function* parseBytesSteps(bytes: Buffer, source: string): Steps<UsageExample[]> {
  const start = bytes[0] === 0xef && bytes[1] === 0xbb && bytes[2] === 0xbf ? 3 : 0
  const isArray = isExamplesArray(bytes)
  if (isArray === undefined) return []
  if (isArray) return yield* parseSteps(bytes.toString('utf8', start), source)
  function* lines(): Generator<string, void, void> {
    for (let at = start; ;) {
      const end = bytes.indexOf(0x0a, at)
      yield bytes.toString('utf8', at, end < 0 ? bytes.length : end)
      if (end < 0) return
      at = end + 1
    }
  }
  return yield* parseLineSteps(lines(), source)
}

/**
 * Each line parsed, checked and normalised in one step, so that only the example outlives it, not
 * the raw record too (16.8k raw records kept to the end were promoted to the old generation and
 * collected there).
 */
function* parseLineSteps(lines: Iterable<string>, source: string): Steps<UsageExample[]> {
  const examples: UsageExample[] = []
  let index = 0
  for (const line of lines) {
    index += 1
    if (line.trim().length === 0) continue
    const where = `line ${index}`
    examples.push(placedExample(parseJson(line, `${source} ${where}`), source, where).example)
    yield
  }
  return examples
}

function* examplesOf(
  records: ReadonlyArray<{ record: unknown; where: string }>,
  source: string,
): Steps<UsageExample[]> {
  const examples: UsageExample[] = []
  for (const { record, where } of records) {
    examples.push(placedExample(record, source, where).example)
    yield
  }
  return examples
}

/** One record checked and normalised, at its place; `withIds`: a training record, with its `id`. */
function placedExample(
  record: unknown,
  source: string,
  where: string,
  withIds = false,
): PlacedExample {
  const parsed = (withIds ? TrainingExampleSchema : UsageExampleSchema).safeParse(record)
  if (!parsed.success) {
    const issue = parsed.error.issues[0]
    const field = issue.path.length > 0 ? ` field "${issue.path.join('.')}"` : ''
    throw badExamples(`${source} ${where}`, `${field.trim() || 'record'}: ${issue.message}`)
  }
  const example = normalizeExample(parsed.data)
  const { id } = parsed.data as { id?: string | number }
  return withIds && id !== undefined ? { example, where, id: String(id) } : { example, where }
}

function parseJson(text: string, where: string): unknown {
  try {
    return JSON.parse(text)
  } catch (error) {
    throw badExamples(where, `not JSON (${(error as Error).message})`)
  }
}

function badExamples(where: string, problem: string): ToolselError {
  return new ToolselError(
    'INVALID_INPUT',
    `Invalid usage examples at ${where}: ${problem}. Each example is {"instruction": "...", "tools": ["<tool id>", ...]}.`,
    { details: { source: where } },
  )
}
