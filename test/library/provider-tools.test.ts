import fc from 'fast-check'
import { describe, expect, it } from 'vitest'
import {
  PROVIDER_TOOL_NAME,
  providerTool,
  providerToolIds,
  providerToolName,
  toolIdOfProviderName,
} from '../../src/library/provider-tools.ts'
import { importToolsFromPath } from '../../src/library/importers/import-tools-from-path.ts'
import { DEMO_LIBRARY_DIR } from '../../src/store/library-lifecycle.ts'

describe('provider tool names', () => {
  it('writes ids as names every provider takes, readably for the common ids', () => {
    expect(providerToolName('sms.send_sms')).toBe('sms--send_sms')
    expect(providerToolName('get_weather')).toBe('get_weather')
    expect(providerToolName('brave-search.web_search')).toBe('brave-_search--web_search')
    expect(providerToolName('The Cocktail DB::List of Cocktails')).toBe(
      'The-20Cocktail-20DB-3a-3aList-20of-20Cocktails',
    )
    expect(providerToolName('日本.検索')).toBe('-u65e5-u672c---u691c-u7d22')
    expect(toolIdOfProviderName('sms--send_sms')).toBe('sms.send_sms')
  })

  it('reads back only names it writes in full', () => {
    // "." has one writing ("--"): "-2e" is not another name of sms.send_sms.
    expect(toolIdOfProviderName('sms-2esend_sms')).toBeUndefined()
    expect(toolIdOfProviderName('sms-2Dx')).toBeUndefined()
    // "-" has one writing ("-_"): "-2d" is not another.
    expect(toolIdOfProviderName('a-2db')).toBeUndefined()
    expect(toolIdOfProviderName('a-_b')).toBe('a-b')
    expect(toolIdOfProviderName('a-')).toBeUndefined()
    expect(toolIdOfProviderName('a-zz')).toBeUndefined()
    expect(toolIdOfProviderName('sms.send_sms')).toBeUndefined()
    expect(toolIdOfProviderName('')).toBeUndefined()
    const long = providerToolName(`x.${'y'.repeat(80)}`)
    expect(long).toMatch(/^x--y{47}-h[0-9a-f]{12}$/)
    expect(toolIdOfProviderName(long)).toBeUndefined()
  })

  it('names any id validly, distinct ids distinctly, and reads every full name back', () => {
    const id = fc.oneof(
      fc.string({ unit: 'grapheme', minLength: 1, maxLength: 80 }),
      fc.string({
        unit: fc.constantFrom('a', '.', '-', '_', ':', ' ', 'é'),
        minLength: 1,
        maxLength: 70,
      }),
      fc.string({ unit: 'binary', minLength: 1, maxLength: 500 }),
    )
    fc.assert(
      fc.property(id, id, (a, b) => {
        const name = providerToolName(a)
        expect(name).toMatch(PROVIDER_TOOL_NAME)
        const read = toolIdOfProviderName(name)
        // A shortened name (ends -h<hash>) is the only one that does not read back.
        if (read === undefined) expect(name).toMatch(/-h[0-9a-f]{12}$/)
        else expect(read).toBe(a)
        if (a !== b) expect(providerToolName(b)).not.toBe(name)
      }),
      { numRuns: 3000 },
    )
  })

  it('keeps a long id prefix whole: never half an escape before the hash', () => {
    for (let pad = 40; pad < 60; pad += 1) {
      const name = providerToolName(`${'a'.repeat(pad)}日本.x:y-${'z'.repeat(30)}`)
      expect(name.length).toBeLessThanOrEqual(64)
      const prefix = name.slice(0, -14)
      // The prefix reads back as a prefix of the id.
      expect(toolIdOfProviderName(prefix)).toBeDefined()
    }
  })

  it('gives every demo tool a distinct name that maps back through toolIds', async () => {
    const { tools } = await importToolsFromPath(DEMO_LIBRARY_DIR)
    const ids = providerToolIds(tools)
    expect(Object.keys(ids)).toHaveLength(tools.length)
    for (const [name, id] of Object.entries(ids)) {
      expect(name).toMatch(PROVIDER_TOOL_NAME)
      expect(toolIdOfProviderName(name)).toBe(id)
    }
    expect(providerToolIds([{ ...tools[0], id: '__proto__' }])).toEqual(
      JSON.parse('{"__proto__":"__proto__"}'),
    )
  })

  it('shapes a tool as each provider documents it', () => {
    const tool = {
      id: 'sms.send_sms',
      name: 'send_sms',
      description: 'Send an SMS.',
      parameters: { type: 'object', properties: { to: { type: 'string' } } },
      namespace: 'sms',
    }
    expect(providerTool(tool, 'openai')).toEqual({
      type: 'function',
      function: {
        name: 'sms--send_sms',
        description: tool.description,
        parameters: tool.parameters,
      },
    })
    expect(providerTool(tool, 'openai-responses')).toEqual({
      type: 'function',
      name: 'sms--send_sms',
      description: tool.description,
      parameters: tool.parameters,
      strict: false,
    })
    expect(providerTool(tool, 'anthropic')).toEqual({
      name: 'sms--send_sms',
      description: tool.description,
      input_schema: tool.parameters,
    })
  })
})
