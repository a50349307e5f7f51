/**
 * The suites with a training split `toolsel train-data --suite` can read. Other suites have no
 * training queries under shared/data (Gorilla's only split is what the benchmark evaluates on;
 * CRAFT and TaskBench have one split; COLT's G3 split has no query text).
 * @module
 */
import { ToolselError } from '../../errors.ts'
import type { TrainSplit } from '../train-split.ts'
import type { TrainSplitName } from './split-names.ts'
import { loadToolbenchG3Train } from './toolbench-g3-train.ts'
import { loadToollensTrain } from './toollens-train.ts'

export { loadExamplesFile } from './examples-file.ts'
export { loadToolbenchG3Train, loadSuiteQueries } from './toolbench-g3-train.ts'
export { loadToollensTrain } from './toollens-train.ts'

export const TRAIN_SPLITS: Readonly<Record<string, (dataDir: string) => Promise<TrainSplit>>> =
  Object.freeze({
    'toolbench-g3': loadToolbenchG3Train,
    toollens: loadToollensTrain,
  } satisfies Record<TrainSplitName, (dataDir: string) => Promise<TrainSplit>>)

export function loadTrainSplit(suite: string, dataDir: string): Promise<TrainSplit> {
  const load = Object.hasOwn(TRAIN_SPLITS, suite) ? TRAIN_SPLITS[suite] : undefined
  if (!load) {
    throw new ToolselError(
      'INVALID_INPUT',
      `Suite "${suite}" has no training split here (available: ${Object.keys(TRAIN_SPLITS).join(', ')}); use --examples <file> --library <file> for your own data.`,
      { details: { suite } },
    )
  }
  return load(dataDir)
}
