/**
 * Library-independent features of one candidate tool for one instruction, read by the learned
 * selector. A candidate comes from the BM25 list of the whole instruction or of one of the rule
 * planner's clauses; every feature is a ratio, a rank or a word overlap, never a tool id, so a
 * model trained on one library transfers to another without retraining.
 * @module
 */
import { parameterText } from '../retrieve/bm25/bm25-document.ts'
import { tokenize, tokenizeQuery } from '../retrieve/bm25/tokenize.ts'
import { startsWithAction } from '../plan/request-cues.ts'
import type { Tool } from '../library/tool.ts'
import type { ToolLibrary } from '../library/tool-library.ts'
import { ToolMemo } from '../library/tool-memo.ts'
import { idHash as fnv1a } from '../library/id-table.ts'
import { DENSE_FEATURE_NAMES, denseSlotValues, type DenseInput } from './dense-features.ts'

/** A retrieved candidate: tool id and BM25 score (any threshold already applied). */
export interface ScoredId {
  id: string
  score: number
  /** The tool's position in `FeatureInput.library`, when known (a hint: see library/tool-memo.ts). */
  position?: number
}

/** What the extractor reads for one instruction. */
export interface FeatureInput {
  instruction: string
  /** Candidates of the whole instruction, best first. */
  whole: readonly ScoredId[]
  /** The planner's clauses with their candidates, best first. One clause: the instruction. */
  steps: ReadonlyArray<{ text: string; candidates: readonly ScoredId[] }>
  /** Looks a candidate's tool up (the library). */
  tool: (id: string) => Tool
  /**
   * The library `tool` reads, when there is one: its tools' terms are then derived once per
   * library version (library/tool-memo.ts) instead of from `tool(id)` on every call.
   */
  library?: ToolLibrary
  /**
   * Votes of the library's usage examples for each tool (0-1, e.g. the similarity-weighted share
   * of similar past instructions that used it). Absent or missing ids: 0.
   */
  exampleVotes?: ReadonlyMap<string, number>
  /**
   * Static word vectors of the texts and candidates (learn/dense-features.ts): when given, every
   * vector gets DENSE_FEATURE_NAMES' values after FEATURE_NAMES' (models trained with `--dense`).
   */
  dense?: DenseInput
}

/** The features in the order of a feature vector. The model artifact stores this list. */
export const FEATURE_NAMES = [
  'whole_rel',
  'whole_rrank',
  'whole_norm',
  'whole_top1',
  'whole_gap',
  'whole_abs',
  'step_rel',
  'step_rrank',
  'step_norm',
  'step_top1_share',
  'step_top1_any',
  'step_gap',
  'step_abs',
  'cover_instruction',
  'cover_step',
  'cover_name',
  'namespace_support',
  'has_namespace',
  'steps',
  'single_step',
  'instruction_terms',
  'steps_same_top1',
  'example_vote',
  'best_step_action',
  'best_step_question',
  'best_step_context',
  'best_step_terms',
  'top1_of_action_step',
  'step_name_cover',
  'top1_name_cover',
  'top1_short',
  'top1_name_short',
] as const

export type FeatureName = (typeof FEATURE_NAMES)[number]

/** The features of a vector with or without the dense ones (a model's `features`). */
export function featureNames(dense: boolean): string[] {
  return dense ? [...FEATURE_NAMES, ...DENSE_FEATURE_NAMES] : [...FEATURE_NAMES]
}

export interface CandidateFeatures {
  id: string
  /** Values in FEATURE_NAMES order (then DENSE_FEATURE_NAMES' with a `dense` input). */
  values: number[]
  /** The tool's namespace (the learned count's set coherence reads it). */
  namespace?: string
}

interface ToolTerms {
  all: Set<string>
  /**
   * `all` as a bit set of SIGNATURE_BITS bits (bit `termBit(term)` of each term), in one small
   * typed array: a term whose bit is clear is not in `all`, so most lookups of a request's terms
   * (which miss) read these 64 bytes instead of the Set's hash table, scattered over the heap.
   */
  signature: Uint32Array
  name: string[]
  namespace: string | undefined
}

const SIGNATURE_BITS = 512

/** A term's bit in a signature (FNV-1a of its UTF-16 code units, as for ids). */
function termBit(term: string): number {
  return fnv1a(term) % SIGNATURE_BITS
}

/** Whether `terms` (a tool's `all` and `signature`) holds `term`, whose bit is `bit`. */
function holds(terms: ToolTerms, term: string, bit: number): boolean {
  return (terms.signature[bit >>> 5] & (1 << (bit & 31))) !== 0 && terms.all.has(term)
}

function deriveToolTerms(tool: Tool): ToolTerms {
  const text = [tool.name, tool.description, parameterText(tool.parameters), tool.namespace ?? '']
  const all = new Set(tokenize(text.join(' ')))
  const signature = new Uint32Array(SIGNATURE_BITS / 32)
  for (const term of all) {
    const bit = termBit(term)
    signature[bit >>> 5] |= 1 << (bit & 31)
  }
  return {
    all,
    signature,
    name: [...new Set(tokenize(tool.name))],
    namespace: tool.namespace,
  }
}

const termCache = new WeakMap<Tool, ToolTerms>()
const termMemo = new ToolMemo(deriveToolTerms)

/** A candidate's terms: per library version when the input names its library, else per tool object. */
function toolTerms(input: FeatureInput, id: string, position?: number): ToolTerms {
  if (input.library) return termMemo.get(input.library, id, position)
  const tool = input.tool(id)
  let terms = termCache.get(tool)
  if (terms === undefined) termCache.set(tool, (terms = deriveToolTerms(tool)))
  return terms
}

function coverage(terms: readonly string[], inside: ReadonlySet<string>): number {
  if (terms.length === 0) return 0
  let hit = 0
  for (const term of terms) if (inside.has(term)) hit += 1
  return hit / terms.length
}

/** Rank of every id in a list (its first place), and the list's first two scores. */
interface ListView {
  rank: Map<string, number>
  candidates: readonly ScoredId[]
  top: number
  second: number
  terms: number
}

/** `terms`: the text's distinct terms (tokenised once by the caller). */
function viewOf(candidates: readonly ScoredId[], terms: number): ListView {
  const rank = new Map<string, number>()
  for (let index = 0; index < candidates.length; index += 1) {
    const id = candidates[index].id
    if (!rank.has(id)) rank.set(id, index)
  }
  return {
    rank,
    candidates,
    top: candidates[0]?.score ?? 0,
    second: candidates[1]?.score ?? 0,
    terms: Math.max(1, terms),
  }
}

/** Relative gap: the top candidate's lead over the second, others' distance below the top (≤ 0). */
function gapOf(view: ListView, rank: number, score: number): number {
  if (view.top <= 0) return 0
  return rank === 0 ? (view.top - view.second) / view.top : (score - view.top) / view.top
}

const NAMESPACE_CAP = 3

/** Clauses that talk about the user rather than ask ("I'm planning…", "My team is…"). */
const CONTEXT_OPENER = /^(?:i'm|i am|i've|i have|i was|we're|we are|we have|my|our)\b/iu

/** Features of every distinct candidate of the instruction (whole list first, then steps). */
export function extractCandidateFeatures(input: FeatureInput): CandidateFeatures[] {
  const instructionSet = new Set(tokenizeQuery(input.instruction))
  const instructionTerms = [...instructionSet]
  const instructionBits = instructionTerms.map(termBit)
  const instructionPosition = new Map(instructionTerms.map((term, position) => [term, position]))
  const whole = viewOf(input.whole, instructionSet.size)
  const steps = input.steps.map((step) => {
    const text = step.text.trim()
    const termSet = new Set(tokenizeQuery(step.text))
    const terms = [...termSet]
    return {
      view: viewOf(step.candidates, termSet.size),
      terms,
      // Where each term is among the instruction's (-1: not there): its hit is then read from
      // the candidate's instruction hits instead of looked up again.
      positions: terms.map((term) => instructionPosition.get(term) ?? -1),
      bits: terms.map(termBit),
      termSet,
      action: startsWithAction(text) ? 1 : 0,
      question: text.endsWith('?') ? 1 : 0,
      context: CONTEXT_OPENER.test(text) ? 1 : 0,
    }
  })
  // Per candidate: which instruction terms its text holds (reused for every candidate).
  const hits = new Uint8Array(instructionTerms.length)
  const stepCoverage = (step: (typeof steps)[number], tool: ToolTerms): number => {
    const { terms, positions, bits } = step
    if (terms.length === 0) return 0
    let hit = 0
    for (let at = 0; at < terms.length; at += 1) {
      const position = positions[at]
      if (position >= 0 ? hits[position] === 1 : holds(tool, terms[at], bits[at])) hit += 1
    }
    return hit / terms.length
  }

  const ids: string[] = []
  const positions: Array<number | undefined> = []
  const seen = new Set<string>()
  const add = ({ id, position }: ScoredId) => {
    if (!seen.has(id)) {
      seen.add(id)
      ids.push(id)
      positions.push(position)
    }
  }
  for (const candidate of input.whole) add(candidate)
  for (const step of input.steps) for (const candidate of step.candidates) add(candidate)

  // Tools near the top of some list, by namespace: ToolBench multi-tool requests mostly use APIs
  // of one tool, MCP requests several tools of one server.
  const strongByNamespace = new Map<string, Set<string>>()
  const strong = (view: ListView) => {
    for (const [id, rank] of view.rank) {
      if (rank >= 3) continue
      const namespace = toolTerms(input, id, view.candidates[rank].position).namespace
      if (!namespace) continue
      let set = strongByNamespace.get(namespace)
      if (set === undefined) strongByNamespace.set(namespace, (set = new Set()))
      set.add(id)
    }
  }
  strong(whole)
  for (const step of steps) strong(step.view)

  const top1s = input.steps.map((step) => step.candidates[0]?.id)
  let samePairs = 0
  let pairs = 0
  for (let a = 0; a < top1s.length; a += 1) {
    for (let b = a + 1; b < top1s.length; b += 1) {
      pairs += 1
      if (top1s[a] !== undefined && top1s[a] === top1s[b]) samePairs += 1
    }
  }
  const stepsSameTop1 = pairs === 0 ? 0 : samePairs / pairs
  const stepCount = Math.max(1, input.steps.length)
  // 1 for a one-word request, 0 from 30 distinct terms on: short explicit requests name their
  // tools, long narrative ones mostly do not.
  const shortness = Math.max(0, 1 - instructionTerms.length / 30)
  let dense: number[][] | undefined
  if (input.dense) {
    const slotOf = new Map(ids.map((id, at) => [id, at]))
    dense = denseSlotValues(
      input.dense,
      input.instruction,
      input.steps.map((step) => ({
        text: step.text,
        slots: step.candidates.map((candidate) => slotOf.get(candidate.id)!),
      })),
      ids,
      positions,
      ids.map((_id, at) => at),
    )
  }

  return ids.map((id, at) => {
    const terms = toolTerms(input, id, positions[at])
    let instructionHits = 0
    for (let position = 0; position < instructionTerms.length; position += 1) {
      const hit = holds(terms, instructionTerms[position], instructionBits[position]) ? 1 : 0
      hits[position] = hit
      instructionHits += hit
    }
    const wholeRank = whole.rank.get(id)
    const wholeScore = wholeRank === undefined ? 0 : whole.candidates[wholeRank].score
    let stepRel = 0
    let stepRrank = 0
    let stepNorm = 0
    let stepAbs = 0
    let top1 = 0
    let stepGap = -1
    let coverStep = 0
    let bestStep: (typeof steps)[number] | undefined
    let bestStepRank = Number.POSITIVE_INFINITY
    let top1OfAction = 0
    let stepNameCover = 0
    let top1NameCover = 0
    for (const step of steps) {
      const rank = step.view.rank.get(id)
      if (rank === undefined) continue
      if (rank < bestStepRank) {
        bestStepRank = rank
        bestStep = step
      }
      if (rank === 0 && step.action === 1) top1OfAction = 1
      const score = step.view.candidates[rank].score
      if (step.view.top > 0) stepRel = Math.max(stepRel, score / step.view.top)
      stepRrank = Math.max(stepRrank, 1 / (1 + rank))
      stepNorm = Math.max(stepNorm, score / step.view.terms)
      stepAbs = Math.max(stepAbs, score)
      if (rank === 0) top1 += 1
      stepGap = Math.max(stepGap, gapOf(step.view, rank, score))
      coverStep = Math.max(coverStep, stepCoverage(step, terms))
      const nameCover = coverage(terms.name, step.termSet)
      stepNameCover = Math.max(stepNameCover, nameCover)
      if (rank === 0) top1NameCover = Math.max(top1NameCover, nameCover)
    }
    const namespace = terms.namespace
    const strongOfNamespace = namespace ? strongByNamespace.get(namespace) : undefined
    const support = strongOfNamespace
      ? strongOfNamespace.size - (strongOfNamespace.has(id) ? 1 : 0)
      : 0
    const values = [
      wholeRank === undefined || whole.top <= 0 ? 0 : wholeScore / whole.top,
      wholeRank === undefined ? 0 : 1 / (1 + wholeRank),
      wholeScore / whole.terms,
      wholeRank === 0 ? 1 : 0,
      wholeRank === undefined ? -1 : gapOf(whole, wholeRank, wholeScore),
      Math.log1p(wholeScore),
      stepRel,
      stepRrank,
      stepNorm,
      top1 / stepCount,
      top1 > 0 ? 1 : 0,
      stepGap,
      Math.log1p(stepAbs),
      instructionTerms.length === 0 ? 0 : instructionHits / instructionTerms.length,
      coverStep,
      coverage(terms.name, instructionSet),
      Math.min(support, NAMESPACE_CAP) / NAMESPACE_CAP,
      namespace ? 1 : 0,
      Math.min(stepCount, 8) / 8,
      stepCount === 1 ? 1 : 0,
      Math.log1p(instructionTerms.length),
      stepsSameTop1,
      input.exampleVotes?.get(id) ?? 0,
      bestStep?.action ?? 0,
      bestStep?.question ?? 0,
      bestStep?.context ?? 0,
      Math.log1p(bestStep?.terms.length ?? 0),
      top1OfAction,
      stepNameCover,
      top1NameCover,
      top1 > 0 ? shortness : 0,
      top1NameCover * shortness,
    ]
    if (dense) values.push(...dense[at])
    return { id, values, ...(namespace !== undefined && { namespace }) }
  })
}
