/**
 * Planners, rerankers and selectors by config id, from plain lookup tables on the id's prefix
 * (`rule`, `none`, `identity`, `top1`, `llm:<model id>`). A new implementation registers its
 * prefix here (one line); the pipeline never knows which implementation it runs. Retrievers are
 * per library and are looked up in `store/kinds/`.
 *
 * @example
 * ```ts
 * // src/rerank/my-reranker.ts exports class MyReranker implements Reranker; then:
 * export const RERANKERS = { identity: () => new IdentityReranker(), mine: (argument) => new MyReranker(argument) }
 * // POST /v1/select-tools {"instruction": "…", "reranker": "mine:some-argument"}
 * ```
 * @module
 */
import { lookupBackend, parseComponentId } from './component-id.ts'
import type { Config } from './config/schema.ts'
import { loadDefaultModel, readLearnedModelSync } from './learn/learned-model.ts'
import { ToolselError } from './errors.ts'
import type { Logger } from './log.ts'
import { isLazy, LazyPlanner, LazySelector } from './lazy-components.ts'
import { createLanguageModel } from './models/create-language-model.ts'
import type { LanguageModel } from './models/language-model.ts'
import { LlmPlanner } from './plan/llm-planner.ts'
import type { Planner, Reranker, Selector } from './contracts.ts'
import { NonePlanner } from './plan/none-planner.ts'
import { RulePlanner } from './plan/rule-planner.ts'
import { LearnedSelector } from './select/learned-selector.ts'
import { IdentityReranker } from './rerank/identity-reranker.ts'
import { LlmSelector } from './select/llm-selector.ts'
import { Top1Selector } from './select/top1-selector.ts'

export interface ComponentContext {
  config: Config
  logger: Logger
  /** Builds (or reuses) another planner, e.g. the rule planner an LLM planner falls back to. */
  planner(id: string): Planner
  selector(id: string): Selector
}

/** `onnx:<dir>` / `openai:<model>` from the config's model settings. */
function languageModel(id: string, { config, logger }: ComponentContext): Promise<LanguageModel> {
  const { onnx, openai } = config.models
  return createLanguageModel(id, {
    onnx,
    openai: { ...openai, apiKey: openai.apiKey || undefined },
    logger,
  })
}

function llmPlanner(modelId: string, context: ComponentContext): Planner {
  const { plan } = context.config
  return new LazyPlanner(`llm(${modelId})`, async () => {
    const model = await languageModel(modelId, context)
    return new LlmPlanner({
      model,
      maxSteps: plan.maxSteps,
      maxTokens: plan.maxTokens,
      thinking: plan.thinking,
      fallback: plan.fallback ? context.planner(plan.fallback) : undefined,
      logger: context.logger,
    })
  })
}

function llmSelector(modelId: string, context: ComponentContext): Selector {
  const { select } = context.config
  return new LazySelector(`llm(${modelId})`, async () => {
    const model = await languageModel(modelId, context)
    return new LlmSelector({
      model,
      margin: select.margin,
      fallback: select.fallback ? context.selector(select.fallback) : undefined,
      logger: context.logger,
    })
  })
}

type Factory<T> = (argument: string, context: ComponentContext) => T

export const PLANNERS: Record<string, Factory<Planner>> = {
  rule: (_argument, { config }) => new RulePlanner({ maxSteps: config.plan.maxSteps }),
  none: () => new NonePlanner(),
  /** `llm:onnx:<dir>` or `llm:openai:<model>`. */
  llm: llmPlanner,
  /** Shorthands for `llm:onnx:…` and `llm:openai:…`. */
  onnx: (argument, context) => llmPlanner(`onnx:${argument}`, context),
  openai: (argument, context) => llmPlanner(`openai:${argument}`, context),
}

export const RERANKERS: Record<string, Factory<Reranker>> = {
  identity: () => new IdentityReranker(),
}

export const SELECTORS: Record<string, Factory<Selector>> = {
  top1: () => new Top1Selector(),
  /** `learned` (the shipped model) or `learned:<model.json>` (one written by `toolsel train`). */
  learned: (argument) =>
    argument
      ? new LearnedSelector(readLearnedModelSync(argument), `learned:${argument}`)
      : new LearnedSelector(loadDefaultModel()),
  llm: llmSelector,
  onnx: (argument, context) => llmSelector(`onnx:${argument}`, context),
  openai: (argument, context) => llmSelector(`openai:${argument}`, context),
}

export interface Components {
  planner(id?: string): Planner
  reranker(id?: string): Reranker
  selector(id?: string): Selector
  /**
   * Waits until the components created so far have loaded their models; rejects with the first
   * load error. The service calls it at start-up so a bad model fails before it reports ready.
   */
  ready(): Promise<void>
}

/** Creates components on first use and reuses them (model-backed ones are expensive to load). */
export function createComponents(config: Config, logger: Logger): Components {
  const planners = new Map<string, Planner>()
  const rerankers = new Map<string, Reranker>()
  const selectors = new Map<string, Selector>()
  const context: ComponentContext = {
    config,
    logger,
    planner: (id) => components.planner(id),
    selector: (id) => components.selector(id),
  }
  const components: Components = {
    planner: (id = config.plan.planner) =>
      cached(planners, id, () => build('planner', PLANNERS, id, context)),
    reranker: (id = config.rerank.reranker) =>
      cached(rerankers, id, () => build('reranker', RERANKERS, id, context)),
    selector: (id = config.select.selector) =>
      cached(selectors, id, () => build('selector', SELECTORS, id, context)),
    ready: async () => {
      for (const component of [
        ...planners.values(),
        ...rerankers.values(),
        ...selectors.values(),
      ]) {
        if (isLazy(component)) await component.ready()
      }
    },
  }
  return components
}

function build<T>(
  kind: string,
  table: Record<string, Factory<T>>,
  id: string,
  context: ComponentContext,
): T {
  const { backend, argument } = parseComponentId(id)
  const factory = lookupBackend(table, backend)
  if (!factory) {
    throw new ToolselError(
      'UNKNOWN_COMPONENT',
      `No such ${kind}: "${id}" (available: ${Object.keys(table).join(', ')}).`,
      {
        details: { kind, id, available: Object.keys(table) },
      },
    )
  }
  return factory(argument, context)
}

/** Reuses components by id; one whose model failed to load is dropped so the next use retries. */
function cached<T>(cache: Map<string, T>, id: string, create: () => T): T {
  let value = cache.get(id)
  if (value === undefined) {
    const created = create()
    cache.set(id, created)
    if (isLazy(created)) created.ready().catch(() => cache.delete(id))
    value = created
  }
  return value
}
