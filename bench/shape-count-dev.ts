/**
 * Held-out variants of the learned count trained with TaskBench's tool-graph shapes (round 16,
 * #10; `toolsel train --taskbench-shapes`), on TRAINING data only: ToolPlanner G3 and ToolLens
 * train as `toolsel train` reads them, plus the TaskBench requests the bench does not evaluate
 * (training-data.ts `loadTaskbenchShapes`). For each variant (TrainOptions merged into the
 * default recipe; `noShapes: true` fits without the TaskBench rows) it prints the data card's
 * held-out exact match per split and, over the TaskBench rows of fold 0, how many one-tool
 * requests keep one tool and how many multi-tool ones keep two or more, by one clause or several.
 *
 *   npx tsx bench/shape-count-dev.ts [--data ../shared/data]
 *     [--variants '{"none":{"noShapes":true},"shapes":{}}'] [--seed 1]
 * @module
 */
import { benchArgs, wholeNumber } from './bench-args.ts'

const { values } = benchArgs(import.meta.url, {
  options: {
    data: { type: 'string', default: '../shared/data' },
    variants: { type: 'string', default: '{"none":{"noShapes":true},"shapes":{}}' },
    seed: { type: 'string', default: '1' },
  },
})
// What it measures only once the flags are good: --help and a bad flag answer without it.
const { decideTools } = await import('../src/learn/count-model.ts')
const { decisionInput, fitTrainingSets, foldOf, score, shapeMatch, trainingSets } =
  await import('../src/learn/train-model.ts')
const { trainingDevSetup } = await import('./training-dev-setup.ts')
const dataDir = values.data!
const seed = wholeNumber(import.meta.url, '--seed', values.seed, 0)
const { sources, base } = await trainingDevSetup(dataDir, seed)
let started = performance.now()
const all = trainingSets(sources, base)
console.log(`training rows built in ${((performance.now() - started) / 1000).toFixed(0)} s`)
const shapeSets = all.sets.filter((set) => set.countOnly)
for (const [name, variant] of Object.entries(
  JSON.parse(values.variants!) as Record<string, { noShapes?: boolean }>,
)) {
  started = performance.now()
  const sets = variant.noShapes ? { ...all, sets: all.sets.filter((set) => !set.countOnly) } : all
  const model = fitTrainingSets(sets, { ...base, ...variant })
  const seconds = ((performance.now() - started) / 1000).toFixed(0)
  console.log(
    `== ${name} (${seconds} s): rule ${JSON.stringify(model.rule)}, count ${model.count?.threshold ?? '-'} / ${model.count?.extendThreshold ?? '-'}`,
  )
  const heldOut = model.dataCard.heldOut.splits
  console.log(
    `  held-out: ${heldOut.map((split) => `${split.name} ${split.exactMatch}`).join(' | ')}`,
  )
  for (const set of shapeSets) {
    const right: Record<string, [number, number]> = {}
    for (const query of set.queries.filter((query) => foldOf(query.id, seed) === 0)) {
      const input = decisionInput(query, score({ model: model.model }, query))
      const kept = decideTools(input, model.rule, model.count).filter((id) => id !== null)
      const key = `${query.shape}, ${query.steps >= 2 ? 'several clauses' : 'one clause'}`
      right[key] ??= [0, 0]
      right[key][0] += shapeMatch(kept, query.shape!)
      right[key][1] += 1
    }
    const counts = Object.entries(right).sort()
    console.log(`  ${set.name}: ${counts.map(([key, [ok, n]]) => `${key} ${ok}/${n}`).join(', ')}`)
  }
}
