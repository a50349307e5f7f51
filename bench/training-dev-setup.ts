/**
 * What the held-out scripts on TRAINING data share (bench/shape-count-dev.ts,
 * bench/one-clause-dev.ts): `toolsel train`'s sources (ToolPlanner G3 and ToolLens train, plus
 * TaskBench's count-only shape requests unless `shapes: false`) and its recipe's base options;
 * and the shipped recipe fitted on folds 1-4 (`shippedRecipeFit`: bench/selection-errors-dev.ts,
 * bench/word-order-dev.ts, bench/bagged-dev.ts).
 * @module
 */
import { parseConfig } from '../src/config/load-config.ts'
import { denseToolVectors } from '../src/learn/dense-encoder.ts'
import {
  fitTrainingSets,
  taskbenchShapeSources,
  trainingSets,
  type TrainingSource,
} from '../src/learn/train-model.ts'
import { loadToolLensTrain, loadToolPlannerG3 } from '../src/learn/training-data.ts'
import { bm25Settings } from '../src/store/kinds/bm25-kind.ts'

export async function trainingDevSetup(dataDir: string, seed: number, { shapes = true } = {}) {
  const config = parseConfig({ bench: { dataDir } })
  const sources: TrainingSource[] = [
    { ...(await loadToolPlannerG3(dataDir)), singleClauses: true },
    { ...(await loadToolLensTrain(dataDir)), singleClauses: false },
  ]
  if (shapes) sources.push(...(await taskbenchShapeSources(dataDir)))
  const base = {
    bm25: bm25Settings(config),
    seed,
    k: 15,
    maxSteps: config.plan.maxSteps,
    tau: config.retrieve.bm25.tau,
  }
  return { sources, base }
}

/**
 * The shipped recipe (`toolsel train --learned-dense --dense-free-acceptance`, no TaskBench
 * shapes) on the training sources: every set's rows, and the model fitted on folds 1-4 of `seed`
 * (its decision rule and count chosen on fold 0, as `toolsel train` does). Prints both timings.
 */
export async function shippedRecipeFit(dataDir: string, seed: number) {
  const { sources, base } = await trainingDevSetup(dataDir, seed, { shapes: false })
  const dense = await denseToolVectors()
  if (dense === undefined) throw new Error('No static word vectors (npm ci).')
  const options = { ...base, dense, learnDense: {}, acceptance: true }
  let started = performance.now()
  const rows = trainingSets(sources, options)
  console.log(`rows built in ${((performance.now() - started) / 1000).toFixed(0)} s`)
  started = performance.now()
  const model = fitTrainingSets(rows, options)
  console.log(
    `fitted in ${((performance.now() - started) / 1000).toFixed(0)} s: rule ${JSON.stringify(model.rule)}, count ${model.count?.threshold} / ${model.count?.extendThreshold}`,
  )
  return { sources, base, rows, model }
}
