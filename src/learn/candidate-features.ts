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
import { candidateRecords } from '../library/candidate-records.ts'
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
   * typed array: a term whose bit is clear is not in `all` (the lookups of `holds`).
   */
  signature: Uint32Array
  /**
   * The term numbers (`termNumbers`) of `name`, then of `all`, in one typed array: what a request
   * reads of a candidate to find which of its terms the candidate holds, without touching the
   * Set, the names or their strings (each a cache miss on a busy server). Undefined when the
   * numbers ran out for one of its terms: `holds` then answers for this tool.
   */
  numbers: Int32Array | undefined
  /** How many `numbers` are the name's (`name.length`, kept beside `numbers`). */
  names: number
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

/**
 * A number for every term of a derived tool, process-wide and never reused, so that one number
 * means one term for every library version. Up to `termNumbersLimit` numbers; a tool with a term
 * past that has no `numbers`.
 */
const termNumbers = new Map<string, number>()
let termNumbersLimit = 1 << 20

/**
 * Sets how many terms get numbers (default 2^20, about 50-100 MiB of terms at most) and returns
 * the previous limit. For tests of the tools beyond it.
 */
export function setTermNumbersLimit(limit: number): number {
  const previous = termNumbersLimit
  termNumbersLimit = limit
  return previous
}

/** The numbers of `name` then of `all` (see ToolTerms.numbers); undefined when they ran out. */
function numbersOf(name: readonly string[], all: ReadonlySet<string>): Int32Array | undefined {
  const numbers = new Int32Array(name.length + all.size)
  let at = 0
  for (const terms of [name, all]) {
    for (const term of terms) {
      let number = termNumbers.get(term)
      if (number === undefined) {
        if (termNumbers.size >= termNumbersLimit) return undefined
        termNumbers.set(term, (number = termNumbers.size))
      }
      numbers[at++] = number
    }
  }
  return numbers
}

/**
 * The current request's terms by number: `marks[2n]` is the request's stamp when the request has
 * term n, and `marks[2n + 1]` is then its place among the request's terms (one array, so one
 * cache line answers both). Shared by every request (extraction is synchronous), grown with the
 * numbers (16 bytes per number); a stamp instead of clearing the table between requests.
 */
const markedTerms = { marks: new Int32Array(0), stamp: 0 }

/** Marks `terms` (a request's, by place) in `markedTerms` and returns their stamp. */
function markRequestTerms(terms: readonly string[]): number {
  if (markedTerms.marks.length < 2 * termNumbers.size) {
    const marks = new Int32Array(2 * Math.max(1024, 2 * termNumbers.size))
    marks.set(markedTerms.marks)
    markedTerms.marks = marks
  }
  if (markedTerms.stamp === 0x7fffffff) {
    markedTerms.marks.fill(0)
    markedTerms.stamp = 0
  }
  const stamp = (markedTerms.stamp += 1)
  const { marks } = markedTerms
  for (let place = 0; place < terms.length; place += 1) {
    const number = termNumbers.get(terms[place])
    if (number === undefined) continue
    marks[2 * number] = stamp
    marks[2 * number + 1] = place
  }
  return stamp
}

function deriveToolTerms(tool: Tool): ToolTerms {
  const text = [tool.name, tool.description, parameterText(tool.parameters), tool.namespace ?? '']
  const all = new Set(tokenize(text.join(' ')))
  const signature = new Uint32Array(SIGNATURE_BITS / 32)
  for (const term of all) {
    const bit = termBit(term)
    signature[bit >>> 5] |= 1 << (bit & 31)
  }
  const name = [...new Set(tokenize(tool.name))]
  const numbers = numbersOf(name, all)
  return { all, signature, numbers, names: name.length, name, namespace: tool.namespace }
}

const termCache = new WeakMap<Tool, ToolTerms>()

/**
 * The term numbers of a library version's tools, by position, in one typed array: what a request
 * reads of a candidate is one block of `data` found from `start`, a few adjacent cache lines,
 * instead of a record, a terms object, a typed array and its separate backing store (each a
 * cache miss on a busy server), and a derived tool leaves no Set or arrays of its own on the heap.
 */
interface TermPool {
  /** Blocks `[names, count, …numbers]`: the name's numbers, then those of all the tool's terms. */
  data: Int32Array
  used: number
  /** Per position: 1 + its block's start in `data`; 0 not derived yet; -1 no numbers (`sets`). */
  start: Int32Array
  /** Tools whose terms ran out of numbers (past `termNumbersLimit`), by position. */
  sets: Map<number, ToolTerms>
}

const termPools = new WeakMap<ToolLibrary, TermPool>()

/**
 * Int32 values a library's pool holds before it starts over (16 MiB, about 140k tools' blocks):
 * the pool keeps every tool a request has read, so a library far larger than that, read all over,
 * is derived again now and then instead of growing without bound.
 */
let termPoolLimit = 1 << 22

/** Sets `termPoolLimit` and returns the previous one. For tests of a pool that starts over. */
export function setTermPoolLimit(limit: number): number {
  const previous = termPoolLimit
  termPoolLimit = limit
  return previous
}

function termPoolOf(library: ToolLibrary): TermPool {
  let pool = termPools.get(library)
  if (pool === undefined) {
    pool = {
      data: new Int32Array(4096),
      used: 0,
      start: new Int32Array(library.size),
      sets: new Map(),
    }
    termPools.set(library, pool)
  }
  return pool
}

/** Derives the tool at `position` into `pool` (a block, or a `sets` entry without numbers). */
function deriveIntoPool(pool: TermPool, tool: Tool, position: number): void {
  const terms = deriveToolTerms(tool)
  const numbers = terms.numbers
  if (numbers === undefined) {
    pool.sets.set(position, terms)
    pool.start[position] = -1
    return
  }
  const size = 2 + numbers.length
  if (pool.used + size > pool.data.length) {
    const data = new Int32Array(Math.max(2 * pool.data.length, pool.used + size))
    data.set(pool.data.subarray(0, pool.used))
    pool.data = data
  }
  const at = pool.used
  pool.data[at] = terms.names
  pool.data[at + 1] = numbers.length
  pool.data.set(numbers, at + 2)
  pool.used += size
  pool.start[position] = at + 1
}

function coverage(terms: readonly string[], inside: ReadonlySet<string>): number {
  if (terms.length === 0) return 0
  let hit = 0
  for (const term of terms) if (inside.has(term)) hit += 1
  return hit / terms.length
}

/** Rank of every candidate in a list (its first place), and the list's first two scores. */
interface ListView {
  /** Each candidate's first place in the list, by slot (the extractor's numbering); -1: absent. */
  rank: Int32Array
  /** The slot of each place in the list. */
  slots: Int32Array
  candidates: readonly ScoredId[]
  top: number
  second: number
  terms: number
}

/**
 * `terms`: the text's distinct terms (tokenised once by the caller); `slotOf`: every candidate's
 * slot, `count` of them.
 */
function viewOf(
  candidates: readonly ScoredId[],
  terms: number,
  slotOf: ReadonlyMap<string, number>,
  count: number,
): ListView {
  const rank = new Int32Array(count).fill(-1)
  const slots = new Int32Array(candidates.length)
  for (let index = 0; index < candidates.length; index += 1) {
    const slot = slotOf.get(candidates[index].id)!
    slots[index] = slot
    if (rank[slot] < 0) rank[slot] = index
  }
  return {
    rank,
    slots,
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
  // Every distinct candidate's slot: its place in `ids` (the whole list's first, then the steps').
  const ids: string[] = []
  const positions: Array<number | undefined> = []
  const slotOfId = new Map<string, number>()
  const add = ({ id, position }: ScoredId) => {
    if (!slotOfId.has(id)) {
      slotOfId.set(id, ids.length)
      ids.push(id)
      positions.push(position)
    }
  }
  for (const candidate of input.whole) add(candidate)
  for (const step of input.steps) for (const candidate of step.candidates) add(candidate)
  const count = ids.length
  const instructionSet = new Set(tokenizeQuery(input.instruction))
  const instructionTerms = [...instructionSet]
  // The request's terms: the instruction's, then the steps' other ones (a step's words are the
  // instruction's, but a clause cut inside a word can make a term of its own).
  const requestTerms = [...instructionTerms]
  const placeOf = new Map(instructionTerms.map((term, place) => [term, place]))
  const whole = viewOf(input.whole, instructionSet.size, slotOfId, count)
  const steps = input.steps.map((step) => {
    const text = step.text.trim()
    const termSet = new Set(tokenizeQuery(step.text))
    const places: number[] = []
    for (const term of termSet) {
      let place = placeOf.get(term)
      if (place === undefined) {
        placeOf.set(term, (place = requestTerms.length))
        requestTerms.push(term)
      }
      places.push(place)
    }
    return {
      view: viewOf(step.candidates, termSet.size, slotOfId, count),
      // Each term's place among the request's terms: its hit is read from the candidate's hits.
      places,
      termSet,
      action: startsWithAction(text) ? 1 : 0,
      question: text.endsWith('?') ? 1 : 0,
      context: CONTEXT_OPENER.test(text) ? 1 : 0,
    }
  })
  // Per candidate: which of the request's terms its text holds (reused for every candidate).
  const hits = new Uint8Array(requestTerms.length)
  const stepCoverage = (step: (typeof steps)[number]): number => {
    const { places } = step
    if (places.length === 0) return 0
    let hit = 0
    for (let at = 0; at < places.length; at += 1) hit += hits[places[at]]
    return hit / places.length
  }

  // Every candidate's terms first: deriving a tool numbers its new terms, which the request's
  // term table below must know. A candidate's numbers are `blocks[at]` from `firsts[at]` (the
  // name's `names[at]` first) to `ends[at]`; a tool without numbers has its terms in `sets[at]`.
  const blocks: Int32Array[] = new Array(count)
  const firsts = new Int32Array(count)
  const names = new Int32Array(count)
  const ends = new Int32Array(count)
  const sets: Array<ToolTerms | undefined> = new Array(count)
  const namespaces: Array<string | undefined> = new Array(count)
  const { library } = input
  const pool = library ? termPoolOf(library) : undefined
  if (pool !== undefined && pool.used > termPoolLimit) {
    pool.start.fill(0)
    pool.used = 0
    pool.sets.clear()
  }
  for (let at = 0; at < count; at += 1) {
    if (pool !== undefined) {
      const record = candidateRecords.get(library!, ids[at], positions[at])
      const position = record.position
      namespaces[at] = record.namespace
      if (pool.start[position] === 0) deriveIntoPool(pool, library!.at(position), position)
      const start = pool.start[position] - 1
      if (start < 0) {
        sets[at] = pool.sets.get(position)
        continue
      }
      // Read after deriving: a derivation may have moved the pool to a larger array.
      const data = pool.data
      blocks[at] = data
      names[at] = data[start]
      firsts[at] = start + 2
      ends[at] = start + 2 + data[start + 1]
      continue
    }
    const tool = input.tool(ids[at])
    let terms = termCache.get(tool)
    if (terms === undefined) termCache.set(tool, (terms = deriveToolTerms(tool)))
    namespaces[at] = terms.namespace
    if (terms.numbers === undefined) {
      sets[at] = terms
      continue
    }
    blocks[at] = terms.numbers
    names[at] = terms.names
    firsts[at] = 0
    ends[at] = terms.numbers.length
  }
  const stamp = markRequestTerms(requestTerms)
  const { marks } = markedTerms
  /** The place of term `number` among the request's terms, -1 when the request has none. */
  const placeOfNumber = (number: number) =>
    marks[2 * number] === stamp ? marks[2 * number + 1] : -1
  // Which of the request's terms each step has (by place), for the name coverage below.
  const members = steps.map((step) => {
    const member = new Uint8Array(requestTerms.length)
    for (const place of step.places) member[place] = 1
    return member
  })
  /**
   * Share of candidate `slot`'s name terms among the instruction's terms (`member` undefined) or a
   * step's (`set`: the same terms, for a tool without term numbers).
   */
  const nameCoverage = (
    slot: number,
    member: Uint8Array | undefined,
    set: ReadonlySet<string>,
  ): number => {
    const terms = sets[slot]
    if (terms !== undefined) return coverage(terms.name, set)
    const count = names[slot]
    if (count === 0) return 0
    const numbers = blocks[slot]
    const first = firsts[slot]
    let hit = 0
    for (let at = first; at < first + count; at += 1) {
      const place = placeOfNumber(numbers[at])
      if (
        place >= 0 &&
        (member === undefined ? place < instructionTerms.length : member[place] === 1)
      )
        hit += 1
    }
    return hit / count
  }
  let requestBits: number[] | undefined
  /** Sets `hits` to the request's terms that candidate `slot`'s text holds. */
  const findHits = (slot: number) => {
    hits.fill(0)
    const terms = sets[slot]
    if (terms === undefined) {
      const numbers = blocks[slot]
      for (let at = firsts[slot] + names[slot]; at < ends[slot]; at += 1) {
        const place = placeOfNumber(numbers[at])
        if (place >= 0) hits[place] = 1
      }
    } else {
      requestBits ??= requestTerms.map(termBit)
      for (let place = 0; place < requestTerms.length; place += 1)
        hits[place] = holds(terms, requestTerms[place], requestBits[place]) ? 1 : 0
    }
  }

  // Tools near the top of some list, by namespace: ToolBench multi-tool requests mostly use APIs
  // of one tool, MCP requests several tools of one server.
  const strongByNamespace = new Map<string, Set<string>>()
  const strong = (view: ListView) => {
    // The list's first three places (an id's first place only).
    for (let index = 0; index < Math.min(3, view.slots.length); index += 1) {
      const slot = view.slots[index]
      if (view.rank[slot] !== index) continue
      const namespace = namespaces[slot]
      if (!namespace) continue
      let set = strongByNamespace.get(namespace)
      if (set === undefined) strongByNamespace.set(namespace, (set = new Set()))
      set.add(ids[slot])
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
    dense = denseSlotValues(
      input.dense,
      input.instruction,
      input.steps.map((step, index) => ({ text: step.text, slots: steps[index].view.slots })),
      ids,
      positions,
      ids.map((_id, at) => at),
    )
  }

  return ids.map((id, at) => {
    findHits(at)
    let instructionHits = 0
    for (let place = 0; place < instructionTerms.length; place += 1) instructionHits += hits[place]
    const wholeAt = whole.rank[at]
    const wholeRank = wholeAt < 0 ? undefined : wholeAt
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
    for (let stepAt = 0; stepAt < steps.length; stepAt += 1) {
      const step = steps[stepAt]
      const rank = step.view.rank[at]
      if (rank < 0) continue
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
      coverStep = Math.max(coverStep, stepCoverage(step))
      const nameCover = nameCoverage(at, members[stepAt], step.termSet)
      stepNameCover = Math.max(stepNameCover, nameCover)
      if (rank === 0) top1NameCover = Math.max(top1NameCover, nameCover)
    }
    const namespace = namespaces[at]
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
      nameCoverage(at, undefined, instructionSet),
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
      Math.log1p(bestStep?.places.length ?? 0),
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
