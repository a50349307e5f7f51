import fc from 'fast-check'
import { describe, expect, it } from 'vitest'
import { idHash, idTableSize, type IdList } from '../../src/library/id-table.ts'
import { ToolLibrary } from '../../src/library/tool-library.ts'
import { keyHash, nameKey, nameKeyHash, ToolNameTable } from '../../src/library/tool-name-table.ts'
import { runSteps } from '../../src/time-slicer.ts'
import { collidingIds } from '../helpers/colliding-ids.ts'
import { SAMPLE_TOOLS } from '../helpers/sample-tools.ts'
import { createTestApp, postJson, readJson } from '../server/test-service.ts'

const library = new ToolLibrary('sample', [
  ...SAMPLE_TOOLS,
  { ...SAMPLE_TOOLS[0], id: 'other.get_forecast', namespace: 'other' },
  {
    id: 'The Cocktail DB::List of Cocktails',
    name: 'list_of_cocktails_for_the_cocktail_db',
    description: 'Cocktails.',
    parameters: { type: 'object', properties: {} },
  },
])

describe('UNKNOWN_TOOL: what an unknown id may have meant', () => {
  it('keys ids by their last part as a name', () => {
    expect(nameKey('sms.send_sms')).toBe('send_sms')
    expect(nameKey('SMS.Send-SMS')).toBe('send_sms')
    expect(nameKey('The Cocktail DB::List of Cocktails')).toBe('list_of_cocktails')
    expect(nameKey('api/v1/users')).toBe('users')
    expect(nameKey('x.')).toBe('x')
    expect(nameKey('...')).toBe('...')
  })

  it('hashes a key without making it as the key hashes', () => {
    const id = fc.oneof(
      fc.string({ unit: fc.constantFrom('a', 'B', '.', ':', '/', '-', '_', ' ', 'é', '1') }),
      fc.string({ unit: 'binary' }),
    )
    fc.assert(
      fc.property(id, (value) => {
        expect(nameKeyHash(value)).toBe(keyHash(nameKey(value)))
      }),
      { numRuns: 5000 },
    )
  })

  it('keys its buckets by a keyed hash (round 56): names made to share an FNV-1a bucket spread', () => {
    // 1,024 names whose keys share one bucket of the FNV-1a hash the table used until round 56
    // (2,048 buckets): an upstream's tool names can be anything. A hint for each name walked its
    // bucket up to it (MAX_WALK, 256 ids, at most); now a bucket or two.
    const names = collidingIds(1024, 11, 'flood_')
    const mask = idTableSize(names.length) - 1
    expect(new Set(names.map((name) => nameKey(name))).size).toBe(names.length)
    expect(new Set(names.map((name) => idHash(nameKey(name)) & mask)).size).toBe(1)
    let reads = 0
    const list: IdList = {
      length: names.length,
      at: (position) => {
        reads += 1
        return names[position]
      },
    }
    const table = runSteps(ToolNameTable.build(list))
    reads = 0
    for (const [position, name] of names.entries())
      expect(table.matches(name, 1, () => true)).toEqual([position])
    expect(reads).toBeLessThan(names.length * 3)
    expect(new Set(names.map((name) => nameKeyHash(name) & mask)).size).toBeGreaterThan(700)
  })

  it('suggests the id for a tool name, another case or namespace, or a provider name', () => {
    expect(library.suggestIds('send_sms')).toEqual(['sms.send_sms'])
    expect(library.suggestIds('SMS.Send_SMS')).toEqual(['sms.send_sms'])
    expect(library.suggestIds('mail.send_sms')).toEqual(['sms.send_sms'])
    expect(library.suggestIds('sms--send_sms')).toEqual(['sms.send_sms'])
    expect(library.suggestIds('get_forecast')).toEqual([
      'weather.get_forecast',
      'other.get_forecast',
    ])
    expect(library.suggestIds('get_forecast', 1)).toEqual(['weather.get_forecast'])
    expect(library.suggestIds('list of cocktails')).toEqual(['The Cocktail DB::List of Cocktails'])
    expect(library.suggestIds('get_forecast', 3, (id) => id.startsWith('other.'))).toEqual([
      'other.get_forecast',
    ])
    expect(library.suggestIds('send_fax')).toEqual([])
  })

  it('says it in the error, over HTTP and from require', async () => {
    expect(() => library.require('send_sms')).toThrow(
      'Library "sample" has no tool "send_sms". Did you mean "sms.send_sms"? Tools are called by their ids, not their names.',
    )
    expect(() => library.require('send_fax')).toThrow(/^Library "sample" has no tool "send_fax".$/)
    const { app } = await createTestApp()
    const response = await app.request(
      '/v1/libraries/sample/tools/batch',
      postJson({ ids: ['send_sms', 'sms.send_sms', 'mail--send_email', 'nothing'] }),
    )
    expect(response.status).toBe(404)
    expect((await readJson(response)).error).toEqual({
      code: 'UNKNOWN_TOOL',
      message:
        'Library "sample" has no tool "send_sms", "mail--send_email", "nothing". Did you mean "sms.send_sms" for "send_sms", "mail.send_email" for "mail--send_email"? Tools are called by their ids, not their names.',
    })
    const feedback = await app.request(
      '/v1/feedback',
      postJson({ instruction: 'text Bob', used: ['send_sms'] }),
    )
    expect(feedback.status).toBe(400)
    expect((await readJson(feedback)).error.message).toContain(
      'does not have: "send_sms". Did you mean "sms.send_sms"?',
    )
  })

  it('makes the table of a large library in slices of the event loop; the hints come once it is made', async () => {
    const large = new ToolLibrary(
      'large',
      Array.from({ length: 100_001 }, (_, at) => ({
        id: `ns${at % 100}.tool_${at}`,
        name: `tool_${at}`,
        description: '',
        parameters: { type: 'object', properties: {} },
      })),
    )
    // The provider name needs no table.
    expect(large.suggestIds('ns7--tool_7')).toEqual(['ns7.tool_7'])
    expect(large.suggestIds('tool_7')).toEqual([])
    for (let turn = 0; turn < 1000 && large.suggestIds('tool_7').length === 0; turn++)
      await new Promise((resolve) => setTimeout(resolve, 5))
    expect(large.suggestIds('tool_7')).toEqual(['ns7.tool_7'])
  }, 30_000)

  it('bounds a lookup when thousands of tools share one name', () => {
    const many = new ToolLibrary(
      'many',
      Array.from({ length: 5000 }, (_, at) => ({
        id: `ns${at}.search`,
        name: 'search',
        description: '',
        parameters: { type: 'object', properties: {} },
      })),
    )
    let asked = 0
    expect(
      many.suggestIds('search', 3, () => {
        asked += 1
        return false
      }),
    ).toEqual([])
    expect(asked).toBeLessThanOrEqual(256)
  })
})
