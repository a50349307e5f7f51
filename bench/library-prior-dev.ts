/**
 * Library-structure features for the learned selector's candidates (#10, round 41), on TRAINING
 * data only. Rounds 15-39 found that every signal made from the request's words sides with BM25's
 * first pick, right or wrong; these are read from the library alone, with no request and no label
 * (so they hold for a library never seen), and are independent of the words a request shares:
 *
 * - `hub_text`: how much of a "hub" the tool is: log(1 + N), N = the library's tools whose name
 *   and description, as a request, put the candidate in their first 10 (itself not counted;
 *   expected N is 10). A tool with generic words tops many requests' lists;
 * - `hub_name`: the same with each tool's name alone as the request (short, like a clause);
 * - `ns_size`: log of the number of tools in the candidate's namespace (0 without one): a
 *   request names a service, then an endpoint of it, so one endpoint of a large service is less
 *   likely a priori than the only endpoint of a small one;
 * - `ns_pos`: the tool's place among its namespace's tools in library order, / their number (0:
 *   the first, or no namespace): a service lists its main endpoints first.
 *
 * The shipped recipe (bench/training-dev-setup.ts) is fitted on folds 1-4 of `--seed` on the
 * shipped rows and then with each variant's columns appended; prints the held-out (fold 0) exact
 * match per set, each feature's mean for gold and other candidates of fold 0, and round 26's
 * near-miss screen with the shipped fit: for each clause whose two most probable candidates hold
 * exactly one gold tool, whether the gold one has the lower value of each feature (a feature can
 * flip the misses only where it differs from the hits). No test query is read.
 *
 *   npx tsx bench/library-prior-dev.ts [--data ../shared/data] [--seed 1] [--variants ns,size,pos]
 * @module
 */
import { benchArgs, wholeNumber } from './bench-args.ts'

const VARIANTS: Record<string, readonly string[]> = {
  hub: ['hub_text', 'hub_name'],
  size: ['ns_size'],
  pos: ['ns_pos'],
  ns: ['ns_size', 'ns_pos'],
}
const NAMES = ['hub_text', 'hub_name', 'ns_size', 'ns_pos']
const { values } = benchArgs(import.meta.url, {
  options: {
    data: { type: 'string', default: '../shared/data' },
    seed: { type: 'string', default: '1' },
    variants: { type: 'string', default: 'ns,size,pos' },
    'skip-base': { type: 'boolean', default: false },
  },
})
// What it measures only once the flags are good: --help and a bad flag answer without it.
const { Bm25Retriever } = await import('../src/retrieve/bm25/bm25-retriever.ts')
const {
  fitVariants,
  foldZeroColumnMeans,
  pickVariants,
  rankedPairs,
  shippedRecipeRows,
  trainingSetCases,
} = await import('./training-dev-setup.ts')
const seed = wholeNumber(import.meta.url, '--seed', values.seed, 0)
const variants = pickVariants(import.meta.url, values.variants!, VARIANTS, NAMES)
const { sources, base, options, rows } = await shippedRecipeRows(values.data!, seed)

const TOP = 10
/** Each source's tools' four features (NAMES order), by id. */
const priorsOf = new Map<string, Map<string, number[]>>()
for (const source of sources) {
  const started = performance.now()
  const retriever = Bm25Retriever.build(source.tools, options.bm25)
  const counts = [new Map<string, number>(), new Map<string, number>()]
  const requests = [
    (tool: (typeof source.tools)[number]) => `${tool.name} ${tool.description}`,
    (tool: (typeof source.tools)[number]) => tool.name,
  ]
  for (const tool of source.tools)
    requests.forEach((request, f) => {
      const found = retriever.search(request(tool), TOP + 1, 0)
      let taken = 0
      for (const candidate of found) {
        if (candidate.id === tool.id || taken === TOP) continue
        taken += 1
        counts[f].set(candidate.id, (counts[f].get(candidate.id) ?? 0) + 1)
      }
    })
  const size = new Map<string, number>()
  const place = new Map<string, number>()
  for (const tool of source.tools) {
    if (tool.namespace === undefined) continue
    place.set(tool.id, size.get(tool.namespace) ?? 0)
    size.set(tool.namespace, (size.get(tool.namespace) ?? 0) + 1)
  }
  priorsOf.set(
    source.name,
    new Map(
      source.tools.map((tool) => {
        const n = tool.namespace === undefined ? 1 : size.get(tool.namespace)!
        return [
          tool.id,
          [
            ...counts.map((count) => Math.log1p(count.get(tool.id) ?? 0)),
            Math.log(n),
            (place.get(tool.id) ?? 0) / n,
          ],
        ]
      }),
    ),
  )
  const sorted = source.tools.map((tool) => counts[0].get(tool.id) ?? 0).sort((a, b) => b - a)
  console.log(
    `${source.name}: ${source.tools.length} tools in ${size.size} namespaces, hub_text N max ${sorted[0]}, 99th pct ` +
      `${sorted[Math.floor(sorted.length / 100)]}, median ${sorted[Math.floor(sorted.length / 2)]}, ` +
      `zero ${sorted.filter((n) => n === 0).length} (${((performance.now() - started) / 1000).toFixed(1)} s)`,
  )
}
/** A set's source (`toolplanner-g3-single` is `toolplanner-g3`'s). */
const sourceOf = (setName: string) =>
  sources.find((source) => setName === source.name || setName.startsWith(`${source.name}-`))!
const priorOf = (setName: string) => priorsOf.get(sourceOf(setName).name)!

type Query = (typeof rows.sets)[number]['queries'][number]
const columns = new Map<Query, number[][]>()
for (const set of rows.sets) {
  const priors = priorOf(set.name)
  for (const query of set.queries)
    if (query.ids.length > 0)
      columns.set(
        query,
        query.ids.map((id) => priors.get(id) ?? NAMES.map(() => 0)),
      )
}
// The features' mean for gold and for other candidates (fold 0, gold-labelled sets).
for (const { set, gold, other, means } of foldZeroColumnMeans(rows, columns, seed, NAMES.length)) {
  const mean = (side: 'gold' | 'other', f: number) => means[side][f].toFixed(2)
  console.log(
    `${set} fold 0 (${gold} gold / ${other} other candidates), mean gold / other: ` +
      NAMES.map((name, f) => `${name} ${mean('gold', f)} / ${mean('other', f)}`).join(', '),
  )
}

fitVariants(rows, options, columns, variants, {
  skipBase: values['skip-base'],
  afterBase: (model) => {
    // Near-miss screen: does the gold one of a clause's first two have the lower value?
    const cases = trainingSetCases(sources, base)
    for (const set of rows.sets) {
      const texts = cases.get(set.name)
      if (set.countOnly || texts === undefined) continue
      const instruction = new Map(texts.cases.map((c) => [c.id, c.instruction]))
      const priors = priorOf(set.name)
      const tally = new Map<string, number>()
      const add = (key: string) => tally.set(key, (tally.get(key) ?? 0) + 1)
      for (const pair of rankedPairs(set, model, { seed, maxSteps: base.maxSteps }, (id) =>
        instruction.get(id)!,
      )) {
        const [gold, other] = [priors.get(pair.gold)!, priors.get(pair.other)!]
        NAMES.forEach((name, f) => {
          const side =
            gold[f] < other[f] ? 'gold-lower' : gold[f] > other[f] ? 'gold-higher' : 'tie'
          add(`${name} ${pair.kind}${pair.near ? '-near' : ''} ${side}`)
        })
      }
      const line = (name: string, kind: string) =>
        `${kind} ${['gold-lower', 'gold-higher', 'tie'].map((side) => tally.get(`${name} ${kind} ${side}`) ?? 0).join(' / ')}`
      for (const name of NAMES)
        console.log(
          `${set.name} ${name} (gold lower / higher / tie): ` +
            ['miss', 'miss-near', 'hit', 'hit-near'].map((kind) => line(name, kind)).join(', '),
        )
    }
  },
})
