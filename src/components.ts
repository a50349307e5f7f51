/**
 * Planners and selectors by config id, from a plain lookup table on the id's prefix
 * (`rule`, `none`, `top1`, `llm:<model id>`). Model-backed components register their prefix
 * here; the pipeline never knows which implementation it runs.
 * @module
 */
import type { Config } from './config/schema.ts'
import { ToolselError } from './errors.ts'
import type { Logger } from './log.ts'
import type { Planner } from './plan/planner.ts'
import { NonePlanner } from './plan/none-planner.ts'
import { RulePlanner } from './plan/rule-planner.ts'
import type { Selector } from './select/selector.ts'
import { Top1Selector } from './select/top1-selector.ts'

export interface ComponentContext {
  config: Config
  logger: Logger
  /** Builds (or reuses) another planner, e.g. the rule planner an LLM planner falls back to. */
  planner(id: string): Planner
}

type Factory<T> = (argument: string, context: ComponentContext) => T

export const PLANNERS: Record<string, Factory<Planner>> = {
  rule: (_argument, { config }) => new RulePlanner({ maxSteps: config.plan.maxSteps }),
  none: () => new NonePlanner(),
}

export const SELECTORS: Record<string, Factory<Selector>> = {
  top1: () => new Top1Selector(),
}

export interface Components {
  planner(id?: string): Planner
  selector(id?: string): Selector
}

/** Creates components on first use and reuses them (model-backed ones are expensive to load). */
export function createComponents(config: Config, logger: Logger): Components {
  const planners = new Map<string, Planner>()
  const selectors = new Map<string, Selector>()
  const context: ComponentContext = { config, logger, planner: (id) => components.planner(id) }
  const components: Components = {
    planner: (id = config.plan.planner) =>
      cached(planners, id, () => build('planner', PLANNERS, id, context)),
    selector: (id = config.select.selector) =>
      cached(selectors, id, () => build('selector', SELECTORS, id, context)),
  }
  return components
}

function build<T>(
  kind: string,
  table: Record<string, Factory<T>>,
  id: string,
  context: ComponentContext,
): T {
  const colon = id.indexOf(':')
  const prefix = colon < 0 ? id : id.slice(0, colon)
  const factory = Object.hasOwn(table, prefix) ? table[prefix] : undefined
  if (!factory) {
    throw new ToolselError(
      'UNKNOWN_COMPONENT',
      `No such ${kind}: "${id}" (available: ${Object.keys(table).join(', ')}).`,
      {
        details: { kind, id, available: Object.keys(table) },
      },
    )
  }
  return factory(colon < 0 ? '' : id.slice(colon + 1), context)
}

function cached<T>(cache: Map<string, T>, id: string, create: () => T): T {
  let value = cache.get(id)
  if (value === undefined) {
    value = create()
    cache.set(id, value)
  }
  return value
}
