/**
 * The CRAFT importer's docstring and Python-type readers on long runs of white space: linear, and
 * reading every line as the former expressions did (they tried every split of a run of spaces:
 * `a` + 32,000 spaces + `b` took 2.2 s in the docstring reader, 5.5 s in the type reader).
 */
import { describe, expect, it } from 'vitest'
import { docstringArguments } from '../../../src/library/importers/docstring-arguments.ts'
import { pythonTypeSchema } from '../../../src/library/importers/python-type-schema.ts'
import { busyMsSync } from '../../helpers/busy-time.ts'

// CPU time where the machine is loaded (busy-time.ts): its wall time is not the expressions'.
const elapsedMs = busyMsSync

/** The former expressions, the reference for the lines they accept. */
const FORMER_OTHER_SECTION = /^\s*([A-Z][A-Za-z ]*)\s*:\s*$/
const FORMER_ENTRY =
  /^\s*(\*{0,2}[A-Za-z_]\w*(?:\s*,\s*\*{0,2}[A-Za-z_]\w*)*)\s*(?:\(([^)]*)\))?\s*:\s*(.*)$/

/** Deterministic pseudo-random lines of the pieces the expressions read. */
function* randomLines(count: number): Generator<string> {
  const pieces = [
    'x',
    'Ab',
    'R',
    '_1',
    ' ',
    '  ',
    '\t',
    ':',
    '(int)',
    '(',
    ')',
    ',',
    '*',
    '**',
    'b c',
  ]
  let seed = 12345
  const next = () => (seed = (seed * 1103515245 + 12345) % 2 ** 31)
  for (let i = 0; i < count; i += 1) {
    const piece = () => pieces[next() % pieces.length]
    let line = ''
    for (let j = next() % 6; j >= 0; j -= 1) line += piece()
    // Half the lines shaped like an entry: a name first and a colon after the random pieces.
    yield i % 2 === 0 ? line : `${piece() === ' ' ? ' ' : ''}x${line}:${piece()}`
  }
}

describe('importer expressions on long white space', () => {
  it('reads a docstring whose lines hold 32,000-space runs at once', () => {
    const run = ' '.repeat(32_000)
    const docstring = ['Args:', `a${run}b`, `A${run}b`, `x (int)${run}: the x`, 'Returns:'].join(
      '\n',
    )
    let documented = new Map()
    expect(elapsedMs(() => (documented = docstringArguments(docstring)))).toBeLessThan(1000)
    expect([...documented.keys()]).toEqual(['x'])
    expect(documented.get('x')?.type).toBe('int')
  })

  it('reads a 32,000-space type text at once', () => {
    expect(elapsedMs(() => pythonTypeSchema(`a${' '.repeat(32_000)}b`))).toBeLessThan(1000)
    expect(pythonTypeSchema('int   or\tfloat')).toEqual({ type: 'number' })
    expect(pythonTypeSchema('int | None')).toEqual({ type: 'integer' })
    expect(pythonTypeSchema(' str  |  int ')).toBeUndefined()
  })

  it('an entry or section line reads as before (20,000 random lines)', () => {
    let entries = 0
    for (const line of randomLines(20_000)) {
      // Each random line as the only line of an Args section.
      const documented = docstringArguments(`Args:\n${line}`)
      const former = FORMER_OTHER_SECTION.test(line) ? null : FORMER_ENTRY.exec(line)
      const expected = new Map<string, { type?: string; description: string }>()
      if (former !== null) {
        entries += 1
        const type = former[2]?.trim()
        for (const name of former[1].split(',')) {
          const argument = { description: former[3].trim() }
          expected.set(name.trim().replace(/^\*{1,2}/, ''), type ? { ...argument, type } : argument)
        }
      }
      expect(Object.fromEntries(documented), JSON.stringify(line)).toEqual(
        Object.fromEntries(expected),
      )
    }
    expect(entries).toBeGreaterThan(1000)
  })
})
