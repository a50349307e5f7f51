/**
 * Development sweep for boosted trees inside the example-aware decision (round 16, #10), on
 * TRAINING data only: the decision's training data (train-example-decision.ts heldSets: each
 * source's fold-0 queries of seed 1, which the shipped selector model held out, answered with
 * the other training queries as usage examples) is built once per seed, then the decision is
 * fitted per variant on one half of those queries and scored on the other (`fitDecision`'s
 * halves). Seed 1 uses the shipped selector model (trained with seed 1's fold 0 held out); any
 * other seed trains its own selector model first (as `toolsel train --seed N` would, minus the
 * decision), so that its fold 0 is held out from the selector too. (The halves' parity of the
 * fold hash is the same partition for every seed, so a second seed needs its own fold 0.)
 * Prints held-out exact match per set and variant.
 *
 *   npx tsx bench/decision-trees-dev.ts [--data ../shared/data] [--seeds 1,2]
 *     [--variants '{"name":{"tool":{"trees":100,"depth":4,"learningRate":0.1}}}']
 * @module
 */
import { benchArgs } from './bench-args.ts'
import type { DecisionTreeSettings } from '../src/examples/train-example-decision.ts'

const { values } = benchArgs(import.meta.url, {
  options: {
    data: { type: 'string', default: '../shared/data' },
    seeds: { type: 'string', default: '1,2' },
    variants: { type: 'string' },
  },
})
// What it measures only once the flags are good: --help and a bad flag answer without it.
const { parseConfig } = await import('../src/config/load-config.ts')
const { fitDecision, heldSets } = await import('../src/examples/train-example-decision.ts')
const { loadDefaultModel } = await import('../src/learn/learned-model.ts')
const { trainLearnedModel } = await import('../src/learn/train-model.ts')
const { bm25Settings } = await import('../src/store/kinds/bm25-kind.ts')
const { loadToolLensTrain, loadToolPlannerG3 } = await import('../src/learn/training-data.ts')
const variants: Record<string, DecisionTreeSettings> = {
  logistic: {},
  ...(values.variants
    ? JSON.parse(values.variants)
    : {
        tool: { tool: { trees: 100, depth: 4, learningRate: 0.1 } },
        set: { set: { trees: 100, depth: 4, learningRate: 0.1 } },
        both: {
          tool: { trees: 100, depth: 4, learningRate: 0.1 },
          set: { trees: 100, depth: 4, learningRate: 0.1 },
        },
      }),
}
const config = parseConfig({ bench: { dataDir: values.data } })
const sources = [
  { ...(await loadToolPlannerG3(values.data!)), singleClauses: true },
  { ...(await loadToolLensTrain(values.data!)), singleClauses: false },
]
for (const seed of values.seeds!.split(',').map(Number)) {
  let started = performance.now()
  const model =
    seed === 1
      ? loadDefaultModel()
      : trainLearnedModel(sources, {
          bm25: bm25Settings(config),
          seed,
          k: 15,
          maxSteps: config.plan.maxSteps,
          tau: config.retrieve.bm25.tau,
        })
  const sets = await heldSets(sources, model, { config, seed, k: 15 })
  console.log(
    `seed ${seed}: held sets built in ${((performance.now() - started) / 1000).toFixed(0)} s`,
  )
  for (const [name, settings] of Object.entries(variants)) {
    started = performance.now()
    const { heldOut, minExamples } = fitDecision(sets, seed, settings)
    const seconds = ((performance.now() - started) / 1000).toFixed(0)
    const cells = heldOut.map((split) => `${split.name} ${split.decision}`).join(' | ')
    const mean = heldOut.reduce((sum, split) => sum + split.decision, 0) / heldOut.length
    console.log(
      `seed ${seed} ${name} (${seconds} s): mean ${mean.toFixed(2)} min ${minExamples} | ${cells}`,
    )
  }
}
