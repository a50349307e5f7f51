/**
 * selectTools(): plan → retrieve per step → rerank → select per step → union. Only
 * `ToolselService` calls it: HTTP, MCP, the CLI and the benchmark go through the service, whose
 * resolver turns their requests into these options.
 * @module
 */
import { ToolselError, throwIfAborted } from './errors.ts'
import { lazySignal, retrieveOptions, type AbortInput } from './lazy-abort.ts'
import { withWordPairs, type ExampleMemory } from './examples/example-memory.ts'
import type { ExampleDenseSpace } from './examples/example-dense-map.ts'
import { toolCooccurrence } from './examples/example-cooccurrence.ts'
import {
  decideWithExamples,
  DECISION_NEIGHBORS,
  DENSE_POOL,
  instructionWords,
  readsDense,
} from './examples/example-decision.ts'
import {
  memoryTrusted,
  proposeToolSet,
  rescoreByVote,
  type ExampleMemoryOptions,
} from './examples/memory-selection.ts'
import type { Tool } from './library/tool.ts'
import type { ToolLibrary } from './library/tool-library.ts'
import { candidateRecords } from './library/candidate-records.ts'
import { RequestRetries } from './models/request-retries.ts'
import type {
  CandidateTool,
  Fallback,
  Planner,
  Reranker,
  Retriever,
  Selection,
  SelectionRequest,
  Selector,
  Usage,
} from './contracts.ts'

export interface SelectToolsOptions {
  library: ToolLibrary
  planner: Planner
  retriever: Retriever
  /** Reorders each step's candidates before selection. Default: none (the retriever's order). */
  reranker?: Reranker
  selector: Selector
  /** Candidates per step (the paper's K). */
  k: number
  /**
   * Retrieval threshold; `undefined` uses the selector's `retrievalMinScore` when it has one (the
   * learned selector decides acceptance itself), else the retriever's own (tau for BM25).
   */
  minScore?: number
  /** Add each candidate's features (`steps[].candidates[].features`) when the selector has them. */
  explain?: boolean
  /** Votes of the library's usage examples per tool id, for selectors that read them. */
  exampleVotes?: ReadonlyMap<string, number>
  /**
   * The caller's abort. A LazyAbort's AbortSignal is made only when a component reads
   * `options.signal` (lazy-abort.ts); the pipeline itself checks `aborted` between stages.
   */
  signal?: AbortInput
  /**
   * The library's nearest-example memory (its usage examples): step candidates are re-scored by
   * its vote, and when a past example is similar enough its tool set is the answer (see
   * examples/memory-selection.ts). Absent: no examples, nothing changes.
   */
  examples?: { memory: ExampleMemory; options: ExampleMemoryOptions; dense?: ExampleDenseSpace }
}

/**
 * The key of a step candidate's library position (`StepCandidate[CANDIDATE_POSITION]`). A symbol:
 * `JSON.stringify`, `Object.keys` and spreads into JSON leave it out, so no answer shows it.
 */
export const CANDIDATE_POSITION: unique symbol = Symbol('toolsel.candidatePosition')

export interface StepCandidate {
  id: string
  name: string
  score: number
  /** With `explain`: what the selector judged the candidate by (learned selector: its features). */
  features?: Record<string, number>
  /**
   * The tool's position in the library when the retriever gave one (`CandidateTool.position`; a
   * hint, as there): the answer's writer finds the candidate's kept JSON by it (one array read
   * where a map lookup by id was its largest cost; server/select-response.ts `CandidatePrefixes`).
   */
  [CANDIDATE_POSITION]?: number
}

export interface StepResult {
  /** The sub-step text the planner produced. */
  text: string
  /** What the retriever returned for it, best first. */
  candidates: StepCandidate[]
  /** The selected tool id, or `null` when the selector chose none. */
  selected: string | null
  /** True for the step the pipeline added with the whole instruction for the selector. */
  whole?: boolean
}

export interface StageTimings {
  planMs: number
  retrieveMs: number
  rerankMs: number
  selectMs: number
  totalMs: number
}

export interface SelectToolsResult {
  /** The union of the selected tools, de-duplicated, in step order. */
  tools: Tool[]
  steps: StepResult[]
  timings: StageTimings
  components: {
    library: string
    planner: string
    retriever: string
    reranker: string
    selector: string
    /** Components that failed and were replaced for this request (empty when none). */
    fallbacks: Fallback[]
  }
  /** Tokens used by model-backed components (zero for rule-based ones). */
  usage: Usage
  /**
   * Present when the library has usage examples: the closest example's similarity (0-1), and
   * whether the nearest examples' tool set was taken as the answer (`tools` then comes from them,
   * not from the steps' selections); `decided` when the example-aware decision chose the answer
   * (among the selector's set, the memory's and the best-scored tools of both:
   * examples/example-decision.ts); `applied` is then whether it chose the memory's proposal.
   */
  examples?: { similarity: number; applied: boolean; decided?: true }
}

const round = (milliseconds: number) => Math.round(milliseconds * 1000) / 1000

/**
 * Runs Plan-Retrieve-(Rerank-)Select for one instruction with the given components.
 *
 * @example
 * ```ts
 * const result = await selectTools('find a flight to Lisbon and add it to my calendar', {
 *   library: indexed.library,
 *   planner: new RulePlanner(),
 *   retriever: requireRetriever(indexed, 'bm25'),
 *   selector: new Top1Selector(),
 *   k: 15,
 * })
 * result.tools.map((tool) => tool.id) // ['flights.search_flights', 'calendar.create_event']
 * ```
 */
export async function selectTools(
  instruction: string,
  options: SelectToolsOptions,
): Promise<SelectToolsResult> {
  const { library, planner, retriever, reranker, selector, signal: abort } = options
  const started = performance.now()
  throwIfAborted(abort)
  // The model calls of one request share its retries (models.openai.maxRetriesPerRequest).
  const retries = new RequestRetries()

  const plan = await planner.plan(instruction, lazySignal(abort, retries))
  const planned = performance.now()

  // A selector that judges the steps together may also want the unsplit instruction.
  const whole = instruction.trim()
  const addWhole =
    selector.wholeInstructionStep === true && !(plan.steps.length === 1 && plan.steps[0] === whole)
  const texts = addWhole ? [...plan.steps, whole] : plan.steps
  const minScore = options.minScore ?? selector.retrievalMinScore
  throwIfAborted(abort)
  const stepOptions = retrieveOptions(retriever.synchronous, abort, { k: options.k, minScore })
  const retrieved = await Promise.all(texts.map((step) => retriever.retrieve(step, stepOptions)))
  const memory = options.examples
  const vote = memory?.memory.vote(instruction, { neighbors: memory.options.voteNeighbors })
  // The example-aware decision reads the selector's probabilities of every candidate.
  const decision = memory ? selector.exampleDecision : undefined
  const retrievedRequests: SelectionRequest[] = texts.map((step, index) => ({
    step,
    ...(addWhole && index === texts.length - 1 && { whole: true }),
    candidates: toCandidateTools(
      library,
      vote ? rescoreByVote(retrieved[index], vote, memory!.options.voteWeight) : retrieved[index],
    ),
  }))
  const retrievedAt = performance.now()

  throwIfAborted(abort)
  const requests = reranker
    ? await rerankRequests(reranker, retrievedRequests, abort)
    : retrievedRequests
  const rerankedAt = performance.now()

  throwIfAborted(abort)
  const selections = await selector.select(
    requests,
    Object.assign(lazySignal(abort, retries), {
      instruction,
      tool: (id: string) => library.require(id),
      library,
      explain: options.explain,
      exampleVotes: options.exampleVotes,
      ...(decision && { probabilities: true }),
    }),
  )
  const selectedAt = performance.now()

  const usage: Usage = { inputTokens: 0, outputTokens: 0 }
  const fallbacks: Fallback[] = plan.fallback ? [plan.fallback, ...(plan.chained ?? [])] : []
  addUsage(usage, plan.usage)
  const steps: StepResult[] = requests.map((request, index) => {
    const selection = selections[index]
    const allowed = request.candidates.some((candidate) => candidate.id === selection.toolId)
    if (selection.toolId !== null && !allowed) {
      throw new ToolselError(
        'SELECTION_OUTSIDE_CANDIDATES',
        `Selector "${selector.name}" chose "${selection.toolId}" for step "${request.step}", which is not one of its ${request.candidates.length} candidates.`,
        { details: { step: request.step, toolId: selection.toolId } },
      )
    }
    addUsage(usage, selection.usage)
    if (selection.fallback) fallbacks.push(selection.fallback, ...(selection.chained ?? []))
    return {
      text: request.step,
      candidates: request.candidates.map(({ id, name, score, position }) => {
        const features = options.explain ? selection.features?.[id] : undefined
        return features
          ? { id, name, score, features, [CANDIDATE_POSITION]: position }
          : { id, name, score, [CANDIDATE_POSITION]: position }
      }),
      selected: selection.toolId,
      ...(request.whole && { whole: true }),
    }
  })

  const chosen = new Set<string>()
  for (const step of steps) if (step.selected !== null) chosen.add(step.selected)
  const proposal = memory && proposeToolSet(memory.memory, instruction, memory.options)
  // In a library with enough examples whose memory passed its self-check, the example-aware
  // decision chooses among the selector's set, the memory's and the best-scored tools; otherwise
  // the memory's set, when it proposes one, replaces the selector's.
  const decided =
    decision &&
    chosen.size > 0 &&
    memory!.memory.size >= decision.minExamples &&
    memoryTrusted(memory!.memory, memory!.options)
      ? decideWithExamples(decision, {
          chosen: [...chosen],
          probabilities: selectionProbabilities(selections),
          stepTops: new Set(requests.flatMap((request) => request.candidates[0]?.id ?? [])),
          neighbors: withWordPairs(memory!.memory).neighbors(instruction, DECISION_NEIGHBORS),
          proposal: proposal?.tools,
          examples: memory!.memory.size,
          steps: plan.steps.length,
          words: instructionWords(instruction),
          namespaceOf: (id) => library.get(id)?.namespace,
          cooccurrence: toolCooccurrence(memory!.memory),
          ...(memory!.dense &&
            readsDense(decision) && { dense: memory!.dense.score(instruction, DENSE_POOL) }),
        })
      : undefined
  const answer = decided ?? proposal?.tools ?? [...chosen]
  const applied = proposal !== undefined && sameTools(answer, proposal.tools)
  const toolIds = answer.filter((id) => library.has(id))
  return {
    tools: toolIds.map((id) => library.require(id)),
    steps,
    timings: {
      planMs: round(planned - started),
      retrieveMs: round(retrievedAt - planned),
      rerankMs: round(rerankedAt - retrievedAt),
      selectMs: round(selectedAt - rerankedAt),
      totalMs: round(selectedAt - started),
    },
    components: {
      library: library.name,
      planner: plan.planner,
      retriever: retriever.name,
      reranker: reranker?.name ?? 'identity',
      selector: selector.name,
      fallbacks,
    },
    usage,
    ...(vote && {
      examples: {
        similarity: vote.topSimilarity,
        applied,
        ...(decided && { decided: true as const }),
      },
    }),
  }
}

/**
 * The reranked requests; a reranker may reorder and drop candidates, never add one. Training data
 * (`toolsel train-data selector`) reranks with this too, so selector records see what the
 * selector sees at inference.
 */
export async function rerankRequests(
  reranker: Reranker,
  requests: SelectionRequest[],
  abort?: AbortInput,
): Promise<SelectionRequest[]> {
  const lists = await reranker.rerank(requests, lazySignal(abort))
  return requests.map((request, index) => {
    const given = new Set(request.candidates.map((candidate) => candidate.id))
    const list = lists[index] ?? []
    if (list === request.candidates) return request
    const outside = list.find((candidate) => !given.has(candidate.id))
    if (outside) {
      throw new ToolselError(
        'RERANK_OUTSIDE_CANDIDATES',
        `Reranker "${reranker.name}" returned "${outside.id}" for step "${request.step}", which is not one of its ${request.candidates.length} candidates.`,
        { details: { step: request.step, toolId: outside.id } },
      )
    }
    return { ...request, candidates: list }
  })
}

/**
 * Retrieved candidates as the selector sees them: name and one-line description, no schema.
 * Training data (`toolsel train-data selector`) builds its prompts with this too.
 */
export function toCandidateTools(
  library: ToolLibrary,
  retrieved: ReadonlyArray<{ id: string; score: number; position?: number }>,
): CandidateTool[] {
  return retrieved.map(({ id, score, position }) => {
    const { name, description } = candidateRecords.get(library, id, position)
    return position === undefined
      ? { id, name, description, score }
      : { id, name, description, score, position }
  })
}

function sameTools(a: readonly string[], b: readonly string[]): boolean {
  const right = new Set(b)
  return new Set(a).size === right.size && a.every((id) => right.has(id))
}

/** Each candidate's highest probability over the selections that gave one. */
export function selectionProbabilities(selections: readonly Selection[]): Map<string, number> {
  const probabilities = new Map<string, number>()
  for (const selection of selections) {
    for (const [id, p] of Object.entries(selection.probabilities ?? {}))
      probabilities.set(id, Math.max(probabilities.get(id) ?? 0, p))
  }
  return probabilities
}

function addUsage(total: Usage, usage: Usage | undefined): void {
  if (!usage) return
  total.inputTokens += usage.inputTokens
  total.outputTokens += usage.outputTokens
}
