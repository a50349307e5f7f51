/**
 * Which model-backed planners and selectors are failing now, from what every selection reports:
 * a component that fell back (`components.fallbacks`: its endpoint refused the key, is down,
 * answered something unusable) is degraded until a later selection uses it without falling back;
 * a stand-in of a fallback list whose endpoint failed, also once the `openai:` model it stood in
 * for answers again (it is asked no more; `#clearStandIns`).
 * `/readyz` lists the degraded ones (`degraded`) and `/metrics` has them as
 * `toolsel_model_degraded`: the fallbacks answer every request meanwhile, so the service stays
 * ready, but an operator sees which model endpoint to fix without reading the log (whose fallback
 * warning is logged once a minute). Timeouts do not fall back (the request fails with TIMEOUT,
 * counted by status in `toolsel_http_requests_total`) and are not tracked here.
 * @module
 */
import { componentName, isModelBacked, nextFallback } from '../component-id.ts'
import type { Config } from '../config/schema.ts'
import type { Fallback } from '../contracts.ts'
import type { ModelUse, StartupFailure } from '../models/openai/check-api-key.ts'
import type { SelectToolsResult } from '../pipeline.ts'

/** Characters of the failure's message kept (it quotes the endpoint's answer). */
const MAX_MESSAGE_CHARS = 300
/** Components tracked at most (the configured ones, their fallbacks, allowed request ids). */
const MAX_TRACKED = 64

export interface DegradedModel {
  stage: Fallback['stage']
  /** The component that fell back, as `components.fallbacks[].from` names it. */
  component: string
  /**
   * The component that answered instead; absent for a configured fallback that is a model and
   * that the start-up check found failing (nothing stands in for it: a request whose planner or
   * selector fails while it does fails).
   */
  fallback?: string
  code: string
  /** The HTTP status its endpoint answered with (absent when it did not answer). */
  status?: number
  message: string
  /** When it first fell back since it last worked, and when last (ISO 8601). */
  since: string
  lastFailure: string
  /** Fallbacks since it last worked. */
  failures: number
}

/**
 * A component the start-up check found failing, as a fallback of it would report it
 * (`startupFallbacks`); `to` is absent for a failing fallback, which has none.
 */
export type StartupFallback = Omit<Fallback, 'to'> & { to?: string }

/**
 * What one selection showed of its components (`ModelHealth.observe`): the fallbacks (without
 * `raw`, messages cut), and the degraded components it used without a fallback. Under
 * `serve --workers N` each worker sends its reports to the primary (cluster-model-health.ts).
 */
export interface HealthReport {
  failed: Fallback[]
  worked: Array<{ stage: Fallback['stage']; component: string }>
}

export class ModelHealth {
  readonly #degraded = new Map<string, DegradedModel>()
  readonly #now: () => Date
  /** Given every report that changes something (a worker of `--workers N`: to the primary). */
  onReport: ((report: HealthReport) => void) | undefined

  constructor(now = () => new Date()) {
    this.#now = now
  }

  /** Records what `result` shows of its planner and selector. */
  observe(result: SelectToolsResult): void {
    // The common case (every request with no model endpoint): nothing failed, nothing to clear.
    if (result.components.fallbacks.length === 0 && this.#degraded.size === 0) return
    const report: HealthReport = { failed: [], worked: [] }
    const failed = new Set<string>()
    for (const { raw: _raw, ...fallback } of result.components.fallbacks) {
      failed.add(keyOf(fallback.stage, fallback.from))
      report.failed.push({ ...fallback, message: fallback.message.slice(0, MAX_MESSAGE_CHARS) })
    }
    // The planner worked when the result names it with no planner fallback; the selector when
    // some step had candidates to ask it about and none of its steps fell back.
    const { planner, selector } = result.components
    const worked = (stage: Fallback['stage'], component: string) => {
      const key = keyOf(stage, component)
      if (!failed.has(key) && this.#degraded.has(key)) report.worked.push({ stage, component })
    }
    worked('planner', planner)
    if (result.steps.some((step) => step.candidates.length > 0)) worked('selector', selector)
    // A fallback that answered worked too (a selector's fallback is named only here).
    for (const fallback of result.components.fallbacks) worked(fallback.stage, fallback.to)
    if (report.failed.length === 0 && report.worked.length === 0) return
    this.apply(report)
    this.onReport?.(report)
  }

  /**
   * Records a report: its fallbacks' components are degraded, its worked ones no longer, nor the
   * stand-ins below a worked one (`#clearStandIns`) whose failure its answer disproves.
   */
  apply(report: HealthReport): void {
    for (const fallback of report.failed) this.markFailing(fallback)
    const failed = new Set(report.failed.map((fallback) => keyOf(fallback.stage, fallback.from)))
    for (const { stage, component } of report.worked) {
      const key = keyOf(stage, component)
      const entry = this.#degraded.get(key)
      this.#degraded.delete(key)
      if (entry) this.#clearStandIns(entry, failed)
    }
  }

  /**
   * After `recovered` worked: its stand-ins (its `fallback`, that one's, and so on down its list)
   * are asked no more, so their entries would stay as they were, however old, until it fails
   * again (round 42 left a fallback model listed for good after an outage). Those that failed
   * for what `recovered`'s answer shows fixed are removed: an endpoint failure (unreachable,
   * 429/5xx: UPSTREAM_UNAVAILABLE; the key refused: 401/403) of an `openai:` model, when
   * `recovered` is one too (all of them call models.openai.baseUrl with models.openai.apiKey).
   * A failure of the model itself (404: a model name the endpoint does not list, an answer that
   * could not be used), or of another backend, stays until the stand-in is used again and works:
   * the answer of another model says nothing of it; its `lastFailure` says how old it is.
   */
  #clearStandIns(recovered: DegradedModel, failed: ReadonlySet<string>): void {
    if (!isOpenAiComponent(recovered.component)) return
    const seen = new Set<string>([recovered.component])
    for (let next = recovered.fallback; next !== undefined && !seen.has(next);) {
      seen.add(next)
      const key = keyOf(recovered.stage, next)
      const standIn = this.#degraded.get(key)
      if (!standIn) return
      if (!failed.has(key) && isOpenAiComponent(next) && endpointFailure(standIn))
        this.#degraded.delete(key)
      next = standIn.fallback
    }
  }

  /**
   * Marks `fallback.from` failing as a selection that fell back would (the start-up check's
   * findings, `startupFallbacks`): until a use works.
   */
  markFailing(fallback: StartupFallback): void {
    this.#fail(keyOf(fallback.stage, fallback.from), fallback)
  }

  /**
   * Takes `entries` as the degraded components (a worker of `--workers N`: the primary's, which
   * every worker's reports make), at most MAX_TRACKED of them.
   */
  replace(entries: readonly DegradedModel[]): void {
    this.#degraded.clear()
    for (const entry of entries.slice(-MAX_TRACKED))
      this.#degraded.set(keyOf(entry.stage, entry.component), { ...entry })
  }

  /** The components whose latest use fell back, oldest failure first. */
  degraded(): DegradedModel[] {
    return [...this.#degraded.values()].map((entry) => ({ ...entry }))
  }

  #fail(key: string, fallback: StartupFallback): void {
    const at = this.#now().toISOString()
    const entry = this.#degraded.get(key)
    const failure = {
      ...(fallback.to === undefined ? {} : { fallback: fallback.to }),
      code: fallback.code,
      ...(fallback.status === undefined ? {} : { status: fallback.status }),
      message: fallback.message.slice(0, MAX_MESSAGE_CHARS),
      lastFailure: at,
    }
    if (entry) {
      // The latest failure's fields replace the previous one's (a status may change).
      delete entry.status
      delete entry.fallback
      Object.assign(entry, failure, { failures: entry.failures + 1 })
      return
    }
    if (this.#degraded.size >= MAX_TRACKED) {
      const oldest = this.#degraded.keys().next().value
      if (oldest !== undefined) this.#degraded.delete(oldest)
    }
    this.#degraded.set(key, {
      stage: fallback.stage,
      component: fallback.from,
      ...failure,
      since: at,
      failures: 1,
    })
  }
}

/**
 * The configured planners and selectors that `toolsel serve`'s start-up check found failing (an
 * endpoint unreachable, a model it does not list), as the fallbacks each of their calls would
 * report: `/readyz` `degraded` shows them from the start, not from the first request that falls
 * back. One with no fallback configured is left out (its requests fail instead). So is a
 * configured fallback that is a model (`plan.fallback` `openai:b`) found failing, keyed as the
 * rest by its stage and component name, with `to` the next entry of its list (none for the last,
 * whose failure fails the request): when the configured component is a model too (one that uses
 * its fallbacks) and is another one.
 */
export function startupFallbacks(
  failing: readonly StartupFailure[],
  config: Config,
): StartupFallback[] {
  const stages = [
    ['planner', config.plan.planner, config.plan.fallback],
    ['selector', config.select.selector, config.select.fallback],
  ] as const
  const fallbacks: StartupFallback[] = []
  const chainOf = (stage: Fallback['stage']) =>
    stage === 'planner' ? config.plan.fallback : config.select.fallback
  const entry = (stage: Fallback['stage'], from: string, failure: StartupFailure) => {
    const to = nextFallback(from, chainOf(stage))
    return {
      stage,
      from: componentName(from),
      ...(to === undefined ? {} : { to: componentName(to) }),
      code: failure.code,
      message: failure.message,
      ...(failure.status === undefined ? {} : { status: failure.status }),
    }
  }
  for (const [stage, id, chain] of stages) {
    if (chain.length === 0) continue
    const failure = failing.find((each) => each.user === id)
    if (failure) fallbacks.push(entry(stage, id, failure))
    if (!isModelBacked(id)) continue
    for (const fallback of chain) {
      const own = failing.find((each) => each.user === fallback)
      if (own && componentName(fallback) !== componentName(id))
        fallbacks.push(entry(stage, fallback, own))
    }
  }
  return fallbacks
}

/** Whether component name `name` is an `openai:` model's (`llm(openai:m)`). */
function isOpenAiComponent(name: string): boolean {
  return name.startsWith('llm(openai:')
}

/**
 * Whether `entry` failed for its endpoint, not its model: unreachable, or 429/5xx after the
 * retries (UPSTREAM_UNAVAILABLE), or the key refused (401/403).
 */
function endpointFailure(entry: DegradedModel): boolean {
  return entry.code === 'UPSTREAM_UNAVAILABLE' || entry.status === 401 || entry.status === 403
}

/**
 * How planner or selector id `id` (a configured one, or an entry of a fallback list) is used: in
 * each stage whose planner or selector it is or whose fallback list has it, what stands in when
 * its call fails (`nextFallback`, as components.ts builds it), none when the request fails. What
 * the start-up check's warning about it says (check-api-key.ts `unlistedModel`).
 */
export function modelUses(id: string, config: Config): ModelUse[] {
  const name = componentName(id)
  const uses: ModelUse[] = []
  for (const [stage, configured, chain] of [
    ['planner', config.plan.planner, config.plan.fallback],
    ['selector', config.select.selector, config.select.fallback],
  ] as const) {
    const isConfigured = componentName(configured) === name
    if (!isConfigured && !chain.some((entry) => componentName(entry) === name)) continue
    const next = nextFallback(id, chain)
    uses.push({
      stage,
      configured: isConfigured,
      ...(next === undefined ? {} : { fallback: componentName(next) }),
    })
  }
  return uses
}

function keyOf(stage: string, component: string): string {
  return `${stage}\u0000${component}`
}
