/**
 * OpenAPI operations whose parameters keep the spec's shared schemas as JSON Schema definitions:
 * each tool's `parameters` gets a `$defs` holding the component schemas it reaches (transitively,
 * each once, under one name per spec), and every local `$ref` it holds becomes `#/$defs/<name>`.
 * A recursive schema stays a `$ref` into `$defs`. The form the importer falls back to when the
 * spec's `$ref`s copied inline pass the limits (openapi-importer.ts): Microsoft Graph's 11,422
 * operations hold ~4.7 M values this way before any cut (more than 4 M inlined, bench/README round
 * 23), DocuSign's ~0.5 M (more than 1.5 M inlined).
 *
 * Too large even so (one tool past MAX_PARAMETER_VALUES, or all together past the spec's
 * budget), a tool is cut by reference level: the schemas it reaches through at most `level`
 * references are kept, a `$ref` one further becomes its target's `type` and `description` (any
 * members), and the deepest level that fits is taken. Against the spec's budget every tool gets
 * the same cap of values, the largest that lets them all fit (small tools are never cut for the
 * large ones), and what that leaves of the budget deepens the first tools that fit it.
 * @module
 */
import {
  MAX_PARAMETER_DEPTH,
  MAX_PARAMETER_KEYS,
  MAX_PARAMETER_VALUES,
  type JsonSchema,
} from '../tool.ts'
import { decodePointerToken, localTarget } from '../schema/local-ref.ts'

type Json = Record<string, unknown>

/** A schema of the document one or more `$ref`s point at: its `$defs` entry. */
interface Shared {
  /** Its key in `$defs`, the same in every tool of the spec. */
  name: string
  value: Json
  /** Its JSON values, references rewritten (the same count). */
  values: number
  /** Its deepest nesting level, itself at 1. */
  depth: number
  /** The local references it holds, in document order (a reference used twice twice). */
  uses: Use[]
}

/** One `$ref` in a schema: its target, and what a cut there changes in the tool's values. */
interface Use {
  ref: string
  /** The target's `type` and `description` copied in, less the `$ref` string left out. */
  cutDelta: number
}

/** A schema's values, depth and references (scan). */
interface Scan {
  values: number
  depth: number
  uses: Use[]
}

/** What one tool weighs at each reference level: `sizes[level]`, the last one uncut. */
export interface DefsPlan {
  root: JsonSchema
  /**
   * Values at level 0, 1, …; `Infinity` where a schema nests too deep or `$defs` would hold more
   * than MAX_PARAMETER_KEYS schemas.
   */
  sizes: number[]
  /** Targets by reference level (level 1: those the root references). */
  reached: string[][]
  /**
   * A lower bound of the values the tool holds with its references copied inline (the inline
   * form, openapi-importer.ts), known before the parser's `$ref` walk: the largest of its root
   * and each schema it reaches, less one value per local reference in it. The inline form
   * copies each of them at least once, every value of it but a reference's `$ref` string (the
   * reference's object becomes its target's, with its other members kept). `Infinity` when one
   * holds more than SCAN_MOST_VALUES (the scan stopped; half of that is still past
   * MAX_PARAMETER_VALUES, a reference being at least two values).
   */
  leastInline: number
}

/**
 * Values past which a scan stops: a tool holds at most MAX_PARAMETER_VALUES at any level chosen
 * (`chooseLevels`), and a level that holds a schema of more than twice that holds more than that
 * (each reference cut there removes at most one value, and is itself two: the object and its
 * `$ref`), so such a schema is `Infinity` values, as one nested too deep.
 */
const SCAN_MOST_VALUES = 2 * MAX_PARAMETER_VALUES

/** The shared schemas of one document, each scanned once. */
export class SharedSchemas {
  readonly #document: Json
  readonly #byRef = new Map<string, Shared | null>()
  readonly #names = new Set<string>()
  /**
   * Each target object's scan, by identity: a YAML alias puts one object under many names, each
   * its own `$defs` entry, scanned once (round 46: 999 names aliasing one schema of 200,000
   * values were scanned 999 times, 200 M values from a 1.3 MB file).
   */
  readonly #scans = new Map<object, Scan>()

  constructor(document: Json) {
    this.#document = document
  }

  /** The plan of one operation's schema (its references still the document's). */
  plan(root: JsonSchema): DefsPlan {
    const scan = this.#scan(root)
    const reached: string[][] = []
    const seen = new Set<string>()
    let frontier = scan.uses
    let values = scan.values
    const sizes: number[] = []
    let depth = scan.depth
    let leastInline = scan.values - scan.uses.length
    for (;;) {
      const next: string[] = []
      const fresh = new Set<string>()
      let cut = 0
      for (const use of frontier) {
        // Level `reached.length` cuts the references of `frontier` to schemas not kept yet.
        if (seen.has(use.ref) && !fresh.has(use.ref)) continue
        if (this.#shared(use.ref) === undefined) continue
        cut += use.cutDelta
        if (seen.has(use.ref)) continue
        seen.add(use.ref)
        fresh.add(use.ref)
        next.push(use.ref)
      }
      // Too deep, or more definitions than one object may have members: does not fit.
      const members = seen.size - fresh.size
      sizes.push(
        depth > MAX_PARAMETER_DEPTH || members > MAX_PARAMETER_KEYS ? Infinity : values + cut,
      )
      if (next.length === 0) break
      reached.push(next)
      // The `$defs` object itself once.
      if (reached.length === 1) values += 1
      frontier = []
      for (const ref of next) {
        const shared = this.#shared(ref)!
        values += shared.values
        leastInline = Math.max(leastInline, shared.values - shared.uses.length)
        depth = Math.max(depth, shared.depth + 2)
        // A loop, not push(...): a schema holds up to SCAN_MOST_VALUES / 2 references, 100,000
        // arguments, ~800 KB of the ~1 MB stack (RangeError a few frames deeper, round 47).
        for (const use of shared.uses) frontier.push(use)
      }
    }
    return { root, sizes, reached, leastInline }
  }

  /**
   * `plan.root` with the schemas reached within `level` references in `$defs` and the
   * references rewritten to them; a reference one level further is cut to its target's `type`
   * and `description`.
   */
  build(plan: DefsPlan, level: number): JsonSchema {
    const kept = new Set(plan.reached.slice(0, level).flat())
    const rewrite = (value: unknown): unknown => {
      if (typeof value !== 'object' || value === null) return value
      if (Array.isArray(value)) return value.map(rewrite)
      const object = value as Json
      const ref = object.$ref
      const shared = typeof ref === 'string' ? this.#shared(ref) : undefined
      const copy: Json = {}
      if (shared !== undefined && !kept.has(ref as string)) Object.assign(copy, stub(shared.value))
      for (const [key, child] of Object.entries(object)) {
        if (key === '$ref' && shared !== undefined) {
          // Names are `[A-Za-z0-9_.-]`: nothing to escape in the pointer.
          if (kept.has(ref as string)) copy.$ref = `#/$defs/${shared.name}`
          continue
        }
        copy[key] = rewrite(child)
      }
      return copy
    }
    const schema = rewrite(plan.root) as JsonSchema
    if (kept.size > 0) {
      const defs: Json = {}
      for (const ref of plan.reached.slice(0, level).flat()) {
        const shared = this.#shared(ref)!
        defs[shared.name] = rewrite(shared.value)
      }
      schema.$defs = defs
    }
    return schema
  }

  /** The shared schema `ref` points at, scanned on first use; undefined: not a local object. */
  #shared(ref: string): Shared | undefined {
    const known = this.#byRef.get(ref)
    if (known !== undefined) return known ?? undefined
    const target = ref.startsWith('#/') ? localTarget(this.#document, ref) : undefined
    if (!isObject(target)) {
      this.#byRef.set(ref, null)
      return undefined
    }
    const shared: Shared = {
      name: this.#nameFor(ref),
      value: target,
      values: 0,
      depth: 0,
      uses: [],
    }
    // Set before the scan: a schema that references itself finds its entry.
    this.#byRef.set(ref, shared)
    let scan = this.#scans.get(target)
    if (scan === undefined) this.#scans.set(target, (scan = this.#scan(target)))
    Object.assign(shared, scan)
    return shared
  }

  /** The last segment of the pointer (`#/components/schemas/Pet` → `Pet`), unique in the spec. */
  #nameFor(ref: string): string {
    const last = ref.slice(ref.lastIndexOf('/') + 1)
    const base = decodePointerToken(last).replace(/[^A-Za-z0-9_.-]+/g, '_') || 'schema'
    let name = base
    for (let suffix = 2; this.#names.has(name); suffix += 1) name = `${base}_${suffix}`
    this.#names.add(name)
    return name
  }

  /** Values, depth and local references of `value`, iteratively (schemas nest deep). */
  #scan(value: unknown): Scan {
    const scan: Scan = { values: 0, depth: 0, uses: [] }
    const stack: Array<[unknown, number]> = [[value, 1]]
    while (stack.length > 0) {
      const [current, depth] = stack.pop()!
      scan.values += 1
      // Past SCAN_MOST_VALUES no level that holds it fits (below): not counted on. A YAML alias
      // (one object in many places) was walked in every place: 900 aliases of 200,000 values
      // behind a $ref, 180 M values, 21-70 s of CPU from a 1.5 MB file (round 44, hard41).
      if (scan.values > SCAN_MOST_VALUES) {
        scan.values = Infinity
        return scan
      }
      if (typeof current !== 'object' || current === null) continue
      scan.depth = Math.max(scan.depth, depth)
      // Deeper than a tool may be: the scan stops counting there (the tool is refused or cut).
      if (depth > MAX_PARAMETER_DEPTH) continue
      const children = Object.values(current)
      if (!Array.isArray(current)) {
        const ref = (current as Json).$ref
        if (typeof ref === 'string' && ref.startsWith('#/')) {
          const target = localTarget(this.#document, ref)
          if (isObject(target)) {
            const kept = stub(target)
            const added = Object.keys(kept).filter((key) => !Object.hasOwn(current, key)).length
            scan.uses.push({ ref, cutDelta: added - 1 })
          }
        }
      }
      for (let at = children.length - 1; at >= 0; at -= 1) stack.push([children[at], depth + 1])
    }
    // Document order: the stack visits the first child first.
    return scan
  }
}

/**
 * The level each plan is built at: the deepest whose values fit `cap`, the largest cap up to
 * MAX_PARAMETER_VALUES that lets all of them fit `specBudget` together. `tool` names the first
 * plan that does not fit even at level 0 (its own values past the limit), `spec` says the plans
 * do not fit the budget together even so.
 */
export function chooseLevels(
  plans: readonly DefsPlan[],
  specBudget: number,
): { levels: number[]; values: number; cap: number } | { tool: number } | 'spec' {
  const tooLarge = plans.findIndex((plan) => !(plan.sizes[0] <= MAX_PARAMETER_VALUES))
  if (tooLarge >= 0) return { tool: tooLarge }
  const within = (cap: number) => {
    let values = 0
    const levels = plans.map((plan) => {
      let level = plan.sizes.length - 1
      while (level > 0 && !(plan.sizes[level] <= cap)) level -= 1
      values += plan.sizes[level]
      return level
    })
    return { levels, values, cap }
  }
  const whole = within(MAX_PARAMETER_VALUES)
  if (whole.values <= specBudget) return whole
  // A loop, not Math.max(...): a spec of 200,000 operations passed what one call's arguments
  // may hold (RangeError, round 47); `library.maxTools` allows 2,000,000.
  let low = 0
  for (const plan of plans) low = Math.max(low, plan.sizes[0])
  let best = within(low)
  if (best.values > specBudget) return 'spec'
  let high = MAX_PARAMETER_VALUES
  while (low < high) {
    const middle = Math.ceil((low + high) / 2)
    const attempt = within(middle)
    if (attempt.values <= specBudget) [best, low] = [attempt, middle]
    else high = middle - 1
  }
  // What the cap leaves of the budget goes to the first tools in document order, each as deep
  // as it fits (38 equal tools where 37 fit: one is cut, not all 38).
  let left = specBudget - best.values
  best.levels.forEach((chosen, at) => {
    const sizes = plans[at].sizes
    for (let level = sizes.length - 1; level > chosen; level -= 1) {
      const more = sizes[level] - sizes[chosen]
      if (sizes[level] <= MAX_PARAMETER_VALUES && more <= left) {
        best.levels[at] = level
        best.values += more
        left -= more
        break
      }
    }
  })
  return best
}

/** What is kept of a schema cut away: its `type` and `description` when they are strings. */
export function stub(value: Json): Json {
  const kept: Json = {}
  if (typeof value.type === 'string') kept.type = value.type
  if (typeof value.description === 'string') kept.description = value.description
  return kept
}

/**
 * The value at a local JSON pointer (`#/a/b`) through objects only, or undefined: what the inline
 * form has always resolved (the `$defs` form goes through arrays too, `localTarget`: DigitalOcean
 * points into `allOf/0`).
 */
export function pointer(document: Json, ref: string): unknown {
  return localTarget(document, ref, { arrays: false })
}

function isObject(value: unknown): value is Json {
  return typeof value === 'object' && value !== null && !Array.isArray(value)
}
