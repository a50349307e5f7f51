/**
 * Top-k selection over sparse scores with a bounded min-heap: O(n log k) instead of sorting every
 * matching document. Order: score descending, then id ascending, so results are deterministic.
 * @module
 */

export interface Scored {
  doc: number
  score: number
}

/** Returns the `k` best of `docs` whose score is strictly above `minScore`, best first. */
export function topKAbove(
  docs: readonly number[],
  scores: Float64Array,
  k: number,
  minScore: number,
  ids: readonly string[],
): Scored[] {
  if (k <= 0) return []
  // "worse" is the heap order: the root is the worst of the kept entries.
  const worse = (a: Scored, b: Scored) =>
    a.score < b.score || (a.score === b.score && ids[a.doc] > ids[b.doc])
  const heap: Scored[] = []
  for (const doc of docs) {
    const score = scores[doc]
    if (!(score > minScore)) continue
    const entry = { doc, score }
    if (heap.length < k) {
      heap.push(entry)
      siftUp(heap, heap.length - 1, worse)
    } else if (worse(heap[0], entry)) {
      heap[0] = entry
      siftDown(heap, 0, worse)
    }
  }
  return heap.sort((a, b) => (worse(a, b) ? 1 : worse(b, a) ? -1 : 0))
}

type Compare = (a: Scored, b: Scored) => boolean

function siftUp(heap: Scored[], start: number, worse: Compare): void {
  let child = start
  while (child > 0) {
    const parent = (child - 1) >> 1
    if (!worse(heap[child], heap[parent])) return
    ;[heap[child], heap[parent]] = [heap[parent], heap[child]]
    child = parent
  }
}

function siftDown(heap: Scored[], start: number, worse: Compare): void {
  let parent = start
  for (;;) {
    const left = 2 * parent + 1
    const right = left + 1
    let smallest = parent
    if (left < heap.length && worse(heap[left], heap[smallest])) smallest = left
    if (right < heap.length && worse(heap[right], heap[smallest])) smallest = right
    if (smallest === parent) return
    ;[heap[smallest], heap[parent]] = [heap[parent], heap[smallest]]
    parent = smallest
  }
}
