/**
 * Which model-backed planners and selectors are failing now, from what every selection reports:
 * a component that fell back (`components.fallbacks`: its endpoint refused the key, is down,
 * answered something unusable) is degraded until a later selection uses it without falling back.
 * `/readyz` lists the degraded ones (`degraded`) and `/metrics` has them as
 * `toolsel_model_degraded`: the fallbacks answer every request meanwhile, so the service stays
 * ready, but an operator sees which model endpoint to fix without reading the log (whose fallback
 * warning is logged once a minute). Timeouts do not fall back (the request fails with TIMEOUT,
 * counted by status in `toolsel_http_requests_total`) and are not tracked here.
 * @module
 */
import type { Fallback } from '../contracts.ts'
import type { SelectToolsResult } from '../pipeline.ts'

/** Characters of the failure's message kept (it quotes the endpoint's answer). */
const MAX_MESSAGE_CHARS = 300
/** Components tracked at most (the configured ones, their fallbacks, allowed request ids). */
const MAX_TRACKED = 64

export interface DegradedModel {
  stage: Fallback['stage']
  /** The component that fell back, as `components.fallbacks[].from` names it. */
  component: string
  /** The component that answered instead. */
  fallback: string
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

export class ModelHealth {
  readonly #degraded = new Map<string, DegradedModel>()
  readonly #now: () => Date

  constructor(now = () => new Date()) {
    this.#now = now
  }

  /** Records what `result` shows of its planner and selector. */
  observe(result: SelectToolsResult): void {
    const failed = new Set<string>()
    for (const fallback of result.components.fallbacks) {
      const key = keyOf(fallback.stage, fallback.from)
      failed.add(key)
      this.#fail(key, fallback)
    }
    // The planner worked when the result names it with no planner fallback; the selector when
    // some step had candidates to ask it about and none of its steps fell back.
    const { planner, selector } = result.components
    if (!failed.has(keyOf('planner', planner))) this.#degraded.delete(keyOf('planner', planner))
    const asked = result.steps.some((step) => step.candidates.length > 0)
    if (asked && !failed.has(keyOf('selector', selector)))
      this.#degraded.delete(keyOf('selector', selector))
  }

  /** The components whose latest use fell back, oldest failure first. */
  degraded(): DegradedModel[] {
    return [...this.#degraded.values()].map((entry) => ({ ...entry }))
  }

  #fail(key: string, fallback: Fallback): void {
    const at = this.#now().toISOString()
    const entry = this.#degraded.get(key)
    const failure = {
      fallback: fallback.to,
      code: fallback.code,
      ...(fallback.status === undefined ? {} : { status: fallback.status }),
      message: fallback.message.slice(0, MAX_MESSAGE_CHARS),
      lastFailure: at,
    }
    if (entry) {
      // The latest failure's fields replace the previous one's (a status may change).
      delete entry.status
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

function keyOf(stage: string, component: string): string {
  return `${stage}\u0000${component}`
}
