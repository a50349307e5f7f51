/**
 * CPU of the example-aware decision per call (examples/example-decision.ts `decideWithExamples`:
 * its rows, the per-tool model, the candidate sets and the set model), two model files side by
 * side on the same inputs: the decision's training inputs of seed 1 (train-example-decision.ts
 * heldSets: training queries only, answered with the other training queries as usage
 * examples). Interleaved rounds; prints the median µs per call of each and their ratio, and
 * whether the two answer alike.
 *
 *   npx tsx bench/decision-cost.ts --before <model.json> --after <model.json> [--rounds 7]
 *     [--data ../shared/data]
 * @module
 */
import { benchArgs, usageError } from './bench-args.ts'
import { median } from './lib/measure.ts'

const { values } = benchArgs(import.meta.url, {
  options: {
    data: { type: 'string', default: '../shared/data' },
    before: { type: 'string' },
    after: { type: 'string' },
    rounds: { type: 'string', default: '7' },
  },
})
// What it measures only once the flags are good: --help and a bad flag answer without it.
const { parseConfig } = await import('../src/config/load-config.ts')
const { decideWithExamples } = await import('../src/examples/example-decision.ts')
const { heldSets } = await import('../src/examples/train-example-decision.ts')
const { readLearnedModel } = await import('../src/learn/learned-model.ts')
const { loadToolLensTrain, loadToolPlannerG3 } = await import('../src/learn/training-data.ts')
if (!values.before || !values.after)
  usageError(import.meta.url, '--before and --after name model files.')
const before = await readLearnedModel(values.before)
const after = await readLearnedModel(values.after)
if (!before.examples || !after.examples) throw new Error('Both models need an examples part.')
const config = parseConfig({ bench: { dataDir: values.data } })
const sources = [
  { ...(await loadToolPlannerG3(values.data!)), singleClauses: true },
  { ...(await loadToolLensTrain(values.data!)), singleClauses: false },
]
const sets = await heldSets(sources, { ...before, examples: undefined }, { config, seed: 1, k: 15 })
const inputs = sets.flatMap((set) => set.queries.flatMap((query) => query.input ?? []))
const models = { before: before.examples, after: after.examples }
const times: Record<string, number[]> = { before: [], after: [] }
let same = 0
inputs.forEach((input) => {
  const a = decideWithExamples(models.before, input).sort().join()
  const b = decideWithExamples(models.after, input).sort().join()
  if (a === b) same += 1
})
for (let round = 0; round < Number(values.rounds); round += 1) {
  for (const name of round % 2 === 0 ? ['before', 'after'] : ['after', 'before']) {
    const model = models[name as keyof typeof models]
    const started = process.cpuUsage()
    for (const input of inputs) decideWithExamples(model, input)
    const used = process.cpuUsage(started)
    times[name].push((used.user + used.system) / inputs.length)
  }
}
console.log(
  `${inputs.length} decisions, ${values.rounds} rounds: before ${median(times.before).toFixed(1)} µs, after ${median(times.after).toFixed(1)} µs per call (ratio ${(median(times.after) / median(times.before)).toFixed(3)}); same answer ${same} of ${inputs.length}`,
)
