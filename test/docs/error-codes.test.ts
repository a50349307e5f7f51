import { readFile } from 'node:fs/promises'
import { readdirSync } from 'node:fs'
import { describe, expect, it } from 'vitest'
import { ERROR_CODES } from '../../src/errors.ts'
import { STATUS_BY_CODE } from '../../src/server/error-response.ts'

const read = (path: string) => readFile(new URL(`../../${path}`, import.meta.url), 'utf8')

describe('error codes in the docs', () => {
  it('every code the service can answer is documented (README, DESIGN or docs/)', async () => {
    const docs = ['README.md', 'DESIGN.md', ...readdirSync('docs').map((name) => `docs/${name}`)]
    const text = (await Promise.all(docs.map(read))).join('\n')
    const undocumented = Object.keys(ERROR_CODES).filter(
      (code) => !new RegExp(`\\b${code}\\b`).test(text),
    )
    expect(undocumented).toEqual([])
  })

  it("the README's list of statuses names real codes, each under the status it is answered with", async () => {
    const readme = await read('README.md')
    const start = readme.indexOf('every error is\n`{"error": {"code", "message"}}`')
    const end = readme.indexOf('maps every code)', start)
    expect(start).toBeGreaterThan(0)
    expect(end).toBeGreaterThan(start)
    // "<status> (…)": the codes named in each status's parentheses.
    const statuses = readme.slice(start, end).matchAll(/\b([45]\d\d) \(([^()]*)\)/g)
    const named: string[] = []
    for (const [, status, inside] of statuses)
      for (const [, code] of inside.matchAll(/`([A-Z][A-Z_]+)`/g)) {
        named.push(code)
        expect(code in ERROR_CODES, code).toBe(true)
        expect(STATUS_BY_CODE[code as keyof typeof ERROR_CODES], code).toBe(Number(status))
      }
    expect(named.length).toBeGreaterThan(15)
  })
})
