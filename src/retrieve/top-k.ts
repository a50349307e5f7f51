/**
 * A bounded min-heap over (position, score) pairs in typed arrays: exact top-k of n scores in
 * O(n log k) without allocating per candidate. Shared by the BM25 and the vector retrievers.
 * Order: score descending, then ties by position ascending, or by the caller's tie order (BM25
 * breaks ties by tool id so results don't depend on library order). A caller that runs one query
 * at a time may keep one and `reset` it per query instead of making two typed arrays each time.
 * @module
 */

export interface ScoredPosition {
  position: number
  score: number
}

export class TopK {
  #k: number
  #positions: Int32Array
  #scores: Float64Array
  readonly #after: (a: number, b: number) => boolean
  #size = 0

  /**
   * @param k How many pairs to keep; 0 keeps none.
   * @param after Whether position `a` ranks after `b` when their scores tie. Default `a > b`.
   */
  constructor(k: number, after: (a: number, b: number) => boolean = (a, b) => a > b) {
    this.#after = after
    this.#k = Math.max(0, Math.floor(k))
    this.#positions = new Int32Array(this.#k)
    this.#scores = new Float64Array(this.#k)
  }

  /**
   * Empties it to keep `k` pairs, on the same arrays while they hold k (`sorted` has copied out
   * what it kept before). Returns itself.
   */
  reset(k: number): this {
    const kept = Math.max(0, Math.floor(k))
    // k = 0 (or NaN) takes empty arrays, as a new TopK(0) does: no old score is read there.
    if (!(kept > 0) || kept > this.#positions.length) {
      this.#positions = new Int32Array(kept)
      this.#scores = new Float64Array(kept)
    }
    this.#k = kept
    this.#size = 0
    return this
  }

  /** How many pairs it keeps. */
  get k(): number {
    return this.#k
  }

  /** The worst kept score, or -Infinity while fewer than k are kept (a cheap pre-filter). */
  get threshold(): number {
    return this.#size < this.#k ? -Infinity : this.#scores[0]
  }

  push(position: number, score: number): void {
    if (this.#k === 0 || Number.isNaN(score)) return
    if (this.#size < this.#k) {
      this.#positions[this.#size] = position
      this.#scores[this.#size] = score
      this.#siftUp(this.#size++)
    } else if (this.#worse(0, position, score)) {
      this.#positions[0] = position
      this.#scores[0] = score
      this.#siftDown(0)
    }
  }

  /**
   * The kept pairs, best first. The heap's arrays are sorted worst first in place (insertion: k
   * is small), which leaves a valid heap (every parent before its children), and read back to
   * front: no comparator closure or `Array.prototype.sort` (BM25 sorts 3-4 heaps per request).
   */
  sorted(): ScoredPosition[] {
    const positions = this.#positions
    const scores = this.#scores
    const size = this.#size
    for (let at = 1; at < size; at += 1) {
      const position = positions[at]
      const score = scores[at]
      let to = at
      // Slot to-1 moves up while (position, score) ranks below it.
      while (to > 0 && !this.#worse(to - 1, position, score)) {
        positions[to] = positions[to - 1]
        scores[to] = scores[to - 1]
        to -= 1
      }
      positions[to] = position
      scores[to] = score
    }
    const hits: ScoredPosition[] = new Array(size)
    for (let slot = 0; slot < size; slot += 1) {
      hits[slot] = { position: positions[size - 1 - slot], score: scores[size - 1 - slot] }
    }
    return hits
  }

  /** Whether the pair in `slot` ranks below (position, score). The root is the worst kept pair. */
  #worse(slot: number, position: number, score: number): boolean {
    const slotScore = this.#scores[slot]
    return (
      slotScore < score || (slotScore === score && this.#after(this.#positions[slot], position))
    )
  }

  #swap(a: number, b: number): void {
    const position = this.#positions[a]
    const score = this.#scores[a]
    this.#positions[a] = this.#positions[b]
    this.#scores[a] = this.#scores[b]
    this.#positions[b] = position
    this.#scores[b] = score
  }

  #siftUp(start: number): void {
    let child = start
    while (child > 0) {
      const parent = (child - 1) >> 1
      if (!this.#worse(child, this.#positions[parent], this.#scores[parent])) return
      this.#swap(child, parent)
      child = parent
    }
  }

  #siftDown(start: number): void {
    let parent = start
    for (;;) {
      const left = 2 * parent + 1
      const right = left + 1
      let worst = parent
      if (left < this.#size && this.#worse(left, this.#positions[worst], this.#scores[worst])) {
        worst = left
      }
      if (right < this.#size && this.#worse(right, this.#positions[worst], this.#scores[worst])) {
        worst = right
      }
      if (worst === parent) return
      this.#swap(worst, parent)
      parent = worst
    }
  }
}
