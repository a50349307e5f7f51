/**
 * How the pipeline uses a library's nearest-example memory:
 *
 * 1. **Set proposal.** The tool sets of the `neighbors` most similar examples are voted on (each
 *    set scores the summed similarity of the neighbours that used exactly it). When the closest
 *    example is at least `minSimilarity` alike, the winning set is the answer: past requests
 *    worded like this one needed these tools, and it also settles how many.
 *    Only in a library where that rule has been right on its own past requests: replayed on the
 *    library's examples (each against the others), its answers must have been right at least
 *    `minPrecision` of the time (see `memorySelfCheck`). A library whose every tool has one example
 *    (CRAFT, whose tools were each made from one problem; a new tool) fails it: a similar past
 *    request there is about another tool, so the memory abstains and examples never hurt.
 * 2. **Vote rescoring.** Otherwise each step's candidates are re-scored by the instruction's
 *    memory vote, `score × (1 + voteWeight × vote)`, so that among the step's candidates the
 *    tools similar requests used come first.
 *
 * Defaults chosen on training data only (`bench/examples-dev.ts`: held-out ToolPlanner G3 and
 * ToolLens training queries, the rest as examples); one default for every library.
 * @module
 */
import type { ExamplesConfig } from '../config/schema.ts'
import { runSteps, runStepsSliced, type Steps } from '../time-slicer.ts'
import {
  adoptToolCooccurrence,
  cachedToolCooccurrence,
  toolCooccurrence,
  toolCooccurrenceSliced,
  ToolCooccurrence,
  type CooccurrenceCounts,
} from './example-cooccurrence.ts'
import type { ExampleDenseSpace } from './example-dense-map.ts'
import {
  adoptWordPairs,
  bestNeighborSet,
  cachedWordPairs,
  ExampleMemory,
  withWordPairs,
  withWordPairsSliced,
  type ExampleNeighbor,
  type MemoryParts,
  type MemoryVote,
  type SetProposal,
} from './example-memory.ts'
import type { UsageExample } from './usage-example.ts'

export type { SetProposal } from './example-memory.ts'

/**
 * What the memory's use reads of a library's examples (`LibraryExamples` of library-examples.ts,
 * which prepares them with this module: named here by shape, not imported).
 */
export interface MemoryExamples {
  readonly memory: ExampleMemory
  readonly dense?: ExampleDenseSpace
}

export interface ExampleMemoryOptions {
  /** Neighbours whose tool sets are voted on for the set proposal. Default 5. */
  neighbors: number
  /** Cosine similarity (0-1) the closest example needs for its vote to decide the set. Default 0.4. */
  minSimilarity: number
  /**
   * Neighbours that must name exactly the winning set, unless the closest example is at least
   * `aloneSimilarity` alike. One past example is weak evidence: a library whose examples each
   * name a different tool would otherwise answer with the nearest example's (wrong) tool. Default 2.
   */
  minAgreement: number
  /** Similarity at which the closest example decides alone (a near-paraphrase). Default 0.6. */
  aloneSimilarity: number
  /**
   * Share of right answers (exact tool set, add-one smoothed: `selfCheckPrecision`) the set
   * proposal needs when replayed on the library's own examples, each against the others, before
   * it may answer requests; 0 turns the check off.
   * Default 0.25: a floor against libraries where similar past requests are about other tools
   * (each tool one example: the replay is right ~never), well below what a memory that repeats
   * requests scores (36-45% even where the pipeline alone gets 15%: ToolPlanner training queries,
   * TorchHub); the memory's answers beat the pipeline's there, so a fraction of right ones suffices.
   */
  minPrecision: number
  /**
   * Weight of the memory vote when re-scoring step candidates; 0 turns it off. Default 0: on the
   * held-out training queries it moved exact match by less than a point (kept as a knob, and the
   * vote as a feature for learned rerankers).
   */
  voteWeight: number
  /** Neighbours that vote when re-scoring. Default 10. */
  voteNeighbors: number
}

export const DEFAULT_EXAMPLE_MEMORY_OPTIONS: Readonly<ExampleMemoryOptions> = {
  neighbors: 5,
  minSimilarity: 0.4,
  minAgreement: 2,
  aloneSimilarity: 0.6,
  minPrecision: 0.25,
  voteWeight: 0,
  voteNeighbors: 10,
}

/** The pipeline's `examples` option for a library: undefined without examples or with `memory: false`. */
export function exampleMemoryFor(
  examples: MemoryExamples | undefined,
  config: ExamplesConfig,
): { memory: ExampleMemory; options: ExampleMemoryOptions; dense?: ExampleDenseSpace } | undefined {
  if (!examples || !config.memory || examples.memory.size === 0) return undefined
  return {
    memory: examples.memory,
    // The memory's own fields of the section, not the rest of it.
    options: {
      neighbors: config.neighbors,
      minSimilarity: config.minSimilarity,
      minAgreement: config.minAgreement,
      aloneSimilarity: config.aloneSimilarity,
      minPrecision: config.minPrecision,
      voteWeight: config.voteWeight,
      voteNeighbors: config.voteNeighbors,
    },
    ...(examples.dense && { dense: examples.dense }),
  }
}

/**
 * Runs the memory's self-check for these settings and builds its tool co-occurrence and word-pair
 * memory ahead of requests (all are cached per memory), so the first request after an example
 * write doesn't pay for them. A no-op without examples, with `memory: false`, or (the
 * co-occurrence and word pairs) when the memory fails its self-check. Synchronous: what the
 * library registry runs on a version nothing prepared (`prepareExampleMemorySliced` did it
 * already for every version built or loaded by the library lifecycle, so it then costs nothing).
 */
export function prepareExampleMemory(
  examples: MemoryExamples | undefined,
  config: ExamplesConfig,
): void {
  const resolved = exampleMemoryFor(examples, config)
  if (!resolved) return
  if (resolved.options.minPrecision > 0) memorySelfCheck(resolved.memory, resolved.options)
  if (memoryTrusted(resolved.memory, resolved.options)) {
    // What the example-aware decision reads, where it may run.
    toolCooccurrence(resolved.memory)
    withWordPairs(resolved.memory)
  }
}

/**
 * `prepareExampleMemory`, yielding to the event loop every few milliseconds: a library's examples
 * are prepared while the service keeps answering (at 16.8k examples the preparation is ~2 s of
 * CPU). Throws the signal's reason once aborted (nothing is served from a half-prepared memory:
 * the caches are only filled with finished results).
 */
export async function prepareExampleMemorySliced(
  examples: MemoryExamples | undefined,
  config: ExamplesConfig,
  signal?: AbortSignal,
): Promise<void> {
  const resolved = exampleMemoryFor(examples, config)
  if (!resolved) return
  if (resolved.options.minPrecision > 0)
    await memorySelfCheckSliced(resolved.memory, resolved.options, signal)
  if (memoryTrusted(resolved.memory, resolved.options)) {
    await toolCooccurrenceSliced(resolved.memory, signal)
    await withWordPairsSliced(resolved.memory, signal)
  }
}

/**
 * A memory and what `prepareExampleMemory` made of it, as transferable parts (typed arrays, one
 * string per memory, the co-occurrence's maps): what the build worker hands back
 * (build-worker.ts). `adoptPreparedMemory` makes the memory of them with its caches filled.
 */
export interface PreparedMemoryParts {
  readonly memory: MemoryParts
  readonly selfCheck?: MemorySelfCheck
  readonly cooccurrence?: CooccurrenceCounts
  readonly wordPairs?: MemoryParts
}

/** `memory`'s parts and what was prepared of it for `config` (`prepareExampleMemory`'s caches). */
export function preparedMemoryParts(
  memory: ExampleMemory,
  config: ExamplesConfig,
): PreparedMemoryParts {
  const resolved = exampleMemoryFor({ memory }, config)
  const selfCheck = resolved && cachedSelfCheck(memory, resolved.options)
  const cooccurrence = cachedToolCooccurrence(memory)?.counts
  const wordPairs = memory.wordPairs ? undefined : cachedWordPairs(memory)?.parts
  return {
    memory: memory.parts,
    ...(selfCheck && { selfCheck }),
    ...(cooccurrence && { cooccurrence }),
    ...(wordPairs && { wordPairs }),
  }
}

/**
 * The memory of `examples` made of `prepared` (`preparedMemoryParts` of a memory of the same
 * examples, in the same order, with the same `config`), its self-check, co-occurrence and
 * word-pair memory cached: `prepareExampleMemory` then finds everything done. Computes nothing
 * but a few map copies.
 */
export function adoptPreparedMemory(
  examples: readonly UsageExample[],
  prepared: PreparedMemoryParts,
  config: ExamplesConfig,
): ExampleMemory {
  const memory = ExampleMemory.fromParts(examples, prepared.memory)
  const resolved = exampleMemoryFor({ memory }, config)
  if (resolved && prepared.selfCheck) {
    const { proposed, right } = prepared.selfCheck
    cacheSelfCheck(memory, resolved.options, { proposed, right })
  }
  if (prepared.cooccurrence)
    adoptToolCooccurrence(memory, ToolCooccurrence.fromCounts(prepared.cooccurrence))
  if (prepared.wordPairs)
    adoptWordPairs(memory, ExampleMemory.fromParts(examples, prepared.wordPairs))
  return memory
}

type ProposalOptions = Pick<
  ExampleMemoryOptions,
  'neighbors' | 'minSimilarity' | 'minAgreement' | 'aloneSimilarity' | 'minPrecision'
>

/**
 * The tool set the nearest examples agree on, or undefined when none is similar enough, too few
 * agree, or the memory failed its self-check in this library (`minPrecision`).
 */
export function proposeToolSet(
  memory: ExampleMemory,
  instruction: string,
  options: ProposalOptions,
): SetProposal | undefined {
  const proposal = proposeFrom(memory.neighbors(instruction, options.neighbors), options)
  return proposal && memoryTrusted(memory, options) ? proposal : undefined
}

/**
 * Whether the memory passed its self-check in this library (always, with `minPrecision` 0): only
 * then may its neighbours decide anything (the set proposal, the example-aware decision).
 */
export function memoryTrusted(memory: ExampleMemory, options: ProposalOptions): boolean {
  return (
    options.minPrecision <= 0 ||
    selfCheckPrecision(memorySelfCheck(memory, options)) >= options.minPrecision
  )
}

function proposeFrom(
  neighbors: readonly ExampleNeighbor[],
  options: ProposalOptions,
): SetProposal | undefined {
  if (neighbors.length === 0 || neighbors[0].similarity < options.minSimilarity) return undefined
  const best = bestNeighborSet(neighbors)
  if (!best) return undefined
  const alone = neighbors[0].similarity >= options.aloneSimilarity
  return best.agreeing >= options.minAgreement || alone ? best : undefined
}

const setKey = (tools: readonly string[]) => [...tools].sort().join('\u0001')

/** Examples the self-check replays at most (evenly spaced over the library's examples). */
export const SELF_CHECK_EXAMPLES = 200

export interface MemorySelfCheck {
  /** Replayed examples the memory proposed a tool set for. */
  proposed: number
  /** Of those, proposals naming exactly the example's own tools. */
  right: number
}

/**
 * The self-check's share of right answers, add-one smoothed ((right + 1) / (proposed + 2)): with
 * little evidence it stays near 1/2, so a library with a handful of replayed answers is not
 * judged on one wrong one.
 */
export function selfCheckPrecision(check: MemorySelfCheck): number {
  return (check.right + 1) / (check.proposed + 2)
}

const selfChecks = new WeakMap<ExampleMemory, Map<string, MemorySelfCheck>>()

/**
 * The set proposal replayed on the library's own examples: each (at most SELF_CHECK_EXAMPLES,
 * evenly spaced) is asked of the memory without itself, and its proposal, if any, is compared
 * with the example's tools. Deterministic; computed once per memory and options (a memory is
 * rebuilt on every example write) and cached.
 */
export function memorySelfCheck(memory: ExampleMemory, options: ProposalOptions): MemorySelfCheck {
  return cachedSelfCheck(memory, options) ?? runSteps(replaySelfCheck(memory, options))
}

/** `memorySelfCheck`, yielding to the event loop between replayed examples; the same check. */
export async function memorySelfCheckSliced(
  memory: ExampleMemory,
  options: ProposalOptions,
  signal?: AbortSignal,
): Promise<MemorySelfCheck> {
  return (
    cachedSelfCheck(memory, options) ??
    (await runStepsSliced(replaySelfCheck(memory, options), signal))
  )
}

function* replaySelfCheck(memory: ExampleMemory, options: ProposalOptions): Steps<MemorySelfCheck> {
  const examples = memory.examples
  const replayed = Math.min(examples.length, SELF_CHECK_EXAMPLES)
  const check: MemorySelfCheck = { proposed: 0, right: 0 }
  for (let index = 0; index < replayed; index += 1) {
    const example = examples[Math.floor((index * examples.length) / replayed)]
    const neighbors = memory
      .neighbors(example.instruction, options.neighbors + 1)
      .filter((neighbor) => neighbor.example !== example)
      .slice(0, options.neighbors)
    const proposal = proposeFrom(neighbors, options)
    yield
    if (!proposal) continue
    check.proposed += 1
    if (setKey(proposal.tools) === setKey(example.tools)) check.right += 1
  }
  return cacheSelfCheck(memory, options, check)
}

/** Caches `check` for the memory and settings unless one is cached already; returns the cached one. */
function cacheSelfCheck(
  memory: ExampleMemory,
  options: ProposalOptions,
  check: MemorySelfCheck,
): MemorySelfCheck {
  const cached = cachedSelfCheck(memory, options)
  if (cached) return cached
  let byOptions = selfChecks.get(memory)
  if (!byOptions) selfChecks.set(memory, (byOptions = new Map()))
  byOptions.set(selfCheckKey(options), check)
  return check
}

/** The self-check already computed for this memory and settings, if any (computes nothing). */
export function cachedSelfCheck(
  memory: ExampleMemory,
  options: ProposalOptions,
): MemorySelfCheck | undefined {
  return selfChecks.get(memory)?.get(selfCheckKey(options))
}

const selfCheckKey = (options: ProposalOptions) =>
  [options.neighbors, options.minSimilarity, options.minAgreement, options.aloneSimilarity].join(
    '/',
  )

/** Candidates re-scored by the vote (`score × (1 + weight × vote)`), best first, ties by id. */
export function rescoreByVote<T extends { id: string; score: number }>(
  candidates: readonly T[],
  vote: MemoryVote,
  weight: number,
): T[] {
  if (weight <= 0 || vote.scores.size === 0) return [...candidates]
  return candidates
    .map((candidate) => {
      const boost = vote.scores.get(candidate.id) ?? 0
      const score = Math.round(candidate.score * (1 + weight * boost) * 1e6) / 1e6
      return { ...candidate, score }
    })
    .sort((a, b) => b.score - a.score || (a.id < b.id ? -1 : a.id > b.id ? 1 : 0))
}
