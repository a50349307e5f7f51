/**
 * Planners and selectors whose construction is asynchronous (they load a language model) behind
 * the synchronous component lookup: the wrapper is returned at once, the model loads in the
 * background, and calls wait for it. `ready()` surfaces a load failure (used at start-up, so a
 * bad model directory fails the service before it reports ready).
 * @module
 */
import type {
  CallOptions,
  Planner,
  PlanResult,
  Selection,
  SelectionRequest,
  SelectOptions,
  Selector,
} from './contracts.ts'

abstract class LazyComponent<T extends { readonly name: string }> {
  readonly #pendingName: string
  readonly #loading: Promise<T>
  #loaded: T | undefined
  #failed = false

  constructor(pendingName: string, load: () => Promise<T>) {
    this.#pendingName = pendingName
    this.#loading = load().then((component) => (this.#loaded = component))
    // Failures are reported by ready() and by each call; don't crash on an unobserved rejection.
    this.#loading.catch(() => (this.#failed = true))
  }

  /** `loading` until the model is loaded (`loaded`) or failed to load (`failed`). */
  get state(): 'loading' | 'loaded' | 'failed' {
    return this.#loaded ? 'loaded' : this.#failed ? 'failed' : 'loading'
  }

  /** The loaded component's name, or `llm(<model id>)` while it loads. */
  get name(): string {
    return this.#loaded?.name ?? this.#pendingName
  }

  /** Resolves once loaded; rejects with the load error (MODEL_LOAD_FAILED, INVALID_CONFIG…). */
  async ready(): Promise<void> {
    await this.#loading
  }

  protected get component(): Promise<T> {
    return this.#loading
  }
}

export class LazyPlanner extends LazyComponent<Planner> implements Planner {
  async plan(instruction: string, options?: CallOptions): Promise<PlanResult> {
    return (await this.component).plan(instruction, options)
  }
}

export class LazySelector extends LazyComponent<Selector> implements Selector {
  async select(requests: SelectionRequest[], options?: SelectOptions): Promise<Selection[]> {
    return (await this.component).select(requests, options)
  }
}

export function isLazy(
  component: unknown,
): component is { ready(): Promise<void>; readonly state: 'loading' | 'loaded' | 'failed' } {
  return component instanceof LazyComponent
}
