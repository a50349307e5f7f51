/**
 * Turns a training split into chat-format records (the `{messages: […]}` JSONL that TRL, verl and
 * OpenRLHF read) with the exact prompts toolsel sends at inference:
 *
 * - `planner`: `buildPlanMessages` + the target plan (one step per gold tool, from the tool's
 *   description, or a teacher's plan), kept only when every step retrieves a distinct gold tool
 *   within K (the planner reward's claims);
 * - `selector`: per gold step, the selector conversation over the step's real candidates
 *   (retrieved as the pipeline retrieves them) + the gold id, or the no-tool answer when the gold
 *   tool was not retrieved (`goldRetrieved: false`, so users can drop those);
 * - `grpo`: the prompts alone with the gold the rewards need.
 *
 * Gold is first filtered as the paper does: the lexical filter (gold tools sharing no content
 * word with the instruction are dropped) and, with a teacher, a yes/no synonymy check per pair.
 * Every filter's removals are counted for the data card. Records are split train/valid by a hash
 * of the example id, so the output is the same on every run.
 * @module
 */
import pLimit from 'p-limit'
import { lexicalFilter, toolContentText } from '../bench/metrics/lexical-filter.ts'
import type { Config } from '../config/schema.ts'
import { isToolselError } from '../errors.ts'
import type { Tool } from '../library/tool.ts'
import type { ChatMessage, LanguageModel } from '../models/language-model.ts'
import { rerankRequests, toCandidateTools } from '../pipeline.ts'
import { buildPlanMessages } from '../plan/prompts.ts'
import type { Reranker, Retriever } from '../contracts.ts'
import { plannerReward } from '../rewards/planner-reward.ts'
import { readPlan } from '../rewards/score-plans.ts'
import { selectionPrompt } from '../select/llm-selector.ts'
import type { IndexedLibrary } from '../store/indexed-library.ts'
import { assignSplit, type DataSplit } from './assign-split.ts'
import { descriptionStep } from './target-plan.ts'
import { teacherConfirmsPair, teacherPlan } from './teacher.ts'
import type { TrainExample, TrainSplit } from './train-split.ts'

export type TrainDataKind = 'planner' | 'selector' | 'grpo'

export const TRAIN_DATA_KINDS: readonly TrainDataKind[] = ['planner', 'selector', 'grpo']

export interface BuildTrainDataOptions {
  kind: TrainDataKind
  split: TrainSplit
  /** The split's library, indexed (the retriever the records' candidates come from). */
  indexed: IndexedLibrary
  retriever: Retriever
  /** The configured reranker, applied to selector candidates as the pipeline does. Default none. */
  reranker?: Reranker
  /** `retrieve.k`, `retrieve.bm25.tau` (through the retriever) and `plan.maxSteps` are used. */
  config: Config
  /** The library name GRPO records carry: the name the reward service serves it under. */
  libraryName: string
  teacher?: LanguageModel
  /** Share of examples in the validation split. */
  validFraction: number
  seed: number
  /** Only the first N examples (after exclusions). */
  limit?: number
  /** Examples processed at once (teacher calls in flight). Default 8. */
  concurrency?: number
  onProgress?: (done: number, total: number) => void
}

export interface FilterCounts {
  /** Examples that reached this filter. */
  examplesIn: number
  /** Gold tools it removed. */
  goldRemoved: number
  /** Examples left without gold, hence dropped. */
  examplesDropped: number
}

export interface TrainDataCounts {
  examples: number
  lexicalFilter: FilterCounts
  /** Null without a teacher. */
  synonymFilter: (FilterCounts & { pairsAsked: number; failed: number }) | null
  /** Planner targets: checked, and rejected because some step claims no gold tool within K. */
  plans: {
    source: 'description' | 'teacher'
    checked: number
    rejected: number
    teacherUnparsable: number
    teacherFailed: number
  }
  /** Selector steps: gold retrieved (target = id), not retrieved (target = none), no candidates (skipped). */
  selectorSteps: { goldRetrieved: number; goldNotRetrieved: number; noCandidates: number }
}

export interface TrainData {
  /** Output file name (`planner.train.jsonl`, …) → records, in example order. */
  files: Map<string, unknown[]>
  counts: TrainDataCounts
  /** The first failed teacher call's error message (the counts say how many failed). */
  teacherError?: string
}

interface PlannedExample {
  example: TrainExample
  split: DataSplit
  gold: string[]
  plan?: { steps: string[]; source: 'description' | 'teacher'; accepted: boolean }
  selectorSteps: Array<{ step: string; gold: string | null }>
}

export async function buildTrainData(options: BuildTrainDataOptions): Promise<TrainData> {
  const { split, kind } = options
  const examples =
    options.limit === undefined ? split.examples : split.examples.slice(0, options.limit)
  const byId = new Map(options.indexed.library.tools.map((tool) => [tool.id, tool]))
  const counts: TrainDataCounts = {
    examples: examples.length,
    lexicalFilter: { examplesIn: examples.length, goldRemoved: 0, examplesDropped: 0 },
    synonymFilter: options.teacher
      ? { examplesIn: 0, goldRemoved: 0, examplesDropped: 0, pairsAsked: 0, failed: 0 }
      : null,
    plans: {
      source: options.teacher ? 'teacher' : 'description',
      checked: 0,
      rejected: 0,
      teacherUnparsable: 0,
      teacherFailed: 0,
    },
    selectorSteps: { goldRetrieved: 0, goldNotRetrieved: 0, noCandidates: 0 },
  }
  const retrieved = new Map<string, Promise<Array<{ id: string; score: number }>>>()
  const retrieve = (step: string) => {
    let found = retrieved.get(step)
    if (!found) {
      found = options.retriever.retrieve(step, { k: options.config.retrieve.k })
      retrieved.set(step, found)
    }
    return found
  }
  const failures: TeacherFailures = {}
  const limit = pLimit(options.concurrency ?? 8)
  let done = 0
  const planned = await Promise.all(
    examples.map((example) =>
      limit(async () => {
        const result = await planExample(example, options, byId, counts, retrieve, failures)
        options.onProgress?.((done += 1), examples.length)
        return result
      }),
    ),
  )

  const files = new Map<string, unknown[]>()
  const push = (name: string, split: DataSplit, record: unknown) => {
    const file = `${name}.${split}.jsonl`
    const list = files.get(file) ?? []
    list.push(record)
    files.set(file, list)
  }
  const maxSteps = options.config.plan.maxSteps
  for (const item of planned) {
    if (!item) continue
    const { example, split: part } = item
    if (kind === 'planner' && item.plan?.accepted) {
      push('planner', part, {
        id: example.id,
        messages: [
          ...buildPlanMessages(example.instruction, maxSteps),
          { role: 'assistant', content: JSON.stringify(item.plan.steps) },
        ],
        gold: item.gold,
        target: item.plan.source,
      })
    }
    if (kind === 'grpo') {
      push('grpo-planner', part, {
        id: example.id,
        prompt: buildPlanMessages(example.instruction, maxSteps),
        instruction: example.instruction,
        gold: item.gold,
        library: options.libraryName,
      })
    }
    if (kind === 'selector' || kind === 'grpo') {
      for (const [index, { step, gold }] of item.selectorSteps.entries()) {
        const retrieved = toCandidateTools(options.indexed.library, await retrieve(step))
        // The selector sees the candidates after the configured reranker, as at inference.
        const [request] = options.reranker
          ? await rerankRequests(options.reranker, [{ step, candidates: retrieved }])
          : [{ step, candidates: retrieved }]
        // With no candidate the pipeline never asks the selector: no record either.
        if (request.candidates.length === 0) {
          counts.selectorSteps.noCandidates += 1
          continue
        }
        const prompt = selectionPrompt(request)
        const target = gold !== null && prompt.choices.includes(gold) ? gold : null
        if (target === null) counts.selectorSteps.goldNotRetrieved += 1
        else counts.selectorSteps.goldRetrieved += 1
        const common = {
          id: `${example.id}#${index + 1}`,
          step,
          candidates: prompt.candidates.map((candidate) => candidate.id),
          gold: target,
          goldRetrieved: target !== null,
        }
        if (kind === 'selector') {
          const answer: ChatMessage = { role: 'assistant', content: target ?? prompt.none }
          push('selector', part, { ...common, messages: [...prompt.messages, answer] })
        } else {
          push('grpo-selector', part, { ...common, prompt: prompt.messages })
        }
      }
    }
  }
  return {
    files,
    counts,
    ...(failures.first === undefined ? {} : { teacherError: failures.first }),
  }
}

/** The first failed teacher call's message, for the error or warning the command prints. */
interface TeacherFailures {
  first?: string
}

async function planExample(
  example: TrainExample,
  options: BuildTrainDataOptions,
  byId: Map<string, Tool>,
  counts: TrainDataCounts,
  retrieve: (step: string) => Promise<Array<{ id: string; score: number }>>,
  failures: TeacherFailures,
): Promise<PlannedExample | undefined> {
  const textOf = (id: string) => {
    const tool = byId.get(id)
    return tool && toolContentText(tool)
  }
  let gold = lexicalFilter(example.instruction, example.gold, textOf)
  counts.lexicalFilter.goldRemoved += example.gold.length - gold.length
  if (gold.length === 0) {
    counts.lexicalFilter.examplesDropped += 1
    return undefined
  }
  const { teacher } = options
  if (teacher && counts.synonymFilter) {
    const synonym = counts.synonymFilter
    synonym.examplesIn += 1
    const verdicts = await Promise.all(
      gold.map(async (id) => {
        synonym.pairsAsked += 1
        try {
          return await teacherConfirmsPair(teacher, example.instruction, byId.get(id)!)
        } catch (error) {
          if (!isToolselError(error)) throw error
          // A failed check keeps the pair: the lexical filter already passed it.
          synonym.failed += 1
          failures.first ??= error.message
          return true
        }
      }),
    )
    const confirmed = gold.filter((_id, index) => verdicts[index])
    synonym.goldRemoved += gold.length - confirmed.length
    gold = confirmed
    if (gold.length === 0) {
      synonym.examplesDropped += 1
      return undefined
    }
  }
  const split = assignSplit(example.id, options.seed, options.validFraction)
  const descriptionSteps = gold.map((id) => descriptionStep(byId.get(id)!))
  let selectorSteps: PlannedExample['selectorSteps'] = descriptionSteps.map((step, index) => ({
    step,
    gold: gold[index],
  }))
  let plan: PlannedExample['plan']
  // GRPO planner prompts need no target plan; selector records and prompts need steps.
  if (options.kind !== 'grpo' || teacher) {
    const steps = teacher
      ? await askTeacherPlan(teacher, example, gold, byId, options, counts, failures)
      : descriptionSteps
    if (steps) {
      counts.plans.checked += 1
      const candidates = await Promise.all(
        steps.map(async (step) => (await retrieve(step)).map((item) => item.id)),
      )
      const { claims } = plannerReward(candidates, gold)
      const claimed = claims.filter((claim) => claim !== null).length
      const accepted = claimed === steps.length && claimed === gold.length
      if (!accepted) counts.plans.rejected += 1
      plan = { steps, source: teacher ? 'teacher' : 'description', accepted }
      // An accepted teacher plan gives each step the gold tool it claimed.
      if (teacher && accepted) {
        selectorSteps = steps.map((step, index) => ({ step, gold: claims[index]?.id ?? null }))
      }
    }
  }
  return { example, split, gold, plan, selectorSteps }
}

async function askTeacherPlan(
  teacher: LanguageModel,
  example: TrainExample,
  gold: string[],
  byId: Map<string, Tool>,
  options: BuildTrainDataOptions,
  counts: TrainDataCounts,
  failures: TeacherFailures,
): Promise<string[] | undefined> {
  const maxSteps = options.config.plan.maxSteps
  try {
    const raw = await teacherPlan(
      teacher,
      example.instruction,
      gold.map((id) => byId.get(id)!),
      maxSteps,
    )
    const steps = readPlan(raw, example.instruction, maxSteps)
    if (!steps) counts.plans.teacherUnparsable += 1
    return steps
  } catch (error) {
    if (!isToolselError(error)) throw error
    counts.plans.teacherFailed += 1
    failures.first ??= error.message
    return undefined
  }
}
