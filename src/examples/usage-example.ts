/**
 * A usage example: an instruction someone gave and the tools that really served it. A library may
 * carry examples; they expand each tool's BM25 document with the words people use to ask for it
 * and feed the nearest-example memory.
 * @module
 */
import { z } from 'zod'
import { ToolselError } from '../errors.ts'
import { runSteps, runStepsSliced, type Steps } from '../time-slicer.ts'

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
      .array(z.string().min(1).max(500))
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
 * Throws INVALID_INPUT naming every tool id that `has` does not know (at most 20 in the message,
 * all in `details.ids`).
 */
export function assertKnownTools(
  libraryName: string,
  examples: readonly UsageExample[],
  has: (id: string) => boolean,
): void {
  runSteps(knownToolSteps(libraryName, examples, has))
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
): Promise<void> {
  return runStepsSliced(knownToolSteps(libraryName, examples, has), signal)
}

function* knownToolSteps(
  libraryName: string,
  examples: readonly UsageExample[],
  has: (id: string) => boolean,
): Steps<void> {
  const unknown = new Set<string>()
  for (const example of examples) {
    for (const id of example.tools) if (!has(id)) unknown.add(id)
    yield
  }
  if (unknown.size === 0) return
  const ids = [...unknown]
  const shown = ids
    .slice(0, 20)
    .map((id) => `"${id}"`)
    .join(', ')
  const more = ids.length > 20 ? ` and ${ids.length - 20} more` : ''
  throw new ToolselError(
    'INVALID_INPUT',
    `Usage examples name tools that library "${libraryName}" does not have: ${shown}${more}. Use the ids of GET /v1/libraries/${libraryName}/tools/<id> (or search-tools).`,
    { details: { library: libraryName, ids } },
  )
}

/**
 * Parses JSON Lines (`{"instruction": …, "tools": [...]}` per line) or a JSON array of the same
 * objects. Throws INVALID_INPUT naming the line and field of the first bad record.
 */
export function parseExamplesText(text: string, source: string): UsageExample[] {
  return runSteps(parseSteps(text, source))
}

/** `parseExamplesText`, yielding to the event loop every few milliseconds; the same examples. */
export function parseExamplesTextSliced(
  text: string,
  source: string,
  signal?: AbortSignal,
): Promise<UsageExample[]> {
  return runStepsSliced(parseSteps(text, source), signal)
}

function* parseSteps(withBom: string, source: string): Steps<UsageExample[]> {
  // A file saved by a Windows editor starts with a byte-order mark, which JSON.parse refuses.
  const text = withBom.replace(/^\uFEFF/, '')
  const trimmed = text.trim()
  if (trimmed.length === 0) return []
  const records: Array<{ record: unknown; where: string }> = []
  if (trimmed.startsWith('[')) {
    const parsed = parseJson(trimmed, `${source}`)
    if (!Array.isArray(parsed)) throw badExamples(source, 'expected a JSON array of examples')
    parsed.forEach((record, index) => records.push({ record, where: `item ${index}` }))
  } else {
    const lines = text.split('\n')
    for (const [index, line] of lines.entries()) {
      if (line.trim().length === 0) continue
      records.push({
        record: parseJson(line, `${source} line ${index + 1}`),
        where: `line ${index + 1}`,
      })
      yield
    }
  }
  const examples: UsageExample[] = []
  for (const { record, where } of records) {
    const parsed = UsageExampleSchema.safeParse(record)
    if (!parsed.success) {
      const issue = parsed.error.issues[0]
      const field = issue.path.length > 0 ? ` field "${issue.path.join('.')}"` : ''
      throw badExamples(`${source} ${where}`, `${field.trim() || 'record'}: ${issue.message}`)
    }
    examples.push(normalizeExample(parsed.data))
    yield
  }
  return examples
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
