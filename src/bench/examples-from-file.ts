/**
 * `toolsel bench --examples file:<path>`: the user's own training split as every split's usage
 * examples (JSON Lines or a JSON array of `{instruction, tools, id?}`, the files of `toolsel
 * train --examples` and `toolsel index --examples`), in place of a suite's training split or the
 * 5-fold protocol. Its tool ids must be the split library's (a file naming others is refused,
 * naming the ids and lines). An evaluated query is never its own example: an example whose
 * instruction equals one of the split's queries (ignoring case and whitespace) is dropped, and
 * the split's notes (summary.md) and the command's output say how many.
 * @module
 */
import { examplesOverLibrary, type ExamplesFileRecords } from '../train/splits/examples-file.ts'
import { normalizeQueryText } from '../train/train-split.ts'
import type { UsageExample } from '../examples/usage-example.ts'
import type { BenchSplit } from './suites/bench-suite.ts'

/** `--examples file:<path>`: the prefix that names a user's examples file. */
export const EXAMPLES_FILE_PREFIX = 'file:'

/**
 * `split.training` from an examples file's records (`readExamplesFile`: read once for every
 * split, a pipe can be read only once) over the split's library, without the examples whose
 * instruction is one of the split's queries. Returns how many were dropped.
 */
export function trainingFromFile(
  split: BenchSplit,
  records: ExamplesFileRecords,
): { training: NonNullable<BenchSplit['training']>; dropped: number } {
  const { file } = records
  const loaded = examplesOverLibrary(records, {
    reference: `the library of ${split.name}`,
    tools: split.tools,
  })
  const queries = new Set(split.cases.map((benchCase) => normalizeQueryText(benchCase.instruction)))
  const examples: UsageExample[] = loaded.examples
    .filter((example) => !queries.has(normalizeQueryText(example.instruction)))
    .map((example) => ({ instruction: example.instruction, tools: example.gold }))
  const dropped = loaded.examples.length - examples.length
  const notes = [
    `usage examples: ${examples.length} of ${file}` +
      (dropped > 0
        ? `; ${dropped} dropped, each the instruction of an evaluated query (a query is never its own example)`
        : ''),
  ]
  return { training: { examples, source: `${EXAMPLES_FILE_PREFIX}${file}`, notes }, dropped }
}
