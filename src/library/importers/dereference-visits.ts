/**
 * A lower bound of the visits swagger-parser's `$ref` walk (json-schema-ref-parser 14,
 * `dereference` with `circular: 'ignore'`; it calls the path matcher once per object it crawls
 * and once per member) makes of an OpenAPI document, counted without the walk: each schema's
 * size is worked out once and reused wherever it is used, so a document whose schemas each use
 * the next one twice (2^levels values written out, from a few KB) is counted in milliseconds
 * where the walk would take seconds to pass its budget.
 *
 * What the walk is sure to do, for a schema `T` (an object of the document, outside any `$ref`
 * object) from which no chain of members and references comes back to itself ("acyclic"), so
 * that no reference met inside it is ever circular for the walk:
 * - it crawls `T` where the document holds it, and a plain reference to `T` (`{"$ref"}` and
 *   nothing else) crawls `T` itself the first time its pointer is met; the first crawl replaces
 *   every reference inside `T` by its target (a reference with other members: a new object, the
 *   two merged), so when `T` is the target of a plain reference the second of these crawls goes
 *   through `T` written out in full (`full`);
 * - a reference with other members is never taken from the walk's cache while no plain
 *   reference to the same target has been met, so each crawl of an object goes through such a
 *   reference's merged object again, in every place (`merged`): counted as the least of its own
 *   and its target's members (the cache merges the other way round);
 * - a plain reference may come from the cache, so counted as nothing outside `full`.
 * Any `$ref` this does not resolve as the parser does (a pointer through another reference, to
 * a reference or to the root) makes what reaches it count as not acyclic: never counted on.
 * @module
 */
import { decodePointerToken } from '../schema/local-ref.ts'

type Json = Record<string, unknown>

/** How a value counts: `full` (every reference written out) or `cold` (the first crawl). */
interface Counts {
  full: number
  cold: number
  /** A chain of members and references from it comes back to itself, or to an unknown `$ref`. */
  cyclic: boolean
}

const PRIMITIVE: Counts = { full: 0, cold: 0, cyclic: false }
const UNKNOWN: Counts = { full: 0, cold: 0, cyclic: true }

/**
 * A lower bound of the parser's visits of `document` (0 where nothing is sure): the largest
 * count of one acyclic schema crawled as the walk is sure to crawl it.
 */
export function leastDereferenceVisits(document: Json): number {
  return new VisitCounter(document).least()
}

class VisitCounter {
  readonly #document: Json
  readonly #counts = new Map<object, Counts>()
  /** Each `$ref` object's target (`#target`), resolved once. */
  readonly #targets = new Map<object, unknown>()
  /** Targets of plain references anywhere in the document (the walk's cache may hold them). */
  readonly #plainTargets = new Set<unknown>()
  /** Targets of plain references where the walk meets them (outside other `$ref` objects). */
  readonly #crawledTargets = new Set<unknown>()
  /** Objects of the document outside any `$ref` object: the walk crawls each where it is. */
  readonly #placed: object[] = []

  constructor(document: Json) {
    this.#document = document
  }

  least(): number {
    this.#findReferences()
    let least = 0
    for (const value of this.#placed) {
      const counts = this.#count(value)
      if (counts.cyclic) continue
      least = Math.max(least, counts.cold)
      if (this.#crawledTargets.has(value)) least = Math.max(least, counts.full)
    }
    return least
  }

  /** The targets of plain references, and the objects the walk crawls where they are. */
  #findReferences(): void {
    const seen = new Set<object>()
    const stack: Array<[unknown, boolean]> = [[this.#document, true]]
    while (stack.length > 0) {
      const [value, placed] = stack.pop()!
      if (!isContainer(value) || seen.has(value)) continue
      seen.add(value)
      const ref = referenceOf(value)
      if (ref !== undefined && Object.keys(value).length === 1) {
        const target = this.#targetOf(value, ref)
        this.#plainTargets.add(target)
        if (placed) this.#crawledTargets.add(target)
      }
      const inPlace = placed && ref === undefined
      if (inPlace) this.#placed.push(value)
      for (const child of Object.values(value)) stack.push([child, inPlace])
    }
  }

  /** `#target` of the `$ref` object `reference`, resolved once. */
  #targetOf(reference: object, ref: string): unknown {
    if (this.#targets.has(reference)) return this.#targets.get(reference)
    const target = this.#target(ref)
    this.#targets.set(reference, target)
    return target
  }

  /**
   * The parser's target of a local `$ref` through the document as written, or UNKNOWN_TARGET
   * where it may resolve otherwise (through or to another `$ref` object, to the root, missing).
   */
  #target(ref: string): unknown {
    if (!ref.startsWith('#/')) return UNKNOWN_TARGET
    let current: unknown = this.#document
    for (const raw of ref.slice(2).split('/')) {
      if (!isContainer(current) || referenceOf(current) !== undefined) return UNKNOWN_TARGET
      const key = decodePointerToken(raw)
      if (!Object.hasOwn(current, key)) return UNKNOWN_TARGET
      current = (current as Json)[key]
    }
    if (isContainer(current) && referenceOf(current) !== undefined) return UNKNOWN_TARGET
    return current
  }

  /** The counts of `root` and all it reaches, each object once (iteratively: schemas nest deep). */
  #count(root: unknown): Counts {
    if (!isContainer(root)) return PRIMITIVE
    const known = this.#counts.get(root)
    if (known !== undefined) return known
    const active = new Set<object>()
    const stack: object[] = [root]
    while (stack.length > 0) {
      const value = stack[stack.length - 1]
      if (this.#counts.has(value)) {
        stack.pop()
        continue
      }
      if (!active.has(value)) {
        active.add(value)
        for (const dependency of this.#dependencies(value)) {
          // On the stack already: a cycle, which `#combine` reads as such.
          if (!this.#counts.has(dependency) && !active.has(dependency)) stack.push(dependency)
        }
        continue
      }
      this.#counts.set(value, this.#combine(value, active))
      active.delete(value)
      stack.pop()
    }
    return this.#counts.get(root)!
  }

  /** What `value`'s counts are made of: its members, and a reference's target. */
  #dependencies(value: object): object[] {
    const dependencies = Object.values(value).filter(isContainer)
    const ref = referenceOf(value)
    if (ref === undefined) return dependencies
    const target = this.#targetOf(value, ref)
    return isContainer(target) ? [target, ...dependencies] : dependencies
  }

  /** The counts of `value`, those of what it depends on known (or `active`: a cycle). */
  #combine(value: object, active: ReadonlySet<object>): Counts {
    const ref = referenceOf(value)
    if (ref === undefined) {
      let full = 1
      let cold = 1
      let cyclic = false
      for (const child of Object.values(value)) {
        const counts = this.#of(child, active)
        full += 1 + counts.full
        cold += 1 + counts.cold
        cyclic ||= counts.cyclic
      }
      return { full, cold, cyclic }
    }
    const target = this.#targetOf(value, ref)
    if (target === UNKNOWN_TARGET) return UNKNOWN
    const plain = Object.keys(value).length === 1
    // A string or number: the walk replaces the reference by it, with or without other members.
    if (!isContainer(target)) return PRIMITIVE
    const own = this.#of(target, active)
    if (plain) return { full: own.full, cold: 0, cyclic: own.cyclic }
    const merged = this.#merged(value as Json, target as Json, active)
    return this.#plainTargets.has(target) ? { ...merged, cold: 0 } : merged
  }

  /**
   * The merged object of a reference with other members: the target's counts, each member the
   * reference also has counted as the least of the two (the walk merges the reference's members
   * over the target's, its cache the other way round). The reference's own members may not have
   * been crawled yet when the cache merges them in, so they count as `cold` either way. One step
   * per member of the reference, whatever the size of its target.
   */
  #merged(reference: Json, target: Json, active: ReadonlySet<object>): Counts {
    const base = this.#of(target, active)
    let { full, cold, cyclic } = base
    for (const [key, value] of Object.entries(reference)) {
      if (key === '$ref') continue
      const mine = this.#of(value, active)
      cyclic ||= mine.cyclic
      if (!Object.hasOwn(target, key)) {
        full += 1 + mine.cold
        cold += 1 + mine.cold
        continue
      }
      const theirs = this.#of(target[key], active)
      full += Math.min(mine.cold, theirs.full) - theirs.full
      cold += Math.min(mine.cold, theirs.cold) - theirs.cold
    }
    return { full, cold, cyclic }
  }

  /** The counts of a member or target already combined; one still `active` closes a cycle. */
  #of(value: unknown, active: ReadonlySet<object>): Counts {
    if (!isContainer(value)) return PRIMITIVE
    if (active.has(value)) return UNKNOWN
    return this.#counts.get(value) ?? UNKNOWN
  }
}

/** What `#target` gives for a `$ref` it does not resolve as the parser does. */
const UNKNOWN_TARGET = Symbol('unknown target')

/** The `$ref` of an object the parser resolves (a local pointer), else undefined. */
function referenceOf(value: object): string | undefined {
  if (Array.isArray(value)) return undefined
  const ref = (value as Json).$ref
  if (typeof ref !== 'string' || ref.length === 0) return undefined
  // `#` (the root) or a pointer: what the parser resolves when it fetches nothing else.
  return ref === '#' || ref.startsWith('#/') ? ref : undefined
}

function isContainer(value: unknown): value is object {
  return typeof value === 'object' && value !== null
}
