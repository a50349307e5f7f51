/**
 * Which misses a bounded cache keeps: every one until `capacity` are kept, then one miss in
 * KEEP_ONE_MISS_IN, in the place of the entry kept longest. What the requests use now comes in at
 * a rate that leaves each kept entry many requests to be asked for again, so a pass over more
 * distinct keys than the cache holds does not replace nearly every entry (the two generations of
 * 16,384 that the response writer's candidate prefixes and the tool memo had until rounds 44 and
 * 45 did: bench/README.md, "Round 44" and "Round 45"). A miss not kept is answered with a value
 * made for that request only, which dies young.
 *
 * The ring holds the keys only; the cache holds the values its own way (a Map, paged arrays) and
 * drops a replaced key's value in `evict`.
 * @module
 */

/** A full ring keeps one in this many of the keys it is offered. */
export const KEEP_ONE_MISS_IN = 8

export class KeepRing<K> {
  readonly capacity: number
  readonly #evict: (key: K) => void
  /** The keys kept, by place; a full ring's next keep replaces the one at `#oldest`. */
  readonly #keys: K[] = []
  #oldest = 0
  /** Misses offered since the last one kept, once the ring is full. */
  #missed = 0

  /** `evict`: drops the value of a key the ring no longer keeps (called before `admit` returns). */
  constructor(capacity: number, evict: (key: K) => void) {
    this.capacity = Math.max(1, Math.floor(capacity))
    this.#evict = evict
  }

  /** Keys kept. */
  get size(): number {
    return this.#keys.length
  }

  /** Whether the cache keeps `key`, a miss (not kept now): when it replaces one, that one is evicted. */
  admit(key: K): boolean {
    const keys = this.#keys
    if (keys.length < this.capacity) {
      keys.push(key)
      return true
    }
    if (++this.#missed !== KEEP_ONE_MISS_IN) return false
    this.#missed = 0
    this.#evict(keys[this.#oldest]!)
    keys[this.#oldest] = key
    this.#oldest = (this.#oldest + 1) % this.capacity
    return true
  }
}
