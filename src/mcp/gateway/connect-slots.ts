/**
 * The bound on upstreams connecting at once (`gateway.connectConcurrency`): a counting semaphore
 * whose waiters are served first come, first served. 1,000 stdio servers started together are
 * 1,000 processes competing for the CPU, each slowed until all of them miss `spawnTimeoutMs`
 * together and retry together (bench/README "Round 31: the gateway's start-up (gw4)").
 *
 * An attempt past `gateway.connectSlotMs` may step out of the pool (its slot goes to the next in
 * line; it goes on to its own timeouts), at most `size` of them at once: a server hung at
 * start-up then holds no slot, while a herd of servers that are only slow (busy starting on a
 * loaded host) cannot all step out and so grow into the very herd the pool prevents (100 node
 * servers of 1 s CPU each, stepping out unbounded: 83 running at once, none connected in 240 s;
 * bench/README "Round 32: the gateway's connect pool (gw5)").
 *
 * Not `p-limit` (a transitive dependency): its slot is held until the limited function settles
 * (stepping out would need a race wrapper and a second count), and its `clearQueue()` leaves the
 * queued calls' promises pending unless told to reject them.
 * @module
 */

/** A slot taken by `ConnectSlots.acquire()`. */
export interface ConnectSlot {
  /** Gives the slot back (or the place outside, after `stepOut()`); idempotent. */
  release(): void
  /**
   * Gives the slot to the next in line while the attempt goes on, when fewer than `size`
   * attempts are out already; true if it stepped out.
   */
  stepOut(): boolean
}

export class ConnectSlots {
  readonly size: number
  #busy = 0
  #outside = 0
  #closed = false
  readonly #waiting: Array<(slot: boolean) => void> = []

  constructor(size: number) {
    this.size = size
  }

  /** Connections holding a slot now. */
  get busy(): number {
    return this.#busy
  }

  /** Connections that stepped out of the pool and still run. */
  get outside(): number {
    return this.#outside
  }

  /** Connections waiting for a slot. */
  get waiting(): number {
    return this.#waiting.length
  }

  /**
   * Resolves once a slot is free, or with undefined once `close()` was called: then the caller
   * must not connect.
   */
  async acquire(): Promise<ConnectSlot | undefined> {
    if (this.#closed) return undefined
    if (this.#busy < this.size) this.#busy += 1
    else if (!(await new Promise<boolean>((resolve) => this.#waiting.push(resolve))))
      return undefined
    let state: 'in' | 'out' | 'released' = 'in'
    return {
      release: () => {
        if (state === 'out') this.#outside -= 1
        else if (state === 'in') this.#passOn()
        state = 'released'
      },
      stepOut: () => {
        if (state !== 'in' || this.#outside >= this.size) return false
        state = 'out'
        this.#outside += 1
        this.#passOn()
        return true
      },
    }
  }

  /** Every waiter resolves now, without a slot, and so does every later `acquire()`. */
  close(): void {
    this.#closed = true
    for (const waiter of this.#waiting.splice(0)) waiter(false)
  }

  /** The slot passes straight to the next waiter (busy stays the same), else it is freed. */
  #passOn(): void {
    const next = this.#waiting.shift()
    if (next) next(true)
    else this.#busy -= 1
  }
}
