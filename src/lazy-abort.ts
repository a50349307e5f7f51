/**
 * A request's abort whose `AbortSignal` is made only when some code asks for it. Node 20 takes
 * 6-12 µs to make an AbortSignal (its EventTarget gets a new prototype), about 1.5% of the CPU of
 * a `/v1/select-tools` request at 10k tools, and the in-process components (rule planner, BM25,
 * learned selector) never read one: their work runs without yielding to the event loop, so
 * neither a deadline's timer nor a client's `close` can fire while it runs, and the pipeline
 * checks `aborted` between its stages. A component that does wait (a model call, an embedding)
 * reads `signal` and gets a real one, aborted at once when the abort came first.
 * @module
 */
import type { RetryBudget } from './contracts.ts'

export class LazyAbort {
  #controller: AbortController | undefined
  #aborted = false
  #reason: unknown

  get aborted(): boolean {
    return this.#aborted
  }

  /** Why it was aborted (undefined until then). */
  get reason(): unknown {
    return this.#reason
  }

  /** The AbortSignal, made on first use. */
  get signal(): AbortSignal {
    if (this.#controller === undefined) {
      this.#controller = new AbortController()
      if (this.#aborted) this.#controller.abort(this.#reason)
    }
    return this.#controller.signal
  }

  /** Aborts with `reason`; later calls change nothing (like `AbortController.abort`). */
  abort(reason: unknown): void {
    if (this.#aborted) return
    this.#aborted = true
    this.#reason = reason
    this.#controller?.abort(reason)
  }
}

/** A caller's abort: an AbortSignal, or a LazyAbort whose signal is made when read. */
export type AbortInput = AbortSignal | LazyAbort

/** The AbortSignal of `abort` (made now for a LazyAbort that has none yet). */
export function signalOf(abort: AbortInput | undefined): AbortSignal | undefined {
  return abort instanceof LazyAbort ? abort.signal : abort
}

/**
 * What `lazySignal` returns: `signal` is a getter of the class, not of each object. An object
 * literal with a getter (`{ get signal() {…} }`) is built by a runtime call that makes a new
 * accessor pair and closure every time: about 2 µs against 0.1 µs for this class (node 20,
 * three per `/v1/select-tools` request).
 */
class LazySignal {
  readonly #abort: AbortInput | undefined
  /** The request's shared model-call retries (`CallOptions.retries`), when it has some. */
  readonly retries: RetryBudget | undefined

  constructor(abort: AbortInput | undefined, retries: RetryBudget | undefined) {
    this.#abort = abort
    this.retries = retries
  }

  get signal(): AbortSignal | undefined {
    return signalOf(this.#abort)
  }
}

/**
 * `{ signal, retries }` for a component's options (CallOptions): the signal is made only when the
 * component reads it.
 */
export function lazySignal(
  abort: AbortInput | undefined,
  retries?: RetryBudget,
): { readonly signal?: AbortSignal; readonly retries?: RetryBudget } {
  return new LazySignal(abort, retries)
}

/**
 * A retriever call's `options`, with a lazy `signal` unless the retriever is `synchronous` (BM25:
 * it runs to its end without waiting, so it could not react to one; the caller checks the abort
 * before the call instead).
 */
export function retrieveOptions<T extends object>(
  synchronous: boolean | undefined,
  abort: AbortInput | undefined,
  options: T,
): T & { readonly signal?: AbortSignal } {
  return synchronous ? options : Object.assign(lazySignal(abort), options)
}
