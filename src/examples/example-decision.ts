/**
 * The example-aware decision: in a library whose nearest-example memory passed its self-check,
 * the answer is chosen with the examples rather than by "the memory's set when it is confident,
 * else the selector's". Two small logistic models:
 *
 * 1. **Per tool**: every tool the selector chose or one of the 20 nearest examples used is scored
 *    from features of both (the selector's probability, whether it chose the tool, the
 *    neighbours' similarity-weighted votes, their best tool set, namespace votes, the tool's rank
 *    by probability and by vote, and how often the library's examples used it with the selector's
 *    tools or the neighbours' best set: example-cooccurrence.ts).
 * 2. **Per set**: the candidate answers (the selector's set, the 5 nearest examples' best set,
 *    the union of the two, the runner-up set of the 20 neighbours, the 1-5 best-scored tools,
 *    and the selector's and the best set each plus the best-scored tool outside it) are scored
 *    from set features (size against the selector's count, the neighbours' set, the planner's
 *    steps, the neighbours' set sizes and the instruction's length; mean and least tool score,
 *    best score left out, how many neighbours used exactly that set and how close they were,
 *    whether the memory would have proposed it; how well its tools go together in the library's
 *    examples and whether its size is what those tools' examples needed); the most probable
 *    set is the answer. This decides how many tools as well as which: on held-out training
 *    queries, choosing the count was where the per-tool scores alone lost most.
 *
 * The models are an optional part of the learned selector's artifact (`examples`), trained by
 * `toolsel train` on training queries the selector's model held out, with the other training
 * queries as the library's examples (examples/train-example-decision.ts). Library-independent:
 * no tool id is a feature.
 * @module
 */
import { candidateProbability, type TreeEnsemble } from '../learn/boosted-trees.ts'
import type { LogisticModel } from '../learn/logistic-regression.ts'
import type { ToolCooccurrence } from './example-cooccurrence.ts'
import type { ExampleDenseScores } from './example-dense-map.ts'
import { bestNeighborSet, type ExampleNeighbor } from './example-memory.ts'

/** Neighbours the decision's features read (the first 5 of them also for the set vote). */
export const DECISION_NEIGHBORS = 20
const SET_NEIGHBORS = 5

export const EXAMPLE_DECISION_FEATURES = [
  'in_pipeline',
  'probability',
  'is_candidate',
  'step_top1',
  'vote',
  'vote_top5',
  'max_similarity',
  'users',
  'top_similarity',
  'in_best_set',
  'best_set_agreeing',
  'vote_x_top_similarity',
  'in_pipeline_x_top_similarity',
  'pipeline_tools',
  'best_set_tools',
  'namespace_vote',
  'in_pipeline_namespace',
  'examples_log',
  'vote_x_examples_log',
  'probability_rank',
  'vote_rank',
  'cooc_chosen',
  'cooc_best_set',
  'uses_log',
  'mean_size',
] as const

/**
 * Appended to EXAMPLE_DECISION_FEATURES in a model trained with the libraries' own dense spaces
 * (`toolsel train --example-maps`; example-dense-map.ts): the tool's cosine to the instruction
 * there, its rank by it in the pool, whether it is the library's best tool there, and whether
 * the library has a dense space at all (0: the other three are 0 too).
 */
export const EXAMPLE_DENSE_FEATURES = [
  'dense_cosine',
  'dense_rank',
  'dense_top1',
  'has_dense',
] as const

/** Whether a decision model reads the dense features (see EXAMPLE_DENSE_FEATURES). */
export const readsDense = (model: Pick<ExampleDecisionModel, 'features'>) =>
  model.features.length > EXAMPLE_DECISION_FEATURES.length

export const EXAMPLE_SET_FEATURES = [
  'tools',
  'tools_minus_pipeline',
  'tools_off_pipeline',
  'tools_minus_best_set',
  'mean_probability',
  'min_probability',
  'max_probability_outside',
  'is_pipeline',
  'is_best_set',
  'top_similarity',
  'best_set_agreeing',
  'best_set_x_top_similarity',
  'memory_proposes',
  'is_memory_proposal',
  'examples_log',
  'is_best_set_x_examples_log',
  'is_pipeline_x_examples_log',
  'neighbors_using_set',
  'closest_using_set',
  'share_using_set',
  'size_share',
  'tools_minus_steps',
  'tools_off_steps',
  'tools_x_words_log',
  'set_cohesion',
  'set_pair_share',
  'set_uses_log',
  'size_minus_usual',
  'size_off_usual',
] as const

/** What the neighbours say of one tool: their vote, the first SET_NEIGHBORS' vote, the closest user, users. */
interface ToolVotes {
  vote: number
  voteTop5: number
  closest: number
  users: number
}

/** A tool no neighbour used. */
const NO_VOTES: Readonly<ToolVotes> = { vote: 0, voteTop5: 0, closest: 0, users: 0 }

/** Candidate answers of the set model: the 1 to MAX_TOP_SET best-scored tools. */
const MAX_TOP_SET = 5

/** The instruction's word count (whitespace-separated), a set feature's scale of the request. */
export const instructionWords = (instruction: string) =>
  instruction.split(/\s+/).filter(Boolean).length

export interface ExampleDecisionModel {
  features: string[]
  /** The per-tool model. */
  model: LogisticModel
  setFeatures: string[]
  /** The per-set model. */
  setModel: LogisticModel
  /**
   * Boosted trees on top of each model's log-odds (boosted-trees.ts), splitting on the decision's
   * own features; absent: the logistic models alone.
   */
  trees?: TreeEnsemble
  setTrees?: TreeEnsemble
  /** Usage examples a library needs before the decision is used. */
  minExamples: number
}

export interface ExampleDecisionInput {
  /** The selector's tools, in order. */
  chosen: readonly string[]
  /** The selector's probability per candidate id (the highest over the requests listing it). */
  probabilities: ReadonlyMap<string, number>
  /** The first candidate of each request. */
  stepTops: ReadonlySet<string>
  /** The instruction's nearest examples, most similar first (DECISION_NEIGHBORS of them). */
  neighbors: readonly ExampleNeighbor[]
  /** The memory's set proposal (memory-selection.ts), when it makes one. */
  proposal: readonly string[] | undefined
  /**
   * How many usage examples the library has: neighbours among a few dozen examples say less than
   * among thousands (the models were trained on both).
   */
  examples: number
  /** The planner's steps (requests without the whole instruction) and the instruction's words. */
  steps: number
  words: number
  namespaceOf: (id: string) => string | undefined
  /**
   * The library's own learned dense space (example-dense-map.ts), when it has one: its best
   * tools join the pool, and every tool's cosine is a feature.
   */
  dense?: ExampleDenseScores
  /** Which tools the library's examples used together (example-cooccurrence.ts). */
  cooccurrence?: ToolCooccurrence
}

/** Of the library's best tools in its learned dense space, how many join the per-tool pool. */
export const DENSE_POOL = 3

export interface DecisionRows {
  ids: string[]
  x: number[][]
}

/**
 * One feature row per tool the pipeline chose or a neighbour used, or (with `withDense` and a
 * dense space) is among the library's DENSE_POOL best there (first seen first). Rows have the
 * EXAMPLE_DENSE_FEATURES too only `withDense`.
 */
export function exampleDecisionRows(input: ExampleDecisionInput, withDense = false): DecisionRows {
  const { chosen, probabilities, stepTops, neighbors, namespaceOf } = input
  const top = neighbors[0]?.similarity ?? 0
  const mass = neighbors.reduce((sum, neighbor) => sum + neighbor.similarity, 0) || 1
  const first = neighbors.slice(0, SET_NEIGHBORS)
  const firstMass = first.reduce((sum, neighbor) => sum + neighbor.similarity, 0) || 1
  const best = bestNeighborSet(first)
  const bestTools = new Set(best?.tools ?? [])
  const picked = new Set(chosen)
  const pickedNamespaces = new Set(chosen.map(namespaceOf).filter((space) => space !== undefined))
  const namespaceVotes = new Map<string, number>()
  for (const { example, similarity } of neighbors) {
    for (const space of new Set(example.tools.map(namespaceOf))) {
      if (space !== undefined)
        namespaceVotes.set(space, (namespaceVotes.get(space) ?? 0) + similarity / mass)
    }
  }
  const examplesLog = Math.log1p(input.examples)
  // Per tool, in one pass over the neighbours: its similarity-weighted vote (all 20 and the first
  // SET_NEIGHBORS), its closest user and how many neighbours used it.
  const votes = new Map<string, ToolVotes>()
  neighbors.forEach(({ example, similarity }, index) => {
    for (const id of new Set(example.tools)) {
      let entry = votes.get(id)
      if (entry === undefined) {
        entry = { vote: 0, voteTop5: 0, closest: 0, users: 0 }
        votes.set(id, entry)
      }
      entry.vote += similarity / mass
      if (index < SET_NEIGHBORS) entry.voteTop5 += similarity / firstMass
      entry.closest = Math.max(entry.closest, similarity)
      entry.users += 1
    }
  })
  const dense = withDense ? input.dense : undefined
  const ids = [...new Set([...chosen, ...votes.keys(), ...(dense?.top.slice(0, DENSE_POOL) ?? [])])]
  // Each tool's rank among the pool by the selector's probability and by the neighbours' vote
  // (as 1 / (1 + rank); 0 for a tool without either).
  const rankOf = (score: (id: string) => number) => {
    const order = ids.filter((id) => score(id) > 0).sort((a, b) => score(b) - score(a))
    return new Map(order.map((id, rank) => [id, 1 / (1 + rank)]))
  }
  const probabilityRank = rankOf((id) => probabilities.get(id) ?? 0)
  const voteRank = rankOf((id) => votes.get(id)?.vote ?? 0)
  const denseRank = dense ? rankOf((id) => 1 + dense.cosine(id)) : undefined
  const cooc = input.cooccurrence
  const x = ids.map((id) => {
    let coocChosen = 0
    let coocBest = 0
    if (cooc) {
      for (const other of chosen) coocChosen = Math.max(coocChosen, cooc.conditional(id, other))
      for (const other of bestTools) coocBest = Math.max(coocBest, cooc.conditional(id, other))
    }
    const { vote, voteTop5, closest: maxSimilarity, users } = votes.get(id) ?? NO_VOTES
    const inPipeline = picked.has(id) ? 1 : 0
    const inBest = bestTools.has(id) ? 1 : 0
    const space = namespaceOf(id)
    const row = [
      inPipeline,
      probabilities.get(id) ?? 0,
      probabilities.has(id) ? 1 : 0,
      stepTops.has(id) ? 1 : 0,
      vote,
      voteTop5,
      maxSimilarity,
      users / DECISION_NEIGHBORS,
      top,
      inBest,
      inBest * (best?.agreeing ?? 0),
      voteTop5 * top,
      inPipeline * top,
      chosen.length,
      bestTools.size,
      space === undefined ? 0 : (namespaceVotes.get(space) ?? 0),
      space !== undefined && pickedNamespaces.has(space) ? 1 : 0,
      examplesLog,
      vote * examplesLog,
      probabilityRank.get(id) ?? 0,
      voteRank.get(id) ?? 0,
      coocChosen,
      coocBest,
      cooc ? Math.log1p(cooc.uses(id)) : 0,
      cooc ? cooc.meanSize(id) : 0,
    ]
    if (withDense)
      row.push(
        dense ? dense.cosine(id) : 0,
        denseRank?.get(id) ?? 0,
        dense?.top[0] === id ? 1 : 0,
        dense ? 1 : 0,
      )
    return row
  })
  return { ids, x }
}

interface NeighborSet {
  tools: readonly string[]
  count: number
  closest: number
  share: number
}

export interface CandidateSet {
  tools: readonly string[]
  x: number[]
}

/** Tool ids by the per-tool model's probability, best first (ties keep their first-seen order). */
export function rankTools(
  model: LogisticModel,
  rows: DecisionRows,
  trees?: TreeEnsemble,
): Array<{ id: string; p: number }> {
  return rows.ids
    .map((id, index) => ({ id, index, p: candidateProbability({ model, trees }, rows.x[index]) }))
    .sort((a, b) => b.p - a.p || a.index - b.index)
    .map(({ id, p }) => ({ id, p }))
}

/**
 * The set model's candidate answers for an input whose tools were ranked by the per-tool model:
 * the selector's set, the nearest examples' best set and the 1-5 best-ranked tools, each once
 * (empty sets left out), with their features (EXAMPLE_SET_FEATURES).
 */
export function candidateSets(
  input: ExampleDecisionInput,
  ranked: ReadonlyArray<{ id: string; p: number }>,
): CandidateSet[] {
  const probability = new Map(ranked.map(({ id, p }) => [id, p]))
  const best = bestNeighborSet(input.neighbors.slice(0, SET_NEIGHBORS))
  const bestTools = best?.tools ?? []
  const top = input.neighbors[0]?.similarity ?? 0
  const examplesLog = Math.log1p(input.examples)
  const ids = ranked.map(({ id }) => id)
  // Every tool set the neighbours used: how many used it, the closest one's similarity, and its
  // share of their similarity.
  const bySet = new Map<string, NeighborSet>()
  const mass = input.neighbors.reduce((sum, neighbor) => sum + neighbor.similarity, 0) || 1
  for (const { example, similarity } of input.neighbors) {
    const key = setKey(example.tools)
    const entry = bySet.get(key) ?? { tools: example.tools, count: 0, closest: 0, share: 0 }
    entry.count += 1
    entry.closest = Math.max(entry.closest, similarity)
    entry.share += similarity / mass
    bySet.set(key, entry)
  }
  // The neighbours' tool-set sizes: the similarity share of those whose set had each size
  // (how many tools requests like this one needed).
  const sizeShare = new Map<number, number>()
  for (const { example, similarity } of input.neighbors) {
    const size = example.tools.length
    sizeShare.set(size, (sizeShare.get(size) ?? 0) + similarity / mass)
  }
  // The runner-up set of all the neighbours (stable sort: ties keep the closer one first).
  const second = [...bySet.values()].sort((a, b) => b.share - a.share)[1]?.tools ?? []
  const options = [
    input.chosen,
    bestTools,
    ...Array.from({ length: MAX_TOP_SET }, (_, index) => ids.slice(0, index + 1)),
    [...new Set([...input.chosen, ...bestTools])],
    second,
    plusNext(input.chosen, ids),
    plusNext(bestTools, ids),
  ]
  const seen = new Set<string>()
  const out: CandidateSet[] = []
  for (const tools of options) {
    const key = setKey(tools)
    if (tools.length === 0 || seen.has(key)) continue
    seen.add(key)
    const inside = tools.map((id) => probability.get(id) ?? 0)
    const members = new Set(tools)
    let outside = 0
    for (const { id, p } of ranked) if (!members.has(id)) outside = Math.max(outside, p)
    const isBest = bestTools.length > 0 && key === setKey(bestTools) ? 1 : 0
    const isPipeline = key === setKey(input.chosen) ? 1 : 0
    const fit = setFit(tools, input.cooccurrence)
    out.push({
      tools,
      x: [
        tools.length,
        tools.length - input.chosen.length,
        Math.abs(tools.length - input.chosen.length),
        tools.length - bestTools.length,
        inside.reduce((sum, p) => sum + p, 0) / inside.length,
        Math.min(...inside),
        outside,
        isPipeline,
        isBest,
        top,
        best?.agreeing ?? 0,
        isBest * top,
        input.proposal ? 1 : 0,
        input.proposal && key === setKey(input.proposal) ? 1 : 0,
        examplesLog,
        isBest * examplesLog,
        isPipeline * examplesLog,
        bySet.get(key)?.count ?? 0,
        bySet.get(key)?.closest ?? 0,
        bySet.get(key)?.share ?? 0,
        sizeShare.get(tools.length) ?? 0,
        tools.length - input.steps,
        Math.abs(tools.length - input.steps),
        tools.length * Math.log1p(input.words),
        fit.cohesion,
        fit.pairShare,
        fit.usesLog,
        fit.sizeMinusUsual,
        Math.abs(fit.sizeMinusUsual),
      ],
    })
  }
  return out
}

/**
 * How well a candidate set's tools go together in the library's examples: the least attached
 * tool's best share of co-use with another member (cohesion), the share of member pairs some
 * example used together, how many examples used exactly the set (log), and the set's size
 * minus the mean size of the sets its tools were used in. All 0 without co-occurrence.
 */
function setFit(tools: readonly string[], cooc: ToolCooccurrence | undefined) {
  if (!cooc) return { cohesion: 0, pairShare: 0, usesLog: 0, sizeMinusUsual: 0 }
  let cohesion = tools.length > 1 ? 1 : 0
  let pairs = 0
  let together = 0
  let usual = 0
  let used = 0
  for (let i = 0; i < tools.length; i += 1) {
    let attached = 0
    for (let j = 0; j < tools.length; j += 1) {
      if (i === j) continue
      const share = Math.max(
        cooc.conditional(tools[i], tools[j]),
        cooc.conditional(tools[j], tools[i]),
      )
      attached = Math.max(attached, share)
      if (j > i) {
        pairs += 1
        if (share > 0) together += 1
      }
    }
    if (tools.length > 1) cohesion = Math.min(cohesion, attached)
    const size = cooc.meanSize(tools[i])
    if (size > 0) {
      usual += size
      used += 1
    }
  }
  return {
    cohesion,
    pairShare: pairs > 0 ? together / pairs : 0,
    usesLog: Math.log1p(cooc.setUses(tools)),
    sizeMinusUsual: used > 0 ? tools.length - usual / used : 0,
  }
}

/** `tools` and the best-ranked tool outside them (`tools` itself when there is none). */
function plusNext(tools: readonly string[], ranked: readonly string[]): readonly string[] {
  const members = new Set(tools)
  const next = ranked.find((id) => !members.has(id))
  return tools.length === 0 || next === undefined ? tools : [...tools, next]
}

const setKey = (tools: readonly string[]) => [...tools].sort().join('\u0001')

/** The candidate set the set model finds most probable (ties: the earlier candidate). */
export function pickSet(
  setModel: LogisticModel,
  sets: readonly CandidateSet[],
  trees?: TreeEnsemble,
): readonly string[] {
  let best: { tools: readonly string[]; p: number } | undefined
  for (const candidate of sets) {
    const p = candidateProbability({ model: setModel, trees }, candidate.x)
    if (!best || p > best.p) best = { tools: candidate.tools, p }
  }
  return best?.tools ?? []
}

/** The example-aware answer (see the module comment). */
export function decideWithExamples(
  model: ExampleDecisionModel,
  input: ExampleDecisionInput,
): string[] {
  const ranked = rankTools(model.model, exampleDecisionRows(input, readsDense(model)), model.trees)
  return [...pickSet(model.setModel, candidateSets(input, ranked), model.setTrees)]
}
