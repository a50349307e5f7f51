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
import {
  configuredComponentIds,
  llmComponentName,
  lookupBackend,
  MODEL_BACKENDS,
  nextFallback,
  parseComponentId,
} from './component-id.ts'
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

/**
 * The language model `id` (`onnx:<dir>` / `openai:<model>`) built from `config.models` as serve builds its planner's and selector's
 * (`toolsel models check openai:<model> --chat` sends its one call through it).
 */
export function configuredLanguageModel(
  id: string,
  config: Config,
  logger: Logger,
): Promise<LanguageModel> {
  const { onnx, openai } = config.models
  return createLanguageModel(id, {
    onnx,
    openai: { ...openai, apiKey: openai.apiKey || undefined },
    logger,
  })
}

/**
 * The id that stands in for the model-backed component `modelId` when its call fails: the next
 * entry of the configured fallback list (`nextFallback`). A model in the list falls back to the
 * entry after it (`plan.fallback` `["openai:b", "rule"]`: `llm(openai:b)` falls back to `rule`);
 * the last has none, and its failure fails the request. Never `modelId` itself, which used to call
 * itself again and again (an HTTP call each time) until the request's deadline.
 */
function fallbackFor(modelId: string, chain: readonly string[]): string | undefined {
  return nextFallback(`llm:${modelId}`, chain)
}

function llmPlanner(modelId: string, context: ComponentContext): Planner {
  const { plan } = context.config
  return new LazyPlanner(llmComponentName(modelId), async () => {
    const model = await configuredLanguageModel(modelId, context.config, context.logger)
    const fallback = fallbackFor(modelId, plan.fallback)
    return new LlmPlanner({
      model,
      maxSteps: plan.maxSteps,
      maxTokens: plan.maxTokens,
      thinking: plan.thinking,
      fallback: fallback ? context.planner(fallback) : undefined,
      logger: context.logger,
    })
  })
}

function llmSelector(modelId: string, context: ComponentContext): Selector {
  const { select } = context.config
  return new LazySelector(llmComponentName(modelId), async () => {
    const model = await configuredLanguageModel(modelId, context.config, context.logger)
    const fallback = fallbackFor(modelId, select.fallback)
    return new LlmSelector({
      model,
      margin: select.margin,
      fallback: fallback ? context.selector(fallback) : undefined,
      logger: context.logger,
    })
  })
}

type Factory<T> = (argument: string, context: ComponentContext) => T

/** Registry keys that need an argument (`llm:<model>`, `onnx:<dir>`, `openai:<model>`). */
export const NEEDS_ARGUMENT: ReadonlySet<string> = MODEL_BACKENDS

/** What a registry offers, as ids are written: `rule, none, llm:onnx:<dir>, llm:openai:<model>`. */
function availableIds(table: Record<string, unknown>): string {
  const keys = Object.keys(table)
  const plain = keys.filter((key) => !NEEDS_ARGUMENT.has(key))
  const models = keys.includes('llm') ? ['llm:onnx:<dir>', 'llm:openai:<model>'] : []
  return [...plain, ...models].join(', ')
}

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
  /** The components created so far and whether each has loaded its model (for `/metrics`). */
  states?(): ComponentState[]
}

export interface ComponentState {
  kind: 'planner' | 'reranker' | 'selector'
  id: string
  /** Its name in a selection's `components` (`llm(openai:m)` for `llm:openai:m`). */
  name: string
  state: 'loading' | 'loaded' | 'failed'
}

/**
 * Components kept per kind besides the configured ones (which are never evicted): the least
 * recently used is dropped beyond it, so ids that vary per call (`rule:<anything>`,
 * `learned:<file>` from the CLI or the benchmark) can't grow the cache without bound.
 */
export const COMPONENT_CACHE_SIZE = 16

/** Creates components on first use and reuses them (model-backed ones are expensive to load). */
export function createComponents(config: Config, logger: Logger): Components {
  const pinned = new Set(configuredComponentIds(config))
  const planners = new ComponentCache<Planner>(pinned)
  const rerankers = new ComponentCache<Reranker>(pinned)
  const selectors = new ComponentCache<Selector>(pinned)
  const context: ComponentContext = {
    config,
    logger,
    planner: (id) => components.planner(id),
    selector: (id) => components.selector(id),
  }
  const components: Components = {
    planner: (id = config.plan.planner) =>
      planners.get(id, () => build('planner', PLANNERS, id, context)),
    reranker: (id = config.rerank.reranker) =>
      rerankers.get(id, () => build('reranker', RERANKERS, id, context)),
    selector: (id = config.select.selector) =>
      selectors.get(id, () => build('selector', SELECTORS, id, context)),
    states: () =>
      (
        [
          ['planner', planners],
          ['reranker', rerankers],
          ['selector', selectors],
        ] as const
      ).flatMap(([kind, cache]) =>
        [...cache.entries()].map(([id, component]) => ({
          kind,
          id,
          name: component.name,
          state: isLazy(component) ? component.state : ('loaded' as const),
        })),
      ),
    ready: async () => {
      for (const component of [
        ...planners.values(),
        ...rerankers.values(),
        ...selectors.values(),
      ]) {
        if (isLazy(component)) await component.ready()
        else if ('prepare' in component) await component.prepare?.()
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
      `No such ${kind}: "${id}" (available: ${availableIds(table)}).`,
      {
        details: { kind, id, available: Object.keys(table) },
      },
    )
  }
  return factory(argument, context)
}

/**
 * Reuses components by id, least recently used first out beyond COMPONENT_CACHE_SIZE (the
 * `pinned` configured ids stay); one whose model failed to load is dropped so the next use retries.
 */
class ComponentCache<T> {
  readonly #pinned: ReadonlySet<string>
  readonly #entries = new Map<string, T>()

  constructor(pinned: ReadonlySet<string>) {
    this.#pinned = pinned
  }

  get(id: string, create: () => T): T {
    const value = this.#entries.get(id)
    if (value !== undefined) {
      // Map order is insertion order: re-inserting makes it the most recently used. Pinned ids
      // (the configured components, which every request without its own choice uses) are never
      // evicted, so their place does not matter.
      if (!this.#pinned.has(id)) {
        this.#entries.delete(id)
        this.#entries.set(id, value)
      }
      return value
    }
    const created = create()
    this.#entries.set(id, created)
    if (isLazy(created)) {
      created.ready().catch(() => {
        if (this.#entries.get(id) === created) this.#entries.delete(id)
      })
    }
    this.#evict()
    return created
  }

  values(): IterableIterator<T> {
    return this.#entries.values()
  }

  entries(): IterableIterator<[string, T]> {
    return this.#entries.entries()
  }

  get size(): number {
    return this.#entries.size
  }

  #evict(): void {
    let unpinned = 0
    for (const id of this.#entries.keys()) if (!this.#pinned.has(id)) unpinned += 1
    for (const id of [...this.#entries.keys()]) {
      if (unpinned <= COMPONENT_CACHE_SIZE) return
      if (this.#pinned.has(id)) continue
      this.#entries.delete(id)
      unpinned -= 1
    }
  }
}
