/**
 * The bound on upstreams connecting at once (`gateway.connectConcurrency`): a counting semaphore
 * whose waiters are served first come, first served. 1,000 stdio servers started together are
 * 1,000 processes competing for the CPU, each slowed until all of them miss `spawnTimeoutMs`
 * together and retry together (bench/README "Round 31: the gateway's start-up (gw4)").
 *
 * Not `p-limit` (a transitive dependency): its slot is held until the limited function settles,
 * and a connect attempt gives its slot back after `gateway.connectSlotMs` while it goes on; its
 * `clearQueue()` leaves the queued calls' promises pending unless told to reject them. This is
 * the semaphore with both, in a few lines.
 * @module
 */

export class ConnectSlots {
  readonly size: number
  #busy = 0
  #closed = false
  readonly #waiting: Array<(slot: boolean) => void> = []

  constructor(size: number) {
    this.size = size
  }

  /** Connections holding a slot now. */
  get busy(): number {
    return this.#busy
  }

  /** Connections waiting for a slot. */
  get waiting(): number {
    return this.#waiting.length
  }

  /**
   * Resolves once a slot is free, with the function that frees it (idempotent), or with
   * undefined once `close()` was called: then the caller must not connect.
   */
  async acquire(): Promise<(() => void) | undefined> {
    if (this.#closed) return undefined
    if (this.#busy < this.size) this.#busy += 1
    else if (!(await new Promise<boolean>((resolve) => this.#waiting.push(resolve))))
      return undefined
    let released = false
    return () => {
      if (released) return
      released = true
      // The slot passes straight to the next waiter (busy stays the same), else it is freed.
      const next = this.#waiting.shift()
      if (next) next(true)
      else this.#busy -= 1
    }
  }

  /** Every waiter resolves now, without a slot, and so does every later `acquire()`. */
  close(): void {
    this.#closed = true
    for (const waiter of this.#waiting.splice(0)) waiter(false)
  }
}
