/**
 * Turns training queries into labelled candidate rows: the same retrieval and features the
 * learned selector computes at request time (BM25 over the whole instruction and over each rule
 * planner clause, no threshold), label 1 when the candidate is a gold tool.
 * @module
 */
import type { Tool } from '../library/tool.ts'
import { trainingPlanner } from '../plan/rule-planner.ts'
import { Bm25Retriever, type Bm25Settings } from '../retrieve/bm25/bm25-retriever.ts'
import { expandHeadVerb } from '../retrieve/bm25/query-expansion.ts'
import { extractCandidateFeatures } from './candidate-features.ts'
import { stepFloorCandidates } from './decide-set.ts'
import type { TrainingCase } from './training-data.ts'
import type { DenseToolVectors } from './dense-features.ts'

export interface QueryRows {
  id: string
  gold: string[]
  /** A count-only label (TrainingCase.shape): no gold. */
  shape?: 'single' | 'multi'
  /** Planner clauses. */
  steps: number
  /** Each clause's `stepFloorCandidates` (for the decision rule's `stepFloor`). */
  stepTops: string[][]
  /**
   * The candidate ids of every request the selector sees, best first: each clause's, then the
   * whole instruction's when the pipeline adds it (unless the plan is the instruction itself).
   */
  lists: string[][]
  ids: string[]
  /** Each candidate's namespace (null: none). */
  namespaces: Array<string | null>
  /** Feature vectors, one per candidate. */
  x: number[][]
}

export interface RowOptions {
  bm25: Bm25Settings
  /** Dense tool vectors: each row also gets the dense features (learn/dense-features.ts). */
  dense?: DenseToolVectors
  /** The dense features' one-clause vector (DenseInput `oneClause`). */
  oneClauseDense?: 'instruction'
  k: number
  maxSteps: number
}

/** Retrieval with the query options the selector uses: head-verb expansion on, no threshold. */
export function searchFunction(retriever: Bm25Retriever, k: number) {
  return (text: string) => retriever.search(expandHeadVerb(text), k, 0)
}

export function queryRows(
  tools: readonly Tool[],
  cases: readonly TrainingCase[],
  options: RowOptions,
): QueryRows[] {
  const retriever = Bm25Retriever.build(tools, options.bm25)
  const byId = new Map(tools.map((tool) => [tool.id, tool]))
  const search = searchFunction(retriever, options.k)
  const planner = trainingPlanner(options.maxSteps)
  const tool = (id: string) => byId.get(id)!
  const dense = options.dense?.input(tool, undefined, options.oneClauseDense)
  return cases.map((trainingCase) => {
    const clauses = planner.split(trainingCase.instruction)
    const steps = clauses.map((text) => ({ text, candidates: search(text) }))
    const whole = search(trainingCase.instruction)
    const features = extractCandidateFeatures({
      instruction: trainingCase.instruction,
      whole,
      steps,
      tool,
      ...(dense && { dense }),
    })
    return {
      id: trainingCase.id,
      gold: trainingCase.gold,
      ...(trainingCase.shape && { shape: trainingCase.shape }),
      steps: clauses.length,
      stepTops: steps.map((step) => stepFloorCandidates(step.text, step.candidates)),
      lists: [
        ...steps.map((step) => step.candidates),
        ...(clauses.length === 1 && clauses[0] === trainingCase.instruction.trim() ? [] : [whole]),
      ].map((list) => list.map((candidate) => candidate.id)),
      ids: features.map((feature) => feature.id),
      namespaces: features.map((feature) => feature.namespace ?? null),
      x: features.map((feature) => feature.values),
    }
  })
}

/**
 * Single-need queries made from multi-tool training queries, so that the count decision also sees
 * requests that need one tool: each request clause on its own, labelled with the gold tool it
 * matches clearly best (BM25 over the query's gold tools only, above `tau`, 25% ahead of the
 * next). Clauses that match no gold tool clearly are left out.
 */
export function singleClauseCases(
  tools: readonly Tool[],
  cases: readonly TrainingCase[],
  options: RowOptions & { tau: number },
): TrainingCase[] {
  const byId = new Map(tools.map((tool) => [tool.id, tool]))
  const planner = trainingPlanner(options.maxSteps)
  const out: TrainingCase[] = []
  for (const trainingCase of cases) {
    const goldTools = trainingCase.gold.flatMap((id) => byId.get(id) ?? [])
    if (goldTools.length === 0) continue
    const local = Bm25Retriever.build(goldTools, options.bm25)
    planner.split(trainingCase.instruction).forEach((clause, index) => {
      const [first, second] = local.search(expandHeadVerb(clause), 2, options.tau)
      if (first === undefined || (second !== undefined && second.score >= first.score * 0.8)) return
      out.push({ id: `${trainingCase.id}#${index}`, instruction: clause, gold: [first.id] })
    })
  }
  return out
}

/** A tool description's first clause: up to its first sentence or clause stop, at most 24 words. */
export function firstClause(description: string): string {
  const head = description.trim().split(/[.!?;:\n](?:\s|$)|\n/u, 1)[0] ?? ''
  return head.split(/\s+/u).filter(Boolean).slice(0, 24).join(' ')
}

/** A tool name's words: "getUserByName" → "get User By Name", "songs/get-related" → "songs get related". */
export function nameWords(name: string): string {
  return name
    .replace(/([a-z0-9])([A-Z])/gu, '$1 $2')
    .replace(/[_\-/.:()]+/gu, ' ')
    .split(/\s+/u)
    .filter(Boolean)
    .join(' ')
}

/**
 * Self-supervised single-need queries made from a library's own tools (#10, round 38): each tool's
 * description's first clause (`firstClause`), or its name's words (`from: 'name'`), as a request
 * whose gold is that tool, for tools whose text has at least three BM25 terms and is no other tool's. At most `limit` of them, a seeded
 * choice by the id hash `order` gives; `keep` filters ids (the caller leaves the held-out fold out).
 */
export function describedCases(
  tools: readonly Tool[],
  options: {
    limit: number
    order: (id: string) => number
    keep: (id: string) => boolean
    terms: (text: string) => number
    from?: 'description' | 'name'
  },
): TrainingCase[] {
  const textOf = (tool: Tool) =>
    options.from === 'name' ? nameWords(tool.name) : firstClause(tool.description)
  const byText = new Map<string, Tool[]>()
  for (const tool of tools) {
    const text = textOf(tool)
    if (options.terms(text) < 3) continue
    const key = text.toLowerCase()
    const list = byText.get(key) ?? []
    list.push(tool)
    byText.set(key, list)
  }
  const cases: TrainingCase[] = []
  for (const list of byText.values()) {
    if (list.length !== 1) continue
    const id = `described:${list[0].id.replaceAll('#', '_')}`
    if (!options.keep(id)) continue
    cases.push({ id, instruction: textOf(list[0]), gold: [list[0].id] })
  }
  return cases
    .map((trainingCase) => ({ trainingCase, key: options.order(trainingCase.id) }))
    .sort((a, b) => a.key - b.key || (a.trainingCase.id < b.trainingCase.id ? -1 : 1))
    .slice(0, options.limit)
    .map(({ trainingCase }) => trainingCase)
}
