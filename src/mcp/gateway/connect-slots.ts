/**
 * The bound on upstreams connecting at once (`gateway.connectConcurrency`): a counting semaphore
 * whose waiters are served first come, first served. 1,000 stdio servers started together are
 * 1,000 processes competing for the CPU, each slowed until all of them miss `spawnTimeoutMs`
 * together and retry together (bench/README "Round 31: the gateway's start-up (gw4)").
 * @module
 */

export class ConnectSlots {
  readonly size: number
  #busy = 0
  readonly #waiting: Array<() => void> = []

  constructor(size: number) {
    this.size = size
  }

  /** Connections running now. */
  get busy(): number {
    return this.#busy
  }

  /** Connections waiting for a slot. */
  get waiting(): number {
    return this.#waiting.length
  }

  /** Resolves once a slot is free, with the function that frees it (call it exactly once). */
  async acquire(): Promise<() => void> {
    if (this.#busy < this.size) this.#busy += 1
    else await new Promise<void>((resolve) => this.#waiting.push(resolve))
    let released = false
    return () => {
      if (released) return
      released = true
      // The slot passes straight to the next waiter (busy stays the same), else it is freed.
      const next = this.#waiting.shift()
      if (next) next()
      else this.#busy -= 1
    }
  }
}
