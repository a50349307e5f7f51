/**
 * Config ids of the form `backend:argument` (`onnx:/models/qwen3`, `llm:openai:qwen3-8b`,
 * `use-lite`), resolved through plain lookup tables by planners, selectors and model factories.
 * @module
 */
import { ToolselError } from './errors.ts'

/** Splits at the first colon: `llm:onnx:/m` → backend `llm`, argument `onnx:/m`. */
export function parseComponentId(id: string): { backend: string; argument: string } {
  const separator = id.indexOf(':')
  return separator < 0
    ? { backend: id, argument: '' }
    : { backend: id.slice(0, separator), argument: id.slice(separator + 1) }
}

/** The table entry for `key`, ignoring inherited properties (`toString`, `__proto__`…). */
export function lookupBackend<T>(table: Readonly<Record<string, T>>, key: string): T | undefined {
  return Object.hasOwn(table, key) ? table[key] : undefined
}

/**
 * The UNKNOWN_COMPONENT error for `id`, whose backend `backend` no table of `what` (`embedding`,
 * `language-model`) has: it lists each backend's `usage` (`onnx:<model directory>`), not only
 * its name, so the message shows what an id looks like.
 */
export function unknownBackend(
  what: string,
  backend: string,
  id: string,
  usage: readonly string[],
): ToolselError {
  return new ToolselError(
    'UNKNOWN_COMPONENT',
    `No such ${what} backend: ${backend} (available: ${usage.join(', ')})`,
    { details: { id, available: usage } },
  )
}

/**
 * The name a planner or selector of config id `id` has in a selection's `components` (and so in
 * `components.fallbacks`, `/readyz` `degraded` and the model metrics): `llm(<model id>)` for a
 * model-backed one (`llm:openai:m`, `openai:m` → `llm(openai:m)`), the id itself otherwise
 * (`rule`, `top1`, `learned`).
 */
export function componentName(id: string): string {
  const { backend, argument } = parseComponentId(id.trim())
  if (backend === 'llm') return llmComponentName(argument)
  if (MODEL_BACKENDS.has(backend)) return llmComponentName(`${backend}:${argument}`)
  return id.trim()
}

/**
 * The backends of a model-backed planner or selector (`llm:<model id>`, `openai:<model>`,
 * `onnx:<dir>`): the registry keys that need an argument, and the components that use their
 * configured fallback.
 */
export const MODEL_BACKENDS: ReadonlySet<string> = new Set(['llm', 'onnx', 'openai'])

/** Whether planner or selector id `id` calls a model (and so uses its fallback). */
export function isModelBacked(id: string): boolean {
  return MODEL_BACKENDS.has(parseComponentId(id.trim()).backend)
}

/**
 * The component that stands in when `id` fails, from `chain` (`plan.fallback` /
 * `select.fallback`, tried in order): the entry after `id`'s last place in it, or the first when
 * `id` is not in it (the configured planner or selector, or one a request names); undefined when
 * none is left. Each model's next stand-in lies further down the list, so a chain never calls a
 * model twice (before round 42 a fallback was one id, and a model fallback had none of its own).
 */
export function nextFallback(id: string, chain: readonly string[]): string | undefined {
  const name = componentName(id)
  const at = chain.findLastIndex((entry) => componentName(entry) === name)
  return chain[at + 1]
}

/**
 * The ids a planner or a selector may have, by the backend of each (`rule`, `llm:openai:m`): the
 * keys of components.ts's PLANNERS and SELECTORS (a test keeps them equal; those tables load
 * every component, so the config schema reads these), with how each is written.
 */
export const STAGE_IDS: Readonly<
  Record<'planner' | 'selector', { backends: readonly string[]; usage: string }>
> = {
  planner: {
    backends: ['rule', 'none', ...MODEL_BACKENDS],
    usage: 'rule, none, llm:onnx:<dir>, llm:openai:<model>, onnx:<dir>, openai:<model>',
  },
  selector: {
    backends: ['top1', 'learned', ...MODEL_BACKENDS],
    usage:
      'top1, learned, learned:<model.json>, llm:onnx:<dir>, llm:openai:<model>, onnx:<dir>, openai:<model>',
  },
}

/**
 * Why a `plan.fallback` / `select.fallback` list (of `stage`) is wrong, or undefined: an entry
 * that is no component of that stage (`plan.fallback` `top1`, a selector: before round 43
 * accepted, and an `llm:` planner failed to load, or a request failed, when it was needed; a
 * model backend without its model), an entry after one that calls no model is never tried
 * (`rule`, `top1`, `learned` answer every time), and an entry listed twice is tried once. Without
 * a final period: the config error that quotes it adds one.
 */
export function fallbackChainProblem(
  chain: readonly string[],
  stage: 'planner' | 'selector',
): string | undefined {
  const { backends, usage } = STAGE_IDS[stage]
  const wrong = chain.find((entry) => {
    const { backend, argument } = parseComponentId(entry.trim())
    return !backends.includes(backend) || (MODEL_BACKENDS.has(backend) && argument === '')
  })
  if (wrong !== undefined)
    return `"${wrong.trim().slice(0, 100)}" is no ${stage}; a ${stage} fallback is one of: ${usage}`
  const names = chain.map(componentName)
  const twice = names.find((name, index) => names.indexOf(name) !== index)
  if (twice !== undefined) return `"${twice}" is listed twice; each entry is tried once`
  const embedded = chain.findIndex((entry) => !isModelBacked(entry))
  if (embedded >= 0 && embedded < chain.length - 1)
    return `"${chain[embedded]}" calls no model and always answers, so the entries after it (${chain
      .slice(embedded + 1)
      .map((entry) => `"${entry}"`)
      .join(', ')}) would never be tried; end the list with it`
  return undefined
}

/** A model-backed planner's or selector's name: `llm(<model id>)` (`llm(openai:m)`). */
export function llmComponentName(modelId: string): string {
  return `llm(${modelId})`
}

/**
 * The planner, reranker and selector ids the config names: the defaults and the fallbacks (every
 * entry of each list; none when unset). The components never evicted from the cache, and ones a
 * request may name. (The config's shape, not its type: config/schema.ts's imports lead back here.)
 */
export function configuredComponentIds(config: {
  plan: { planner: string; fallback: readonly string[] }
  rerank: { reranker: string }
  select: { selector: string; fallback: readonly string[] }
}): string[] {
  return [
    config.plan.planner,
    ...config.plan.fallback,
    config.rerank.reranker,
    config.select.selector,
    ...config.select.fallback,
  ]
}
