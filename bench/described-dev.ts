/**
 * Self-supervised training requests made from each training library's own tool descriptions
 * (#10, round 38), on TRAINING data only: every gold-labelled source also gets a `-described` set,
 * each tool's description's first clause as a single-need request whose gold is that tool
 * (`--from name`: its name's words instead; learn/training-rows.ts `describedCases`: at most `--per-source`, none in the held-out fold,
 * clauses shared by two tools left out), so that the candidate model learns how a request that
 * restates a tool's description matches it, in any library. The shipped recipe (as
 * bench/training-dev-setup.ts fits it) is fitted on folds 1-4 of `--seed` without those sets, then
 * with them at each `--weight` (a set's share of the candidate fit, 1 = a source set's); the rule
 * and count are chosen on fold 0 as `toolsel train` does. Prints how often BM25 over the whole
 * request already ranks its tool first, and the held-out exact match per set of each fit.
 * No test query is read.
 *
 *   npx tsx bench/described-dev.ts [--data ../shared/data] [--seed 1] [--per-source 3000] [--weight 0.5,1]
 *     [--from description|name] [--skip-base]
 * @module
 */
import { benchArgs, wholeNumber } from './bench-args.ts'

const { values } = benchArgs(import.meta.url, {
  options: {
    data: { type: 'string', default: '../shared/data' },
    seed: { type: 'string', default: '1' },
    'per-source': { type: 'string', default: '3000' },
    weight: { type: 'string', default: '0.5,1' },
    from: { type: 'string', default: 'description' },
    'skip-base': { type: 'boolean', default: false },
  },
})
// What it measures only once the flags are good: --help and a bad flag answer without it.
const { fitTrainingSets } = await import('../src/learn/train-model.ts')
const { reportFit, shippedRecipeRows } = await import('./training-dev-setup.ts')
const weights = values.weight!.split(',').map(Number)
const { options, rows } = await shippedRecipeRows(
  values.data!,
  wholeNumber(import.meta.url, '--seed', values.seed, 0),
  {
    described: {
      perSource: Number(values['per-source']),
      weight: weights[0],
      from: values.from === 'name' ? 'name' : 'description',
    },
  },
)
for (const note of rows.notes.filter((line) => line.includes('-described'))) console.log(note)
// How often BM25 over the whole request already ranks the request's tool first, and in the list.
for (const set of rows.sets.filter((set) => set.name.endsWith('-described'))) {
  const share = (hit: (whole: string[], gold: string) => boolean) =>
    (
      (100 * set.queries.filter((query) => hit(query.lists.at(-1)!, query.gold[0])).length) /
      Math.max(1, set.queries.length)
    ).toFixed(1)
  console.log(
    `${set.name}: BM25 first ${share((whole, gold) => whole[0] === gold)}%, in the list ${share((whole, gold) => whole.includes(gold))}%`,
  )
}

const fit = (label: string, sets: typeof rows.sets) => {
  const started = performance.now()
  reportFit(label, fitTrainingSets({ ...rows, sets }, options))
  console.log(`fitted in ${((performance.now() - started) / 1000).toFixed(0)} s`)
}
const described = (name: string) => name.endsWith('-described')
if (!values['skip-base'])
  fit(
    'shipped sets',
    rows.sets.filter((set) => !described(set.name)),
  )
for (const weight of weights)
  fit(
    `+ described, weight ${weight}`,
    rows.sets.map((set) => (described(set.name) ? { ...set, share: weight } : set)),
  )
