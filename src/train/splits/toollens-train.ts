/**
 * The ToolLens training split: COLT's `qrels/train.tsv` over its 464-API corpus (data README
 * section 2), minus every query of the `toollens` benchmark suite (`qrels/test.tsv`) by id and by
 * text: ToolLens queries are template-like, so the same text can occur in both.
 * @module
 */
import { createBeirSuite } from '../../bench/suites/beir-suite.ts'
import { ToolselError } from '../../errors.ts'
import { excludeTestQueries, type TrainSplit } from '../train-split.ts'
import { loadSuiteQueries } from './toolbench-g3-train.ts'

export async function loadToollensTrain(dataDir: string): Promise<TrainSplit> {
  const suite = createBeirSuite({
    name: 'toollens',
    description: 'ToolLens train',
    dir: 'toollens/COLT/datasets/ToolLens',
    split: 'train',
  })
  const { splits, skipped } = await suite.load({
    dataDir,
    libraryMode: 'union',
    unmappable: 'drop',
  })
  if (splits.length === 0) {
    throw new ToolselError(
      'INVALID_INPUT',
      `Cannot load the ToolLens training split: ${skipped.map((item) => item.reason).join('; ')}.`,
    )
  }
  const [train] = splits
  const test = await loadSuiteQueries('toollens', dataDir)
  const examples = train.cases.map(({ id, instruction, gold }) => ({ id, instruction, gold }))
  const { kept, byId, byText } = excludeTestQueries(examples, test.queries)
  return {
    name: 'toollens/train',
    files: train.files,
    tools: train.tools,
    examples: kept,
    records: train.stats.records,
    exclusions: {
      testFiles: test.files,
      byId,
      byText,
      unmappable: train.stats.queriesWithUnmappedGold,
      empty: train.stats.droppedQueries - train.stats.queriesWithUnmappedGold,
    },
    notes: ['gold = qrels/train.tsv corpus ids, mapped to tools as the toollens suite maps them'],
  }
}
