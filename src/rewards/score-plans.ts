/**
 * The planner reward of a batch of model completions for one instruction: each completion is
 * read as the LLM planner reads its model's answer (`parsePlan`, an empty list meaning the
 * instruction itself, as `LlmPlanner` does), each step is retrieved as the pipeline retrieves
 * it (same retriever, K and threshold), and the plan is scored with the benchmark's
 * `plannerReward`. Steps repeated across completions are retrieved once per batch: the
 * completions of one GRPO group share most of their steps.
 * @module
 */
import { ToolselError, isToolselError, throwIfAborted } from '../errors.ts'
import type { ToolLibrary } from '../library/tool-library.ts'
import { parsePlan } from '../plan/parse-plan.ts'
import type { Retriever } from '../contracts.ts'
import { plannerReward } from './planner-reward.ts'

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
  signal?: AbortSignal
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
  const shown = missing
    .slice(0, 10)
    .map((id) => `"${id}"`)
    .join(', ')
  throw new ToolselError(
    'UNKNOWN_TOOL',
    `Library "${library.name}" has no tool ${shown}${missing.length > 10 ? ` (and ${missing.length - 10} more)` : ''}; gold ids must be tool ids of the library.`,
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
  const plans = completions.map((completion) => readPlan(completion, instruction, options.maxSteps))
  const candidates = new Map<string, Promise<string[]>>()
  const candidatesOf = (step: string) => {
    let ids = candidates.get(step)
    if (ids === undefined) {
      ids = options.retriever
        .retrieve(step, { k: options.k, minScore: options.minScore, signal: options.signal })
        .then((found) => found.map((candidate) => candidate.id))
      candidates.set(step, ids)
    }
    return ids
  }
  throwIfAborted(options.signal)
  return Promise.all(
    plans.map(async (steps): Promise<PlanScore> => {
      if (steps === undefined) {
        return {
          reward: -penalty,
          precision: 0,
          recall: 0,
          f1: 0,
          format: 'unparsable',
          steps: [],
          claims: [],
        }
      }
      const stepCandidates = await Promise.all(steps.map(candidatesOf))
      const { precision, recall, f1, claims } = plannerReward(stepCandidates, gold)
      return { reward: f1, precision, recall, f1, format: 'ok', steps, claims }
    }),
  )
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
