/**
 * The usage examples of one library: immutable, de-duplicated, capped, versioned. Every change
 * makes a new set with the next version, so a request holding a set sees it whole.
 * @module
 */
import { createHash } from 'node:crypto'
import { runSteps, runStepsSliced, type Steps } from '../time-slicer.ts'
import { exampleKey, normalizeExample, type UsageExample } from './usage-example.ts'

/** Examples kept per library when the configuration names no cap. */
export const DEFAULT_MAX_EXAMPLES = 20_000

export interface ExampleSetChange {
  /** Examples that were new and were added. */
  added: number
  /** Examples already in the set (same instruction, ignoring case and spacing, and same tools). */
  duplicates: number
  /** Oldest examples dropped to stay within the cap. */
  evicted: number
}

export interface ExamplePruneResult {
  set: ExampleSet
  /** Tool ids removed from examples because the library no longer has them. */
  removedToolIds: string[]
  /** Examples dropped because none of their tools is left. */
  droppedExamples: number
}

export class ExampleSet {
  /** Oldest first. */
  readonly examples: readonly UsageExample[]
  /** 0 for a library that never had examples; +1 on every change. */
  readonly version: number
  /** Most examples kept; adding more drops the oldest. */
  readonly cap: number
  #hash: string | undefined
  /** The examples' keys (`exampleKey`), made on the first `with` or handed over by the maker. */
  #keys: ExampleKeys | undefined

  private constructor(
    examples: readonly UsageExample[],
    version: number,
    cap: number,
    keys?: ExampleKeys,
  ) {
    this.examples = examples
    this.version = version
    this.cap = cap
    this.#keys = keys
  }

  static empty(cap = DEFAULT_MAX_EXAMPLES): ExampleSet {
    return new ExampleSet([], 0, cap)
  }

  /** A set holding `examples` (normalised, de-duplicated, the newest `cap` kept). */
  static of(
    examples: readonly UsageExample[],
    options: { cap?: number; version?: number } = {},
  ): ExampleSet {
    return ExampleSet.#ofUnique(runSteps(normalizeAll(examples)), options)
  }

  /**
   * `of`, yielding to the event loop every few milliseconds (loading an index's thousands of
   * examples while the service answers); the same set. `normalized`: the examples are already
   * `normalizeExample`'s (the parsers' output) and are kept as they are, not copied again.
   */
  static async ofSliced(
    examples: readonly UsageExample[],
    options: { cap?: number; version?: number; signal?: AbortSignal; normalized?: boolean } = {},
  ): Promise<ExampleSet> {
    return ExampleSet.#ofUnique(
      await runStepsSliced(normalizeAll(examples, options.normalized), options.signal),
      options,
    )
  }

  /** The set of normalised, de-duplicated `unique` examples: the newest `cap` kept. */
  static #ofUnique(
    { unique, keys }: { unique: UsageExample[]; keys: Set<string> },
    options: { cap?: number; version?: number },
  ): ExampleSet {
    const cap = options.cap ?? DEFAULT_MAX_EXAMPLES
    const capped = unique.length > cap
    const kept = capped ? unique.slice(unique.length - cap) : unique
    const version = options.version ?? (kept.length > 0 ? 1 : 0)
    return new ExampleSet(kept, version, cap, capped ? undefined : ExampleKeys.of(keys))
  }

  get size(): number {
    return this.examples.length
  }

  /** sha256 over the examples in order: equal sets have equal hashes. */
  get contentHash(): string {
    this.#hash ??= createHash('sha256').update(this.toJsonLines()).digest('hex')
    return this.#hash
  }

  /**
   * `contentHash`, computed yielding to the event loop every few milliseconds (a write of usage
   * examples must not stall the requests meanwhile); the same hash, cached the same way.
   */
  async contentHashSliced(signal?: AbortSignal): Promise<string> {
    if (this.#hash !== undefined) return this.#hash
    const hash = createHash('sha256')
    await runStepsSliced(
      eachLine(this.examples, (line) => hash.update(line)),
      signal,
    )
    this.#hash ??= hash.digest('hex')
    return this.#hash
  }

  /**
   * `toJsonLines` as UTF-8 bytes in chunks of 256 lines (written in turn, never concatenated: a
   * Buffer.concat of 10,000 examples of 3,200 characters was one turn of 0.1-0.3 s after the
   * rebuild, bench/README round 51), made yielding to the event loop every few milliseconds
   * (joining 16k lines into one string and encoding it was 50-100 ms in one piece).
   */
  async toJsonLineChunksSliced(signal?: AbortSignal): Promise<Buffer[]> {
    const chunks: Buffer[] = []
    let lines: string[] = []
    await runStepsSliced(
      eachLine(this.examples, (line) => {
        lines.push(line)
        if (lines.length === 256) {
          chunks.push(Buffer.from(lines.join('')))
          lines = []
        }
      }),
      signal,
    )
    if (lines.length > 0) chunks.push(Buffer.from(lines.join('')))
    return chunks
  }

  /** This set plus `examples` (duplicates skipped, oldest evicted beyond the cap). */
  with(examples: readonly UsageExample[]): { set: ExampleSet; change: ExampleSetChange } {
    const { set, changes } = this.withEach([examples])
    return { set, change: changes[0] }
  }

  /**
   * `with` applied for each of `writes` in turn (a batch of writes, service/toolsel-service.ts):
   * the same set and the same change per write as that many `with` calls, but the examples are
   * copied once for the batch. Until round 45 each write of a batch copied the whole set (and
   * every 32nd its keys): 1,000 feedback writes queued behind a rebuild on a set of 20,000 held
   * the event loop for 1.5-14 s in one piece (hard45's probe, 2 cores under load); now the
   * batch costs one copy plus its own examples. `normalized`: the writes are `normalizeEach`'s
   * output (normalised and keyed in slices before), not normalised again.
   */
  withEach(
    writes: ReadonlyArray<readonly UsageExample[]>,
    options: { normalized?: boolean } = {},
  ): {
    set: ExampleSet
    changes: ExampleSetChange[]
  } {
    return runSteps(this.withEachSteps(writes, options))
  }

  /**
   * `withEach` as steps, one yield per example, so a service's batch of 10,000 examples is
   * applied in slices (`runStepsSliced`): in one piece it held a turn ~11 ms under the profiler
   * after `normalizeEach`'s last slice (round 55, perf17).
   */
  *withEachSteps(
    writes: ReadonlyArray<readonly UsageExample[]>,
    { normalized = false }: { normalized?: boolean } = {},
  ): Steps<{
    set: ExampleSet
    changes: ExampleSetChange[]
  }> {
    // The keys of this set are kept with it (ExampleKeys): a write of one example to a set of
    // thousands neither keys them all again nor copies their set (8-13 ms at 16.8k, per write).
    this.#keys ??= ExampleKeys.of(new Set(this.examples.map(keyOf)))
    const known = this.#keys
    // What the batch changed so far: true for a key added, false for one evicted (else `known`).
    const changed = new Map<string, boolean>()
    const has = (key: string) => changed.get(key) ?? known.has(key)
    const changes: ExampleSetChange[] = []
    // The examples after each write are all[first..]: written to once, never copied per write.
    let all: UsageExample[] | undefined
    let first = 0
    let version = this.version
    for (const examples of writes) {
      const freshKeys = new Set<string>()
      const fresh: UsageExample[] = []
      let duplicates = 0
      for (const raw of examples) {
        yield
        const example = normalized ? raw : normalizeExample(raw)
        const key = keyOf(example)
        if (has(key) || freshKeys.has(key)) {
          duplicates += 1
          continue
        }
        freshKeys.add(key)
        fresh.push(example)
      }
      if (fresh.length === 0) {
        changes.push({ added: 0, duplicates, evicted: 0 })
        continue
      }
      // Copies made by slice only (test/examples/example-set.test.ts counts them).
      all ??= this.examples.slice()
      const size = all.length - first
      for (const example of fresh) all.push(example)
      for (const key of freshKeys) changed.set(key, true)
      const evicted = Math.max(0, size + fresh.length - this.cap)
      for (let at = first; at < first + evicted; at += 1) changed.set(keyOf(all[at]), false)
      first += evicted
      version += 1
      changes.push({ added: fresh.length - Math.max(0, evicted - size), duplicates, evicted })
    }
    if (all === undefined) return { set: this, changes }
    const added = new Set<string>()
    const gone = new Set<string>()
    for (const [key, live] of changed) {
      if (live && !known.has(key)) added.add(key)
      else if (!live && known.has(key)) gone.add(key)
    }
    const kept = first === 0 ? all : all.slice(first)
    return { set: new ExampleSet(kept, version, this.cap, known.with(added, gone)), changes }
  }

  /** The same examples under another cap (the newest kept). */
  withCap(cap: number): ExampleSet {
    if (cap === this.cap) return this
    if (this.size <= cap) return new ExampleSet(this.examples, this.version, cap, this.#keys)
    return new ExampleSet(this.examples.slice(this.size - cap), this.version + 1, cap)
  }

  /**
   * The examples restricted to the tools `has` knows (after a library was replaced): unknown
   * ids are removed, examples left without tools are dropped. Same set when nothing changes.
   */
  prune(has: (id: string) => boolean): ExamplePruneResult {
    const removed = new Set<string>()
    const kept: UsageExample[] = []
    let dropped = 0
    for (const example of this.examples) {
      const tools = example.tools.filter((id) => {
        if (has(id)) return true
        removed.add(id)
        return false
      })
      if (tools.length === 0) dropped += 1
      else kept.push(tools.length === example.tools.length ? example : { ...example, tools })
    }
    if (removed.size === 0) return { set: this, removedToolIds: [], droppedExamples: 0 }
    // Pruning can make two examples equal: de-duplicate again.
    const set = new ExampleSet(dedupe(kept), this.version + 1, this.cap)
    return { set, removedToolIds: [...removed], droppedExamples: dropped }
  }

  /** One `{"instruction", "tools"}` object per line, oldest first (the `examples.jsonl` format). */
  toJsonLines(): string {
    return this.examples.map(jsonLine).join('')
  }
}

const jsonLine = (example: UsageExample) =>
  `${JSON.stringify({ instruction: example.instruction, tools: example.tools })}\n`

function* eachLine(examples: readonly UsageExample[], take: (line: string) => void): Steps<void> {
  for (const example of examples) {
    take(jsonLine(example))
    yield
  }
}

/**
 * The keys of a set's examples, immutable: a base set and the changes of the writes since (each
 * write's added and evicted keys), newest last. A write adds one change; every
 * `MAX_KEY_CHANGES` writes the changes are folded into a new base (one copy of the keys).
 */
class ExampleKeys {
  readonly #base: ReadonlySet<string>
  readonly #changes: ReadonlyArray<{ added: ReadonlySet<string>; evicted: ReadonlySet<string> }>

  private constructor(
    base: ReadonlySet<string>,
    changes: ReadonlyArray<{ added: ReadonlySet<string>; evicted: ReadonlySet<string> }>,
  ) {
    this.#base = base
    this.#changes = changes
  }

  static of(keys: ReadonlySet<string>): ExampleKeys {
    return new ExampleKeys(keys, [])
  }

  has(key: string): boolean {
    for (let at = this.#changes.length - 1; at >= 0; at -= 1) {
      const change = this.#changes[at]
      // Evicted in the same write it was added (more new examples than the cap): gone.
      if (change.evicted.has(key)) return false
      if (change.added.has(key)) return true
    }
    return this.#base.has(key)
  }

  /** These keys with `added` added, then `evicted` removed. */
  with(added: ReadonlySet<string>, evicted: ReadonlySet<string>): ExampleKeys {
    const changes = [...this.#changes, { added, evicted }]
    if (changes.length < MAX_KEY_CHANGES) return new ExampleKeys(this.#base, changes)
    const base = new Set(this.#base)
    for (const change of changes) {
      for (const key of change.added) base.add(key)
      for (const key of change.evicted) base.delete(key)
    }
    return new ExampleKeys(base, [])
  }
}

/** Writes whose key changes an ExampleKeys chains before it folds them into its base. */
const MAX_KEY_CHANGES = 32

const keys = new WeakMap<UsageExample, string>()

/**
 * Keys longer than this are replaced by their digest. A second write of the same 2,000 examples
 * of 8,000 characters held the event loop 0.25-0.65 s in `withEach` with the whole keys (each
 * long string hashed and compared in one piece); the digest is made where the key is, in the
 * sliced steps of `normalizeEach` and `ofSliced`.
 */
const MAX_PLAIN_KEY = 64

/**
 * `exampleKey`, or its sha256 (base64) when longer than MAX_PLAIN_KEY characters, remembered per
 * example object (sets share their examples: a write of one example then keys only the new one,
 * not the library's thousands). A digest never equals a plain key (every `exampleKey` holds a
 * U+0000, base64 none); the key's UTF-16 code units are hashed, so lone surrogates are kept apart.
 */
function keyOf(example: UsageExample): string {
  let key = keys.get(example)
  if (key === undefined) {
    key = exampleKey(example)
    if (key.length > MAX_PLAIN_KEY)
      key = createHash('sha256').update(key, 'utf16le').digest('base64')
    keys.set(example, key)
  }
  return key
}

/**
 * The examples normalised (unless `normalized` says they are), the first of each key kept, in
 * order, and their keys; a step per example.
 */
function* normalizeAll(
  examples: readonly UsageExample[],
  normalized = false,
): Steps<{ unique: UsageExample[]; keys: Set<string> }> {
  const keys = new Set<string>()
  const unique: UsageExample[] = []
  for (const raw of examples) {
    const example = normalized ? raw : normalizeExample(raw)
    const key = keyOf(example)
    if (!keys.has(key)) {
      keys.add(key)
      unique.push(example)
    }
    yield
  }
  return { unique, keys }
}

/**
 * `examples` normalised and keyed (the key remembered with each), a step per example: run sliced
 * before `withEach(…, { normalized: true })`, which then only looks the keys up. 10,000
 * instructions of 2,000 characters took 0.3-0.8 s to normalise and key in one piece (round 48,
 * hard52).
 */
export function* normalizeEach(examples: readonly UsageExample[]): Steps<UsageExample[]> {
  const out: UsageExample[] = []
  for (const raw of examples) {
    const example = normalizeExample(raw)
    keyOf(example)
    out.push(example)
    yield
  }
  return out
}

/** First occurrence of each key kept, in order. */
function dedupe(examples: readonly UsageExample[]): UsageExample[] {
  const seen = new Set<string>()
  return examples.filter((example) => {
    const key = keyOf(example)
    if (seen.has(key)) return false
    seen.add(key)
    return true
  })
}
