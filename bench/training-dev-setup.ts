/**
 * What the held-out scripts on TRAINING data share (bench/shape-count-dev.ts,
 * bench/one-clause-dev.ts): `toolsel train`'s sources (ToolPlanner G3 and ToolLens train, plus
 * TaskBench's count-only shape requests unless `shapes: false`) and its recipe's base options.
 * @module
 */
import { parseConfig } from '../src/config/load-config.ts'
import { taskbenchShapeSources, type TrainingSource } from '../src/learn/train-model.ts'
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
