/**
 * selectTools(): plan → retrieve per step → select per step → union. The server, the MCP tools,
 * the CLI and the benchmark runner all call this one function.
 * @module
 */
import { ToolselError, throwIfAborted } from './errors.ts'
import type { Tool } from './library/tool.ts'
import type { ToolLibrary } from './library/tool-library.ts'
import { oneLineDescription } from './library/tool.ts'
import type { Fallback, Planner, Usage } from './plan/planner.ts'
import type { Retriever } from './retrieve/retriever.ts'
import type { CandidateTool, Selector } from './select/selector.ts'

export interface SelectToolsOptions {
  library: ToolLibrary
  planner: Planner
  retriever: Retriever
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
  signal?: AbortSignal
}

export interface StepCandidate {
  id: string
  name: string
  score: number
  /** With `explain`: what the selector judged the candidate by (learned selector: its features). */
  features?: Record<string, number>
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
    selector: string
    /** Components that failed and were replaced for this request (empty when none). */
    fallbacks: Fallback[]
  }
  /** Tokens used by model-backed components (zero for rule-based ones). */
  usage: Usage
}

const round = (milliseconds: number) => Math.round(milliseconds * 1000) / 1000

export async function selectTools(
  instruction: string,
  options: SelectToolsOptions,
): Promise<SelectToolsResult> {
  const { library, planner, retriever, selector, signal } = options
  const started = performance.now()
  throwIfAborted(signal)

  const plan = await planner.plan(instruction, { signal })
  const planned = performance.now()

  // A selector that judges the steps together may also want the unsplit instruction.
  const whole = instruction.trim()
  const addWhole =
    selector.wholeInstructionStep === true && !(plan.steps.length === 1 && plan.steps[0] === whole)
  const texts = addWhole ? [...plan.steps, whole] : plan.steps
  const minScore = options.minScore ?? selector.retrievalMinScore
  const retrieved = await Promise.all(
    texts.map((step) => retriever.retrieve(step, { k: options.k, minScore, signal })),
  )
  const requests = texts.map((step, index) => ({
    step,
    ...(addWhole && index === texts.length - 1 && { whole: true }),
    candidates: retrieved[index].map(({ id, score }): CandidateTool => {
      const tool = library.require(id)
      return { id, name: tool.name, description: oneLineDescription(tool.description), score }
    }),
  }))
  const retrievedAt = performance.now()

  throwIfAborted(signal)
  const selections = await selector.select(requests, {
    signal,
    instruction,
    tool: (id) => library.require(id),
    explain: options.explain,
    exampleVotes: options.exampleVotes,
  })
  const selectedAt = performance.now()

  const usage: Usage = { inputTokens: 0, outputTokens: 0 }
  const fallbacks: Fallback[] = plan.fallback ? [plan.fallback] : []
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
    if (selection.fallback) fallbacks.push(selection.fallback)
    return {
      text: request.step,
      candidates: request.candidates.map(({ id, name, score }) => {
        const features = options.explain ? selection.features?.[id] : undefined
        return features ? { id, name, score, features } : { id, name, score }
      }),
      selected: selection.toolId,
      ...(request.whole && { whole: true }),
    }
  })

  const chosen = new Set<string>()
  for (const step of steps) if (step.selected !== null) chosen.add(step.selected)
  return {
    tools: [...chosen].map((id) => library.require(id)),
    steps,
    timings: {
      planMs: round(planned - started),
      retrieveMs: round(retrievedAt - planned),
      selectMs: round(selectedAt - retrievedAt),
      totalMs: round(selectedAt - started),
    },
    components: {
      library: library.name,
      planner: plan.planner,
      retriever: retriever.name,
      selector: selector.name,
      fallbacks,
    },
    usage,
  }
}

function addUsage(total: Usage, usage: Usage | undefined): void {
  if (!usage) return
  total.inputTokens += usage.inputTokens
  total.outputTokens += usage.outputTokens
}
