/**
 * Development loop for the learned dense space (learn/dense-map.ts), on TRAINING data only: the
 * map's transfer to a library it never saw, which is what the benchmark's Gorilla, CRAFT and
 * TaskBench libraries are. Each setting trains a map on one training source (folds 1-4) and
 * reports, after each epoch, the top-1 in the whole library of the OTHER source's held-out fold
 * (transfer) and of its own held-out fold (in library), against the untrained GloVe space.
 *
 *   npx tsx bench/dense-map-dev.ts [--data ../shared/data] [--epochs 4]
 *     [--settings "lr=0.002,decay=0;lr=0.0005,decay=0.01;lr=0.002,decay=0.1,temperature=0.1,batch=64"]
 * @module
 */
import { benchArgs } from './bench-args.ts'
import type { TrainingSource } from '../src/learn/train-model.ts'

const { values } = benchArgs(import.meta.url, {
  options: {
    data: { type: 'string', default: '../shared/data' },
    epochs: { type: 'string', default: '4' },
    settings: { type: 'string', default: 'lr=0.002,decay=0;lr=0.0005,decay=0;lr=0.002,decay=0.05' },
  },
})
// What it measures only once the flags are good: --help and a bad flag answer without it.
const { defaultConfig } = await import('../src/config/schema.ts')
const { denseToolVectors } = await import('../src/learn/dense-encoder.ts')
const { denseTop1, trainDenseMap } = await import('../src/learn/dense-map.ts')
const { denseMapSets } = await import('../src/learn/train-model.ts')
const { singleClauseCases } = await import('../src/learn/training-rows.ts')
const { loadToolLensTrain, loadToolPlannerG3 } = await import('../src/learn/training-data.ts')
const { bm25Settings } = await import('../src/store/kinds/bm25-kind.ts')
const seed = 1
const config = defaultConfig()
const dense = await denseToolVectors()
if (dense === undefined) throw new Error('static word vectors unavailable')
const sources: TrainingSource[] = [
  { ...(await loadToolPlannerG3(values.data)), singleClauses: true },
  { ...(await loadToolLensTrain(values.data)), singleClauses: false },
]
const singles = sources.map((source) =>
  source.singleClauses
    ? singleClauseCases(source.tools, source.cases, {
        bm25: bm25Settings(config),
        k: 15,
        maxSteps: config.plan.maxSteps,
        tau: config.retrieve.bm25.tau,
      })
    : undefined,
)
const { train, held } = denseMapSets(sources, singles, dense, seed)
console.log(
  `untrained top-1: ${held.map((set) => `${set.name} ${denseTop1([set])}`).join(', ')} (held-out fold 0)`,
)
console.log('| setting | trained on | epoch | loss | transfer top-1 | in-library top-1 |')
console.log('| --- | --- | ---: | ---: | ---: | ---: |')
for (const setting of values.settings.split(';')) {
  const parsed = Object.fromEntries(
    setting.split(',').map((pair) => {
      const [key, value] = pair.split('=')
      return [key.trim(), Number(value)]
    }),
  )
  for (let index = 0; index < train.length; index++) {
    const other = held[1 - index]
    trainDenseMap([train[index]], {
      seed,
      epochs: Number(values.epochs),
      learningRate: parsed.lr,
      identityDecay: parsed.decay,
      diagonal: parsed.diagonal === 1,
      ...(parsed.temperature !== undefined && { temperature: parsed.temperature }),
      ...(parsed.batch !== undefined && { batch: parsed.batch }),
      onEpoch: (epoch, loss, map) => {
        const current = map()
        console.log(
          `| ${setting} | ${train[index].name} | ${epoch} | ${loss.toFixed(3)} | ${other.name} ${denseTop1([other], current)} | ${denseTop1([held[index]], current)} |`,
        )
      },
    })
  }
}
