/**
 * The planner reward of a batch of model completions for one instruction: each completion is
 * read as the LLM planner reads its model's answer (`parsePlan`, an empty list meaning the
 * instruction itself, as `LlmPlanner` does), each step is retrieved as the pipeline retrieves
 * it (same retriever, K and threshold), and the plan is scored with the benchmark's
 * `plannerReward`. Steps repeated across completions are retrieved once per batch: the
 * completions of one GRPO group share most of their steps.
 * @module
 */
import { ToolselError, isToolselError } from '../errors.ts'
import type { ToolLibrary } from '../library/tool-library.ts'
import { parsePlan } from '../plan/parse-plan.ts'
import type { Retriever } from '../contracts.ts'
import { retrieveOptions, type AbortInput } from '../lazy-abort.ts'
import { createTimeSlicer } from '../time-slicer.ts'
import { plannerReward } from './planner-reward.ts'
import { shownName } from '../library/name-characters.ts'

export interface ScorePlansOptions {
  library: ToolLibrary
  retriever: Retriever
  /** Candidates per step (the paper's K). */
  k: number
  /** Retrieval threshold; `undefined` uses the retriever's own (tau for BM25), as the pipeline does. */
  minScore?: number
  /** Steps kept per plan, as the LLM planner's `maxSteps`. */
  maxSteps: number
  /** Subtracted from 0 for an answer that holds no list of steps. Default 1 (reward -1). */
  formatPenalty?: number
  /**
   * Stops the batch: checked between completions and steps; a retriever that waits gets its
   * AbortSignal (made then for a LazyAbort), a synchronous one (BM25) none, as in the pipeline.
   */
  abort?: AbortInput
}

export interface PlanScore {
  /** What a trainer maximises: `f1`, or `-formatPenalty` when the answer is no plan. */
  reward: number
  precision: number
  recall: number
  f1: number
  /** `ok`, or `unparsable` when the completion holds no list of steps. */
  format: 'ok' | 'unparsable'
  /** The plan as the LLM planner would run it. Empty when unparsable. */
  steps: string[]
  /** Per step: the gold id it claimed and its 1-based rank, or null (see `plannerReward`). */
  claims: Array<{ id: string; rank: number } | null>
}

/** Gold ids the library lacks, named in one UNKNOWN_TOOL error (the reward could never be 1). */
export function assertGoldInLibrary(library: ToolLibrary, gold: readonly string[]): void {
  const missing = gold.filter((id) => !library.has(id))
  if (missing.length === 0) return
  const shown = missing.slice(0, 10).map(shownName).join(', ')
  throw new ToolselError(
    'UNKNOWN_TOOL',
    `Library "${library.name}" has no tool ${shown}${missing.length > 10 ? ` (and ${missing.length - 10} more)` : ''}; gold ids must be tool ids of the library.${library.unknownIdsHint(missing)}`,
    { details: { library: library.name, ids: missing } },
  )
}

export async function scorePlans(
  instruction: string,
  gold: readonly string[],
  completions: readonly string[],
  options: ScorePlansOptions,
): Promise<PlanScore[]> {
  assertGoldInLibrary(options.library, gold)
  const penalty = options.formatPenalty ?? 1
  const candidates = new Map<string, string[]>()
  // One completion at a time, yielding every few ms: a batch of 1,024 long plans is seconds of
  // CPU, which must not hold other requests, and the request deadline stops it.
  const slicer = createTimeSlicer(options.abort)
  const { retriever } = options
  const stepOptions = retrieveOptions(retriever.synchronous, options.abort, {
    k: options.k,
    minScore: options.minScore,
  })
  const scores: PlanScore[] = []
  for (const completion of completions) {
    await slicer.next()
    const steps = readPlan(completion, instruction, options.maxSteps)
    if (steps === undefined) {
      scores.push({
        reward: -penalty,
        precision: 0,
        recall: 0,
        f1: 0,
        format: 'unparsable',
        steps: [],
        claims: [],
      })
      continue
    }
    const stepCandidates: string[][] = []
    for (const step of steps) {
      let ids = candidates.get(step)
      if (ids === undefined) {
        // Checks the abort right before: a synchronous retriever can't see it.
        await slicer.next()
        const found = await retriever.retrieve(step, stepOptions)
        ids = found.map((candidate) => candidate.id)
        candidates.set(step, ids)
      }
      stepCandidates.push(ids)
    }
    const { precision, recall, f1, claims } = plannerReward(stepCandidates, gold)
    scores.push({ reward: f1, precision, recall, f1, format: 'ok', steps, claims })
  }
  return scores
}

/**
 * The steps the LLM planner would run for this answer, or undefined when it holds no plan. An
 * explicit empty list becomes the instruction as the one step, as in `LlmPlanner.plan`.
 */
export function readPlan(
  completion: string,
  instruction: string,
  maxSteps: number,
): string[] | undefined {
  try {
    const steps = parsePlan(completion, { maxSteps })
    return steps.length > 0 ? steps : [instruction.trim()]
  } catch (error) {
    if (isToolselError(error, 'PLAN_UNPARSABLE')) return undefined
    throw error
  }
}
