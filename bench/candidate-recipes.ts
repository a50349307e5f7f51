/**
 * Compares recipes for the learned selector's candidate model on TRAINING data only: the rows
 * `toolsel train` builds (ToolPlanner G3 minus every G3 test query, its single-clause and
 * composed sets, ToolLens train) are built once, then each recipe is fitted on folds 1-4 and
 * scored on the held-out fold 0, as the data card reports it. A recipe may change the L2
 * penalty, add the listwise (conditional-logit) term, keep the shipped decision rule and count
 * thresholds fixed (so that only the candidate model moves), or zero some features (ablation).
 * With `--save <prefix>` each recipe's model is written to `<prefix>-<n>.json`, to be run on the
 * benchmark with `--selector learned:<file>` (no `examples` field: the no-examples setting).
 *
 *   npx tsx bench/candidate-recipes.ts [--data ../shared/data] [--k 15] [--save /tmp/recipe] \
 *     [--bm25 '{"fieldWeights":{"name":2}}'] \
 *     '[{}, {"listwise": 1}, {"l2": 100, "fixed": true}, {"drop": ["whole_gap"]}]'
 * @module
 */
import { writeFile } from 'node:fs/promises'
import { benchArgs } from './bench-args.ts'
import type { TrainOptions } from '../src/learn/train-model.ts'

interface Recipe {
  l2?: number
  listwise?: number
  /** Keep the shipped model's decision rule and count thresholds. */
  fixed?: boolean
  /** Features set to 0 in every row (their weight is then 0). */
  drop?: string[]
}

const { values, positionals } = benchArgs(import.meta.url, {
  options: {
    data: { type: 'string', default: '../shared/data' },
    k: { type: 'string', default: '15' },
    save: { type: 'string' },
    /** BM25 settings over the config's, e.g. '{"fieldWeights":{"name":2}}' (the rows then change). */
    bm25: { type: 'string', default: '{}' },
  },
  allowPositionals: true,
})
// What it measures only once the flags are good: --help and a bad flag answer without it.
const { loadConfig } = await import('../src/config/load-config.ts')
const { FEATURE_NAMES } = await import('../src/learn/candidate-features.ts')
const { formatLearnedModel, loadDefaultModel } = await import('../src/learn/learned-model.ts')
const { fitTrainingSets, trainingSets } = await import('../src/learn/train-model.ts')
const { loadToolLensTrain, loadToolPlannerG3 } = await import('../src/learn/training-data.ts')
const { bm25Settings } = await import('../src/store/kinds/bm25-kind.ts')
const recipes = JSON.parse(positionals[0] ?? '[{}]') as Recipe[]
for (const name of recipes.flatMap((recipe) => recipe.drop ?? [])) {
  if (!(FEATURE_NAMES as readonly string[]).includes(name)) {
    throw new Error(`Unknown feature "${name}" in "drop" (features: ${FEATURE_NAMES.join(', ')})`)
  }
}
const config = await loadConfig({})
const started = performance.now()
const sources = [
  { ...(await loadToolPlannerG3(values.data)), singleClauses: true },
  { ...(await loadToolLensTrain(values.data)), singleClauses: false },
]
const settings = bm25Settings(config)
const override = JSON.parse(values.bm25) as Partial<typeof settings>
const base: TrainOptions = {
  bm25: {
    ...settings,
    ...override,
    fieldWeights: { ...settings.fieldWeights, ...override.fieldWeights },
  },
  seed: 1,
  k: Number(values.k),
  maxSteps: config.plan.maxSteps,
  tau: config.retrieve.bm25.tau,
}
const sets = trainingSets(sources, base)
console.log(`rows built in ${((performance.now() - started) / 1000).toFixed(1)} s`)
const shipped = loadDefaultModel()

console.log('| recipe | rule | count | held-out EM % per set | mean |')
console.log('| --- | --- | --- | --- | ---: |')
for (const [index, recipe] of recipes.entries()) {
  const drop = (recipe.drop ?? []).map((name) => (FEATURE_NAMES as readonly string[]).indexOf(name))
  const used =
    drop.length === 0
      ? sets
      : {
          notes: sets.notes,
          sets: sets.sets.map((set) => ({
            name: set.name,
            queries: set.queries.map((query) => ({
              ...query,
              x: query.x.map((row) => row.map((value, at) => (drop.includes(at) ? 0 : value))),
            })),
          })),
        }
  const model = fitTrainingSets(used, {
    ...base,
    ...(recipe.l2 !== undefined && { l2: recipe.l2 }),
    ...(recipe.listwise !== undefined && { listwise: recipe.listwise }),
    ...(recipe.fixed && {
      fixedRule: shipped.rule,
      ...(shipped.count && {
        fixedCount: {
          threshold: shipped.count.threshold,
          ...(shipped.count.extendThreshold !== undefined && {
            extendThreshold: shipped.count.extendThreshold,
          }),
        },
      }),
    }),
  })
  const splits = model.dataCard.heldOut.splits
  const mean = splits.reduce((sum, split) => sum + split.exactMatch, 0) / splits.length
  console.log(
    `| ${JSON.stringify(recipe)} | ${JSON.stringify(model.rule)} | ${model.count?.threshold ?? '-'}/${model.count?.extendThreshold ?? '-'} | ${splits.map((split) => `${split.name} ${split.exactMatch}`).join(', ')} | ${mean.toFixed(2)} |`,
  )
  if (values.save) {
    await writeFile(`${values.save}-${index}.json`, formatLearnedModel(model))
  }
}
