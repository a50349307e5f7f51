/**
 * The ceiling of word-order candidate features (#10, round 26), on TRAINING data only: the shipped
 * recipe fitted on folds 1-4 of `--seed` (as bench/selection-errors-dev.ts), and on held-out fold 0
 * of ToolPlanner G3, its single-clause and composed sets and ToolLens train, every clause whose two
 * most probable candidates hold exactly one gold tool. For each such pair (a `miss`: the first is
 * wrong; a `hit`: the first is gold) and each feature, whether the feature puts the gold tool above
 * the other (`right`), below (`wrong`) or level (`tie`), for all pairs and for near-ties (|log-odds
 * difference| < 1). A feature can win at most the misses it gets right and lose the hits it gets
 * wrong. The features (over the clause's terms in order, stop words out, stemmed):
 *
 * - `name_bigram`: share of the clause's adjacent term pairs adjacent, in that order, in the name;
 * - `text_bigram3`: share of them within 3 terms, in that order, in the name or the description;
 * - `name_order`: over pairs of the name's terms that the clause holds, (same order − reversed) /
 *   pairs (0 with fewer than two);
 * - `name_head` (round 26's third lever): the name's last term (the head of an English compound:
 *   "channel videos" is videos) is among the clause's terms;
 * - `name_verb`: the name's first term is the clause's first term (an imperative's action verb);
 * - `bag_tie`: (report only) whether the two hold the same share of the clause's terms (the
 *   features' directions are also counted within those pairs: the near-sibling swaps bag-of-words
 *   cannot tell apart).
 *
 *   npx tsx bench/word-order-dev.ts [--data ../shared/data] [--seed 1]
 * @module
 */
import { benchArgs, wholeNumber } from './bench-args.ts'
import type { Tool } from '../src/library/tool.ts'

const { values } = benchArgs(import.meta.url, {
  options: {
    data: { type: 'string', default: '../shared/data' },
    seed: { type: 'string', default: '1' },
  },
})
// What it measures only once the flags are good: --help and a bad flag answer without it.
const { tokenize } = await import('../src/retrieve/bm25/tokenize.ts')
const { rankedPairs, shippedRecipeFit, trainingSetCases } = await import('./training-dev-setup.ts')
const seed = wholeNumber(import.meta.url, '--seed', values.seed, 0)
const { sources, base: recipe, rows, model } = await shippedRecipeFit(values.data!, seed)

// Instruction text and tools of every set's queries (the same cases trainingSets makes).
const texts = new Map<string, Map<string, string>>()
const toolsOf = new Map<string, Map<string, Tool>>()
for (const [name, { source, cases }] of trainingSetCases(sources, recipe)) {
  texts.set(name, new Map(cases.map((c) => [c.id, c.instruction])))
  toolsOf.set(name, new Map(source.tools.map((tool) => [tool.id, tool])))
}

const toolTerms = new Map<Tool, { name: string[]; text: string[] }>()
function termsOf(tool: Tool) {
  let terms = toolTerms.get(tool)
  if (terms === undefined) {
    const name = tokenize(tool.name)
    toolTerms.set(
      tool,
      (terms = { name, text: [...name, '\u0000', ...tokenize(tool.description)] }),
    )
  }
  return terms
}
/** Ordered pairs (a, b) with b within `window` terms after a. */
function pairsWithin(terms: readonly string[], window: number): Set<string> {
  const out = new Set<string>()
  for (let i = 0; i < terms.length; i += 1)
    for (let j = i + 1; j <= i + window && j < terms.length; j += 1)
      out.add(`${terms[i]}\u0001${terms[j]}`)
  return out
}
function features(clause: readonly string[], tool: Tool) {
  const { name, text } = termsOf(tool)
  const adjacent: string[] = []
  for (let i = 0; i + 1 < clause.length; i += 1)
    if (clause[i] !== clause[i + 1]) adjacent.push(`${clause[i]}\u0001${clause[i + 1]}`)
  const nameAdjacent = pairsWithin(name, 1)
  const text3 = pairsWithin(text, 3)
  const share = (set: Set<string>) =>
    adjacent.length === 0 ? 0 : adjacent.filter((pair) => set.has(pair)).length / adjacent.length
  // name order: first place of each name term in the clause
  const places: number[] = []
  for (const term of new Set(name)) {
    const at = clause.indexOf(term)
    if (at >= 0) places.push(at)
  }
  let same = 0
  let reversed = 0
  for (let i = 0; i < places.length; i += 1)
    for (let j = i + 1; j < places.length; j += 1)
      if (places[j] > places[i]) same += 1
      else if (places[j] < places[i]) reversed += 1
  const clauseSet = new Set(clause)
  const all = new Set(text)
  let held = 0
  for (const term of clauseSet) if (all.has(term)) held += 1
  return {
    name_head: name.length > 0 && clauseSet.has(name[name.length - 1]) ? 1 : 0,
    name_verb: name.length > 0 && clause.length > 0 && name[0] === clause[0] ? 1 : 0,
    name_bigram: share(nameAdjacent),
    text_bigram3: share(text3),
    name_order: same + reversed === 0 ? 0 : (same - reversed) / (same + reversed),
    cover: clauseSet.size === 0 ? 0 : held / clauseSet.size,
  }
}
const FEATURES = ['name_bigram', 'text_bigram3', 'name_order', 'name_head', 'name_verb'] as const

for (const set of rows.sets) {
  if (set.countOnly) continue
  const text = texts.get(set.name)!
  const tools = toolsOf.get(set.name)!
  const counts: Record<string, number> = {}
  const bump = (key: string) => (counts[key] = (counts[key] ?? 0) + 1)
  let queries = 0
  const pairs = rankedPairs(
    set,
    model,
    { seed, maxSteps: recipe.maxSteps },
    (id) => text.get(id)!,
    (matched) => {
      queries += 1
      if (!matched) bump('clause-mismatch')
    },
  )
  for (const { clause: words, gold, other, kind, near } of pairs) {
    const clause = tokenize(words)
    const g = features(clause, tools.get(gold)!)
    const o = features(clause, tools.get(other)!)
    for (const scope of near ? ['all', 'near'] : ['all']) {
      bump(`${kind}:${scope}`)
      const bagTie = Math.abs(g.cover - o.cover) < 1e-9
      if (bagTie) bump(`${kind}:${scope}:bag_tie`)
      for (const feature of FEATURES) {
        const d = g[feature] - o[feature]
        const side = d > 1e-9 ? 'right' : d < -1e-9 ? 'wrong' : 'tie'
        bump(`${kind}:${scope}:${feature}:${side}`)
        if (bagTie) bump(`${kind}:${scope}:bag_tie:${feature}:${side}`)
      }
    }
  }
  console.log(`== ${set.name} (fold 0: ${queries} queries)`)
  for (const key of Object.keys(counts).sort()) console.log(`  ${key} ${counts[key]}`)
}
