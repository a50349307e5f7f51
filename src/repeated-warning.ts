/**
 * A warning that repeats on every request while its cause lasts (an LLM endpoint refusing the API
 * key: each request's planner and selector fall back and warn) is logged once per `intervalMs`
 * per kind (component, error code, HTTP status); the next one logged says how many were left out
 * (`repeated`). Before, a revoked key wrote one WARN per step of every request.
 * @module
 */
import type { ToolselError } from './errors.ts'
import type { Logger } from './log.ts'

/** How long a kind of warning stays quiet after it was logged. */
export const REPEATED_WARNING_INTERVAL_MS = 60_000

export class RepeatedWarning {
  readonly #logger: Logger
  readonly #intervalMs: number
  readonly #now: () => number
  /** By kind: when it was last logged and how many were left out since. */
  readonly #kinds = new Map<string, { at: number; leftOut: number }>()

  constructor(logger: Logger, intervalMs = REPEATED_WARNING_INTERVAL_MS, now = Date.now) {
    this.#logger = logger
    this.#intervalMs = intervalMs
    this.#now = now
  }

  /**
   * A component's fallback warning: `from` failed with `error` and `to` answers instead; its kind
   * is the error's code and HTTP status (a refused key, an endpoint down).
   */
  fallback(message: string, error: ToolselError, from: string, to: string): void {
    this.warn(`${error.code} ${String(error.details.status ?? '')}`, message, {
      from,
      to,
      code: error.code,
      message: error.message,
    })
  }

  /** Logs `message` unless a warning of `kind` was logged less than the interval ago. */
  warn(kind: string, message: string, fields: Record<string, unknown>): void {
    const now = this.#now()
    const last = this.#kinds.get(kind)
    if (last && now - last.at < this.#intervalMs) {
      last.leftOut += 1
      return
    }
    // Kinds are few (component × code × status); bounded anyway.
    if (!last && this.#kinds.size >= 64) this.#kinds.clear()
    this.#kinds.set(kind, { at: now, leftOut: 0 })
    const repeated = last?.leftOut ?? 0
    this.#logger.warn(
      message,
      repeated > 0
        ? {
            ...fields,
            repeated: `${repeated} more like it in the last ${Math.round((now - last!.at) / 1000)} s, not logged`,
          }
        : fields,
    )
  }
}
