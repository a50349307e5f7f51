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
import { benchArgs } from './bench-args.ts'
import { mostProbableFirst } from '../src/learn/decide-set.ts'
import { singleClauseCases } from '../src/learn/training-rows.ts'
import type { Tool } from '../src/library/tool.ts'
import { trainingPlanner } from '../src/plan/rule-planner.ts'
import { tokenize } from '../src/retrieve/bm25/tokenize.ts'
import { composeCases, foldOf, score } from '../src/learn/train-model.ts'
import { shippedRecipeFit } from './training-dev-setup.ts'

const { values } = benchArgs(import.meta.url, {
  options: {
    data: { type: 'string', default: '../shared/data' },
    seed: { type: 'string', default: '1' },
  },
})
const seed = Number(values.seed)
const { sources, base: recipe, rows, model } = await shippedRecipeFit(values.data!, seed)

// Instruction text and tools of every set's queries (the same cases trainingSets makes).
const texts = new Map<string, Map<string, string>>()
const toolsOf = new Map<string, Map<string, Tool>>()
for (const source of sources) {
  const byId = new Map(source.tools.map((tool) => [tool.id, tool]))
  const add = (name: string, cases: ReadonlyArray<{ id: string; instruction: string }>) => {
    texts.set(name, new Map(cases.map((c) => [c.id, c.instruction])))
    toolsOf.set(name, byId)
  }
  add(source.name, source.cases)
  if (source.singleClauses) {
    const single = singleClauseCases(source.tools, source.cases, {
      bm25: recipe.bm25,
      k: recipe.k,
      maxSteps: recipe.maxSteps,
      tau: recipe.tau,
    })
    add(`${source.name}-single`, single)
    add(`${source.name}-composed`, composeCases(single, seed))
  }
}

const planner = trainingPlanner(recipe.maxSteps)
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
const logit = (p: number) => Math.log(Math.max(1e-6, p) / Math.max(1e-6, 1 - p))

for (const set of rows.sets) {
  if (set.countOnly) continue
  const text = texts.get(set.name)!
  const tools = toolsOf.get(set.name)!
  const counts: Record<string, number> = {}
  const bump = (key: string) => (counts[key] = (counts[key] ?? 0) + 1)
  let queries = 0
  for (const query of set.queries) {
    if (foldOf(query.id, seed) !== 0) continue
    queries += 1
    const instruction = text.get(query.id)!
    const clauses = planner.split(instruction)
    if (clauses.length !== query.steps) {
      bump('clause-mismatch')
      continue
    }
    const scored = score(model, query)
    const p = new Map(scored.map((c) => [c.id, c.p]))
    const gold = new Set(query.gold)
    query.lists.slice(0, query.steps).forEach((list, index) => {
      const [first, second] = [...new Set(list)].sort((a, b) =>
        mostProbableFirst({ id: a, p: p.get(a)! }, { id: b, p: p.get(b)! }),
      )
      if (second === undefined || gold.has(first) === gold.has(second)) return
      const kind = gold.has(first) ? 'hit' : 'miss'
      const near = Math.abs(logit(p.get(first)!) - logit(p.get(second)!)) < 1
      const clause = tokenize(clauses[index])
      const g = features(clause, tools.get(gold.has(first) ? first : second)!)
      const o = features(clause, tools.get(gold.has(first) ? second : first)!)
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
    })
  }
  console.log(`== ${set.name} (fold 0: ${queries} queries)`)
  for (const key of Object.keys(counts).sort()) console.log(`  ${key} ${counts[key]}`)
}
