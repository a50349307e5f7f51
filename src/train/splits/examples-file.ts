/**
 * A user's own training examples (`toolsel train --examples`, `toolsel train-data --examples`):
 * JSON Lines (or a JSON array) of `{instruction, tools: [ids], id?}` over a tool library (its
 * tools, read by the caller from the `--library` reference). Read by the usage examples' own
 * reader (examples/usage-example.ts: the same record checks, limits and normalisation as `toolsel
 * index --examples` and `POST /v1/libraries/:library/examples`), with their rule for tool ids the
 * library lacks: the file is refused, naming every such id with its lines. Nothing is excluded
 * otherwise (the user owns the split).
 * @module
 */
import { readDataLines } from '../../bench/suites/read-data-file.ts'
import { ToolselError } from '../../errors.ts'
import { assertKnownTools, readExamples, type UsageExample } from '../../examples/usage-example.ts'
import type { Tool } from '../../library/tool.ts'
import { ToolLibrary } from '../../library/tool-library.ts'
import type { TrainExample, TrainSplit } from '../train-split.ts'
import { MAX_TRAIN_EXAMPLES, MAX_TRAIN_EXAMPLES_LIMIT } from './example-limits.ts'

export { MAX_TRAIN_EXAMPLES, MAX_TRAIN_EXAMPLES_LIMIT } from './example-limits.ts'

/**
 * The examples of `file` over `library`; an example's id is its record's `id`, else the number of
 * its place as messages name it: its line (as an editor numbers them, blank lines counted), or
 * its item in a JSON array, from 1. INVALID_INPUT naming the place of a bad record, or every
 * unknown tool id's lines.
 */
export async function loadExamplesFile(
  file: string,
  library: { reference: string; tools: readonly Tool[] },
  options: { maxExamples?: number } = {},
): Promise<TrainSplit> {
  return examplesOverLibrary(await readExamplesFile(file, options), library)
}

/** An examples file's records as read, before they are checked against a library. */
export interface ExamplesFileRecords {
  file: string
  read: UsageExample[]
  /** Each record's place (`line 7`, `item 3`). */
  places: string[]
  /** Each record's `id`, when it has one. */
  ids: Array<string | undefined>
}

/**
 * Reads `file` once (a pipe can be read only once: `bench --examples file:<(…)` over a suite of
 * several splits checks the records against each split's library, `examplesOverLibrary`).
 * INVALID_INPUT naming the place of a bad record, past `maxExamples`, or for a file of none.
 */
export async function readExamplesFile(
  file: string,
  { maxExamples = MAX_TRAIN_EXAMPLES }: { maxExamples?: number } = {},
): Promise<ExamplesFileRecords> {
  const read: UsageExample[] = []
  const places: string[] = []
  const ids: Array<string | undefined> = []
  for await (const batch of readExamples(readDataLines(file, 'Examples file'), file, {
    withIds: true,
  })) {
    for (const { example, where, id } of batch) {
      if (read.length === maxExamples) {
        throw new ToolselError(
          'INVALID_INPUT',
          `Examples file "${file}" holds more than ${maxExamples} examples (at ${where}); at most ${maxExamples} are accepted (--max-examples <n> raises it, up to ${MAX_TRAIN_EXAMPLES_LIMIT}). Nothing past that was read.`,
          { details: { file, maxExamples } },
        )
      }
      read.push(example)
      places.push(where)
      ids.push(id)
    }
  }
  if (read.length === 0) {
    throw new ToolselError(
      'INVALID_INPUT',
      `Examples file "${file}" holds no examples; expected JSON Lines of {"instruction": "…", "tools": ["<tool id>", …]}.`,
      { details: { file } },
    )
  }
  return { file, read, places, ids }
}

/**
 * The records of an examples file over `library`: INVALID_INPUT naming every tool id the library
 * lacks with its lines.
 */
export function examplesOverLibrary(
  records: ExamplesFileRecords,
  library: { reference: string; tools: readonly Tool[] },
): TrainSplit {
  const { file, read, ids } = records
  const { reference: libraryFile } = library
  const tools = [...library.tools]
  const from = { source: file, places: records.places }
  const known = new ToolLibrary('library', tools)
  assertKnownTools(
    libraryFile,
    read,
    (id) => known.has(id),
    from,
    (unknown) => known.unknownIdsHint(unknown),
  )
  const examples: TrainExample[] = read.map((example, position) => ({
    // `line 7` -> "7": the record `"id": "7#2"` came from is the line a message would name.
    id: ids[position] ?? from.places[position].slice(from.places[position].indexOf(' ') + 1),
    instruction: example.instruction,
    gold: [...example.tools],
  }))
  return {
    name: `examples:${file}`,
    files: [file, libraryFile],
    tools,
    examples,
    records: read.length,
    exclusions: { testFiles: [], byId: 0, byText: 0, unmappable: 0, empty: 0 },
    notes: ['a user examples file: gold = its tools; nothing excluded'],
  }
}
