import { describe, expect, it } from 'vitest'
import { z } from 'zod'
import { defaultConfig } from '../../src/config/schema.ts'
import { createRequestSchemas } from '../../src/server/schemas.ts'

/** Whether `run` answers with a promise (an async function always does, whatever its input). */
function answersAsync(run: () => unknown): boolean {
  let answer: unknown
  try {
    answer = run()
  } catch {
    return false
  }
  if (!(answer instanceof Promise)) return false
  answer.catch(() => undefined)
  return true
}

/** A parse payload for probing one check or transform on its own. */
const probe = () => ({ value: undefined, issues: [], addIssue: () => undefined })

/**
 * Where in `schema` an asynchronous part sits (a refinement, superRefine, transform or
 * preprocess): every part of a zod 4 schema is reachable from its `_zod.def` (object shapes,
 * array elements, optional and default wrappers, unions, pipes, checks, lazy getters). A part is
 * asynchronous when it is an `async` function or, run on its own, answers with a promise
 * (superRefine keeps the function in a closure).
 */
function asyncParts(schema: unknown): string[] {
  const found: string[] = []
  const seen = new Set<unknown>()
  const visit = (value: unknown, path: string): void => {
    if (typeof value === 'function') {
      const kind = value.constructor.name
      if (kind === 'AsyncFunction' || kind === 'AsyncGeneratorFunction') found.push(path)
      return
    }
    if (value === null || typeof value !== 'object' || seen.has(value)) return
    seen.add(value)
    const zod = (value as { _zod?: { def: Record<string, unknown>; check?: unknown } })._zod
    if (zod) {
      const { def } = zod
      const before = found.length
      visit(def, path)
      if (found.length === before) {
        const check = zod.check
        if (typeof def.check === 'string' && typeof check === 'function') {
          if (answersAsync(() => check(probe()))) found.push(`${path}.check`)
        } else if (def.type === 'transform' && typeof def.transform === 'function') {
          const transform = def.transform as (value: unknown, payload: unknown) => unknown
          if (answersAsync(() => transform(undefined, probe()))) found.push(`${path}.transform`)
        }
      }
      if (def.type === 'lazy') visit((def.getter as () => unknown)(), `${path}.lazy`)
      return
    }
    for (const [key, child] of Object.entries(value)) visit(child, `${path}.${key}`)
  }
  visit(schema, 'schema')
  return found
}

describe('request schemas parse synchronously', () => {
  // src/server/validate.ts runs zod's synchronous safeParse (a third of safeParseAsync's cost).
  // On a schema with an asynchronous refinement that throws instead of validating, and every
  // request on that route would fail with a 500: this test fails first.
  it('have no asynchronous refinement, transform or preprocess anywhere', () => {
    const schemas = createRequestSchemas(defaultConfig())
    expect(Object.keys(schemas).length).toBeGreaterThan(5)
    for (const [name, schema] of Object.entries(schemas))
      expect(asyncParts(schema), `request schema "${name}"`).toEqual([])
  })

  it('finds an asynchronous part wherever it is, and the synchronous parse does throw on one', () => {
    const refined = z.object({
      outer: z.array(z.object({ inner: z.string().refine(async () => true) })).optional(),
    })
    expect(asyncParts(refined), 'refined').toHaveLength(1)
    expect(() => refined.safeParse({ outer: [{ inner: 'x' }] })).toThrow(/synchronous parse/)
    expect(asyncParts(z.string().transform(async (text) => text.length)), 'transform').toHaveLength(
      1,
    )
    expect(asyncParts(z.number().superRefine(async () => undefined)), 'superRefine').toHaveLength(1)
    expect(
      asyncParts(z.union([z.number(), z.lazy(() => z.string().refine(async () => true))])),
    ).toHaveLength(1)
    expect(asyncParts(z.preprocess(async (value) => value, z.string())), 'preprocess').toHaveLength(
      1,
    )
    expect(asyncParts(z.string().superRefine(() => Promise.resolve())), 'a promise').toHaveLength(1)
    // Synchronous refinements and transforms are fine.
    const nonEmpty = z
      .string()
      .trim()
      .refine((text) => text.length > 0)
    expect(asyncParts(nonEmpty)).toEqual([])
    const required = z.string().superRefine((text, context) => {
      if (!text) context.addIssue({ code: 'custom', message: 'empty' })
    })
    expect(asyncParts(required)).toEqual([])
    expect(asyncParts(z.string().transform((text) => text.length))).toEqual([])
  })
})
