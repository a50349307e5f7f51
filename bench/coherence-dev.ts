/**
 * A set-coherence prior for multi-step answers as candidate features (#10, round 39, option (b)),
 * on TRAINING data only. ToolBench G3 and ToolLens requests mostly combine tools of one category:
 * 29% of ToolPlanner G3's gold pairs share a category tag (8% of random pairs of its tools), 33%
 * of ToolLens' (7%); 23% and 3% share a namespace (random: 1.6%, 0.5%; the script prints these).
 * The shipped `namespace_support` counts strong tools of the candidate's namespace in every list,
 * its own clause's included; these features look only at the OTHER clauses, the form a prior
 * learned from co-used gold sets takes when it must hold for a library never seen (no tool ids,
 * only "same namespace", "same category"):
 *
 * - `ns_other_step`: 1 when the top candidate of some clause list the candidate is not in the
 *   first three of has the candidate's namespace;
 * - `tag_other_step`: the same for the candidate's category tags;
 * - `tag_support`: tools in the first three of any list (clauses and the whole instruction) with
 *   the candidate's tags, itself not counted, capped at 4, / 4 (`namespace_support` for tags).
 *
 * A namespace or tag set every candidate of the request shares says nothing (0), as
 * `extendCoherent` treats it. The shipped recipe (bench/training-dev-setup.ts) is fitted on folds
 * 1-4 of `--seed` on the shipped rows and then with each variant's columns appended; prints the
 * held-out (fold 0) exact match per set, and how often gold and other candidates of fold 0 have
 * each feature. No test query is read.
 *
 *   npx tsx bench/coherence-dev.ts [--data ../shared/data] [--seed 1] [--variants both,tag]
 * @module
 */
import { benchArgs, wholeNumber } from './bench-args.ts'

const VARIANTS: Record<string, readonly string[]> = {
  ns: ['ns_other_step'],
  tag: ['tag_other_step', 'tag_support'],
  both: ['ns_other_step', 'tag_other_step', 'tag_support'],
}
const { values } = benchArgs(import.meta.url, {
  options: {
    data: { type: 'string', default: '../shared/data' },
    seed: { type: 'string', default: '1' },
    variants: { type: 'string', default: 'both,tag' },
    'skip-base': { type: 'boolean', default: false },
  },
})
// What it measures only once the flags are good: --help and a bad flag answer without it.
const { foldZeroColumnMeans, fitVariants, pickVariants, shippedRecipeRows } =
  await import('./training-dev-setup.ts')
const seed = wholeNumber(import.meta.url, '--seed', values.seed, 0)
const variants = pickVariants(import.meta.url, values.variants!, VARIANTS, VARIANTS.both)
const { sources, options, rows } = await shippedRecipeRows(values.data!, seed)

/** Each tool's category tags as one key (undefined: none), per source. */
const tagsOf = new Map(
  sources.map((source) => [
    source.name,
    new Map(
      source.tools.map((tool) => [
        tool.id,
        tool.tags && tool.tags.length > 0 ? [...tool.tags].sort().join('\n') : undefined,
      ]),
    ),
  ]),
)
/** A set's source tags (`toolplanner-g3-single` is `toolplanner-g3`'s). */
const tagMapOf = (setName: string) =>
  sources
    .filter((source) => setName === source.name || setName.startsWith(`${source.name}-`))
    .map((source) => tagsOf.get(source.name)!)[0]

// The prior itself: how often two gold tools of one request share a namespace or tags, against
// two tools of the library drawn at random (the sum of squared shares).
for (const source of sources) {
  const tags = tagsOf.get(source.name)!
  const namespaces = new Map(source.tools.map((tool) => [tool.id, tool.namespace]))
  const randomShare = (keys: Iterable<string | undefined>) => {
    const counts = new Map<string | undefined, number>()
    for (const key of keys) counts.set(key, (counts.get(key) ?? 0) + 1)
    let sum = 0
    for (const [key, n] of counts) if (key !== undefined) sum += (n / source.tools.length) ** 2
    return sum
  }
  let pairs = 0
  const same = { namespace: 0, tags: 0 }
  for (const { gold } of source.cases)
    for (let a = 0; a < gold.length; a += 1)
      for (let b = a + 1; b < gold.length; b += 1) {
        pairs += 1
        const [x, y] = [gold[a], gold[b]]
        if (namespaces.get(x) !== undefined && namespaces.get(x) === namespaces.get(y))
          same.namespace += 1
        if (tags.get(x) !== undefined && tags.get(x) === tags.get(y)) same.tags += 1
      }
  const pct = (share: number) => `${(100 * share).toFixed(1)}%`
  console.log(
    `${source.name}: ${pairs} gold pairs; same namespace ${pct(same.namespace / Math.max(1, pairs))} ` +
      `(random ${pct(randomShare(namespaces.values()))}), same tags ${pct(same.tags / Math.max(1, pairs))} ` +
      `(random ${pct(randomShare(tags.values()))})`,
  )
}

type Query = (typeof rows.sets)[number]['queries'][number]
const CAP = 4

/** The three features for every candidate of `query` (in `query.ids` order). */
function coherence(query: Query, tagOf: (id: string) => string | undefined): number[][] {
  const namespaceOf = new Map(query.ids.map((id, i) => [id, query.namespaces[i] ?? undefined]))
  const keyed = (key: (id: string) => string | undefined) => {
    const first = key(query.ids[0])
    // A key every candidate shares (or none has) tells them nothing.
    const shared = query.ids.every((id) => key(id) === first)
    return (id: string) => (shared ? undefined : key(id))
  }
  const ns = keyed((id) => namespaceOf.get(id))
  const tag = keyed(tagOf)
  const clauses = query.lists.slice(0, query.steps)
  const strongByTag = new Map<string, Set<string>>()
  for (const list of query.lists) {
    for (const id of new Set(list.slice(0, 3))) {
      const key = tag(id)
      if (key === undefined) continue
      const set = strongByTag.get(key) ?? new Set<string>()
      set.add(id)
      strongByTag.set(key, set)
    }
  }
  const otherStep = (id: string, key: (id: string) => string | undefined) => {
    const own = key(id)
    if (own === undefined) return 0
    return clauses.some(
      (list) => list.length > 0 && !list.slice(0, 3).includes(id) && key(list[0]) === own,
    )
      ? 1
      : 0
  }
  return query.ids.map((id) => {
    const key = tag(id)
    const strong = key === undefined ? undefined : strongByTag.get(key)
    const support = strong === undefined ? 0 : strong.size - (strong.has(id) ? 1 : 0)
    return [otherStep(id, ns), otherStep(id, tag), Math.min(support, CAP) / CAP]
  })
}

const NAMES = VARIANTS.both
const columns = new Map<Query, number[][]>()
for (const set of rows.sets) {
  const tagMap = tagMapOf(set.name)
  for (const query of set.queries)
    if (query.ids.length > 0)
      columns.set(
        query,
        coherence(query, (id) => tagMap?.get(id)),
      )
}
// How often the features fire for gold and for other candidates (fold 0, gold-labelled sets).
for (const { set, gold, other, means } of foldZeroColumnMeans(rows, columns, seed, NAMES.length)) {
  const share = (side: 'gold' | 'other', f: number) => (100 * means[side][f]).toFixed(1)
  console.log(
    `${set} fold 0 (${gold} gold / ${other} other candidates): ` +
      NAMES.map((name, f) => `${name} ${share('gold', f)}% / ${share('other', f)}%`).join(', '),
  )
}

fitVariants(rows, options, columns, variants, { skipBase: values['skip-base'] })
