/**
 * Arrays whose length the input sets are never spread into a call's arguments
 * (`push(...x)`, `Math.max(...x)`, `String.fromCharCode(...x)`): V8 puts each element on the
 * stack, and past ~125,000 of them (less when the call is deeper) the call throws RangeError,
 * which reached callers as a 500 or a failed import instead of an answer. Before round 47 each
 * case below threw "Maximum call stack size exceeded".
 */
import { execFile } from 'node:child_process'
import { promisify } from 'node:util'
import { describe, expect, it } from 'vitest'
import { chooseLevels, type DefsPlan } from '../../src/library/importers/openapi-defs.ts'
import { MAX_SPEC_PARAMETER_VALUES } from '../../src/library/importers/openapi-importer.ts'
import { cleanDocstring } from '../../src/library/importers/parse-python-functions.ts'
import { nameKey } from '../../src/library/tool-name-table.ts'
import { tokenize, tokenizeText } from '../../src/retrieve/bm25/tokenize.ts'
import { ROOT } from '../helpers/start-serve.ts'

describe('arrays a user sizes are not spread into arguments', () => {
  it('tokenizes 140,000 Hangul syllables without a space (139,999 terms)', () => {
    // Within the BM25 document's 500,000 characters a field (a parameter's description, say).
    // Hangul is cut into bigrams (segment-words.ts), all of them spread into push() before.
    let text = ''
    for (let at = 0; at < 140_000; at += 1)
      text += String.fromCharCode(0xac00 + ((at * 7919) % 11_000))
    const terms = tokenizeText(text)
    expect(terms).toHaveLength(139_999)
    expect(terms[0]).toBe(text.slice(0, 2))
    expect(tokenize(text)).toEqual(terms)
  }, 60_000)

  it('chooses reference levels for a spec of 200,000 operations', () => {
    // 200,000 small operations sharing one schema, `$defs` form: more values together than the
    // spec's budget, so the cap is searched from the largest tool's level-0 size.
    const plans: DefsPlan[] = Array.from({ length: 200_000 }, () => ({
      root: {},
      sizes: [4, 9],
      reached: [['#/components/schemas/S']],
      leastInline: 4,
    }))
    const chosen = chooseLevels(plans, MAX_SPEC_PARAMETER_VALUES)
    expect(chosen).toMatchObject({ cap: 8, values: MAX_SPEC_PARAMETER_VALUES })
    if (typeof chosen !== 'object' || !('levels' in chosen)) throw new Error('no levels')
    // The budget left over deepens the first tools in document order.
    expect(chosen.levels.filter((level) => level === 1)).toHaveLength(140_000)
  })

  it("dedents a docstring of 200,000 lines (a CRAFT tool's code)", () => {
    const raw = `Sum.\n${'    x\n'.repeat(200_000)}  `
    const cleaned = cleanDocstring(raw)
    expect(cleaned.startsWith('Sum.\nx\nx\n')).toBe(true)
    expect(cleaned.split('\n')).toHaveLength(200_001)
  })

  it("keys the name of an id of 200,000 letters (a saved index's, from before ids were bounded)", () => {
    expect(nameKey(`api.${'a'.repeat(200_000)}`)).toBe('a'.repeat(200_000))
  })

  it('imports an OpenAPI schema of 99,999 references with a stack of 500 KB', async () => {
    // A schema holds at most 100,000 references (openapi-defs.ts stops scanning at 200,000
    // values, and a reference is two): spread, they took ~800 KB of the stack, so the same
    // import failed with the stack a little smaller (or the call a little deeper).
    const script = `
      import { importTools } from './src/library/importers/index.ts'
      const uses = Array.from({ length: 99_999 }, () => ({ $ref: '#/components/schemas/T' }))
      const body = { content: { 'application/json': { schema: { $ref: '#/components/schemas/S' } } } }
      const spec = {
        openapi: '3.0.0',
        info: { title: 'x', version: '1' },
        paths: { '/a': { post: { operationId: 'a', requestBody: body, responses: {} } } },
        components: { schemas: { T: { type: 'string' }, S: { allOf: uses } } },
      }
      try {
        const { tools, warnings } = await importTools(JSON.stringify(spec), { fileName: 'spec.json' })
        console.log(JSON.stringify({ tools: tools.length, warnings }))
      } catch (error) {
        console.log(JSON.stringify({ error: String(error) }))
      }`
    const { stdout } = await promisify(execFile)(
      process.execPath,
      ['--stack-size=500', '--import', 'tsx', '--input-type=module', '-e', script],
      { cwd: ROOT, timeout: 60_000 },
    )
    const result = JSON.parse(stdout)
    expect(result.error).toBeUndefined()
    expect(result.tools).toBe(1)
    expect(result.warnings[0]).toContain('schemas more than 0 references deep keep only their type')
  }, 90_000)
})
