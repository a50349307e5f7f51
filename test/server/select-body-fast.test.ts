import { describe, expect, it } from 'vitest'
import { defaultConfig } from '../../src/config/schema.ts'
import { createRequestSchemas, selectToolsFastPath } from '../../src/server/schemas.ts'

/** Values of one field: valid ones, and some the schema rejects or the fast path leaves to it. */
const FIELD_VALUES: Record<string, unknown[]> = {
  instruction: [
    'Get the weather in Paris',
    '  padded instruction\n',
    'x',
    '',
    '   ',
    'y'.repeat(50),
    'z'.repeat(51),
    ' '.repeat(3) + 'w'.repeat(50) + ' '.repeat(3),
    7,
    null,
    ['a'],
  ],
  library: ['demo', 'perf-10000', 'a.b_c-d', '-bad', '', 'x'.repeat(64), 'x'.repeat(65), 'a/b', 3],
  k: [1, 5, 20, 21, 0, -1, 2.5, 1e300, '5', null, true],
  includeSchemas: [true, false, 'true', 0, null],
  explain: [true, false, 'yes', 1, null],
  tau: [0, 1.5, -1],
  planner: ['rule', 'nope'],
  selector: ['top1'],
  unknownField: [1],
}

/** Every body with up to three of the fields (instruction in most), each value of each. */
function bodies(): unknown[] {
  const names = Object.keys(FIELD_VALUES)
  const found: unknown[] = [null, 'text', 3, [], [{ instruction: 'x' }], {}]
  const add = (chosen: string[], at: number, body: Record<string, unknown>) => {
    found.push({ ...body })
    if (chosen.length === 3) return
    for (let next = at; next < names.length; next += 1) {
      for (const value of FIELD_VALUES[names[next]]) {
        add([...chosen, names[next]], next + 1, { ...body, [names[next]]: value })
      }
    }
  }
  add([], 0, {})
  // The same fields in other orders, as a client may send them.
  found.push(
    { includeSchemas: false, k: 5, library: 'demo', instruction: 'x' },
    { explain: true, instruction: ' a b ', k: 20, includeSchemas: true, library: 'demo' },
  )
  // A JSON body's own "__proto__" key, and objects that are not plain JSON objects.
  found.push(JSON.parse('{"instruction":"x","__proto__":{"k":3}}'))
  found.push(Object.assign(Object.create({ k: 3 }), { instruction: 'x' }))
  found.push(Object.assign(Object.create(null), { instruction: 'x' }))
  return found
}

describe('selectToolsFastPath', () => {
  const config = defaultConfig()
  config.server.maxInstructionChars = 50
  config.server.maxK = 20
  const schema = createRequestSchemas(config).selectTools
  const fast = selectToolsFastPath(config)

  it('answers only bodies the schema accepts, with the same values and keys in the same order', () => {
    let accepted = 0
    let checked = 0
    for (const body of bodies()) {
      const quick = fast(body)
      const parsed = schema.safeParse(body)
      checked += 1
      if (quick === undefined) continue
      accepted += 1
      expect(parsed.success, JSON.stringify(body)).toBe(true)
      expect(quick).toStrictEqual(parsed.data)
      expect(Object.keys(quick)).toEqual(Object.keys(parsed.data!))
    }
    expect(checked).toBeGreaterThan(5000)
    // The common bodies take the fast path (it is not a path that answers nothing).
    expect(accepted).toBeGreaterThan(200)
  })

  it('takes the bodies clients send', () => {
    for (const body of [
      { instruction: 'Get the weather in Paris', includeSchemas: true },
      { instruction: 'Get the weather in Paris' },
      { instruction: 'x', library: 'demo', k: 5, includeSchemas: false, explain: true },
    ]) {
      expect(fast(body)).toStrictEqual(schema.parse(body))
    }
  })

  it('leaves every other field, type and range to the schema', () => {
    for (const body of [
      { instruction: 'x', tau: 1 },
      { instruction: 'x', planner: 'rule' },
      { instruction: 'x', k: 21 },
      { instruction: 'x', k: 2.5 },
      { instruction: 'x', library: '-bad' },
      { instruction: ' '.repeat(4) },
      { instruction: 'y'.repeat(51) },
      { instruction: 'x', includeSchemas: 'true' },
      { instruction: 'x', explain: null },
      JSON.parse('{"instruction":"x","__proto__":{"k":3}}'),
      Object.assign(Object.create({ k: 3 }), { instruction: 'x' }),
      Object.assign(Object.create(null), { instruction: 'x' }),
      [{ instruction: 'x' }],
    ]) {
      expect(fast(body), JSON.stringify(body)).toBeUndefined()
    }
  })
})
