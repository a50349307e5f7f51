/**
 * Tool lists toolsel wrote in a provider's format (`toolFormat`), imported back: the names read
 * back as the ids they were written from, only when the file shows it is such an export.
 */
import { mkdtemp, writeFile } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { describe, expect, it } from 'vitest'
import { importToolsFromFile, importToolsFromText } from '../../../src/library/importers/index.ts'
import { createTestApp, postJson, readJson } from '../../server/test-service.ts'

/** Ids of every kind the name code has a case for. */
const IDS = [
  'sms.send_sms',
  'brave-search.web_search',
  'The Cocktail DB::List of Cocktails',
  'hub/owner/model',
  'plain_tool',
  'weather.forecast.daily',
]
/** Ids only an export's toolIds reads back: a shortened name, a Latin-1 letter. */
const MAPPED_ONLY = [
  'github.' + 'repos_list_commits_for_a_repository_of_the_user_'.repeat(2),
  'café.order',
]

const FORMATS = ['openai', 'openai-responses', 'anthropic'] as const

/** A library of `ids` served by a test app, and its schema batch in `format` (the real export). */
async function exported(ids: readonly string[]) {
  const { app } = await createTestApp()
  const tools = ids.map((id, index) => ({
    id,
    name: id,
    description: `Tool number ${index} does its own thing.`,
    parameters: { type: 'object', properties: { q: { type: 'string' } } },
  }))
  const put = await app.request('/v1/libraries/origin', {
    method: 'PUT',
    body: JSON.stringify(tools),
    headers: { 'content-type': 'application/json' },
  })
  expect(put.status).toBe(201)
  return async (format: string) => {
    const response = await app.request(
      '/v1/libraries/origin/tools/batch',
      postJson({ ids, toolFormat: format }),
    )
    expect(response.status).toBe(200)
    return { app, answer: await readJson(response) }
  }
}

async function writeTemp(name: string, value: unknown): Promise<string> {
  const path = join(await mkdtemp(join(tmpdir(), 'toolsel-provider-names-')), name)
  await writeFile(path, JSON.stringify(value, null, 2))
  return path
}

describe('importing tools toolsel exported in a provider format', () => {
  it.each(FORMATS)(
    '%s: the saved answer (toolIds) and the bare list read back as the ids',
    async (format) => {
      const batch = await exported([...IDS, ...MAPPED_ONLY])
      const { answer } = await batch(format)
      const whole = await importToolsFromFile(await writeTemp('answer.json', answer))
      expect(whole.format).toBe(format === 'anthropic' ? 'anthropic' : 'openai')
      expect(whole.tools.map((tool) => tool.id)).toEqual([...IDS, ...MAPPED_ONLY])
      expect(whole.tools[0]).toMatchObject({
        name: 'send_sms',
        namespace: 'sms',
        source: { providerName: 'sms--send_sms' },
      })
      expect(whole.tools[2]).toMatchObject({
        name: 'List of Cocktails',
        namespace: 'The Cocktail DB',
      })
      expect(whole.warnings[0]).toMatch(
        /answer\.json: 7 tool name\(s\) written by toolsel read back as tool ids \(sms--send_sms → sms\.send_sms\)/,
      )

      // The bare tool list (what an agent stack keeps) without the shortened and Latin-1 names.
      const bare = (await batch(format)).answer.tools.slice(0, IDS.length)
      const list = await importToolsFromFile(await writeTemp('tools.json', bare))
      expect(list.tools.map((tool) => tool.id)).toEqual(IDS)
      // A shortened name in a bare list cannot be read back: every name stays as it is.
      const all = await importToolsFromFile(await writeTemp('all.json', answer.tools))
      expect(all.tools.map((tool) => tool.id)).toEqual(Object.keys(answer.toolIds))
    },
    30_000,
  )

  it('one tool as GET …/tools/:id answers it ({tool, toolIds}) imports as a list of one', async () => {
    const { app } = await (await exported(IDS))('openai')
    for (const format of ['toolsel', ...FORMATS]) {
      const id = 'The Cocktail DB::List of Cocktails'
      const response = await app.request(
        `/v1/libraries/origin/tools/${encodeURIComponent(id)}?toolFormat=${format}`,
      )
      const { tools } = await importToolsFromFile(
        await writeTemp('one.json', await readJson(response)),
      )
      expect(tools.map((tool) => [tool.id, tool.name])).toEqual([
        [id, format === 'toolsel' ? id : 'List of Cocktails'],
      ])
    }
  }, 30_000)

  it('an upload of the answer to another library gets the ids; providerNames=keep the names', async () => {
    const { app, answer } = await (await exported(IDS))('anthropic')
    const upload = (query: string) =>
      app.request(`/v1/libraries/copy${query}`, {
        method: 'PUT',
        body: JSON.stringify(answer),
        headers: { 'content-type': 'application/json' },
      })
    expect((await upload('')).status).toBe(201)
    const tool = await app.request('/v1/libraries/copy/tools/sms.send_sms')
    expect((await readJson(tool)).tool).toMatchObject({ id: 'sms.send_sms', name: 'send_sms' })
    expect((await upload('?providerNames=keep')).status).toBe(200)
    const kept = await app.request('/v1/libraries/copy/tools/sms--send_sms')
    expect((await readJson(kept)).tool.id).toBe('sms--send_sms')
    const bad = await upload('?providerNames=auto')
    expect(bad.status).toBe(400)
  }, 30_000)
})

describe('names that are not (surely) toolsel exports stay as they are', () => {
  const openai = (...names: string[]) =>
    JSON.stringify(names.map((name) => ({ type: 'function', function: { name } })))
  const ids = (text: string, options = {}) =>
    importToolsFromText(text, options).tools.map((tool) => tool.id)

  it('every name must read back, and one must hold a separator as toolsel writes it', () => {
    expect(ids(openai('sms--send_sms', 'get_weather'))).toEqual(['sms.send_sms', 'get_weather'])
    // get-weather is no name toolsel writes (it writes get-_weather): the file is not its export.
    expect(ids(openai('sms--send_sms', 'get-weather'))).toEqual(['sms--send_sms', 'get-weather'])
    // No separator: top-20 and render-3d would read as "top " and "render=".
    expect(ids(openai('top-20', 'render-3d'))).toEqual(['top-20', 'render-3d'])
    // Latin-1 and control characters are never read from a name alone (get-feed, search-db).
    expect(ids(openai('news--get-feed', 'search-db', 'a--b'))).toEqual([
      'news--get-feed',
      'search-db',
      'a--b',
    ])
    expect(ids(openai('a--b', 'c-00'))).toEqual(['a--b', 'c-00'])
  })

  it('keeps the names with providerNames "keep"; the namespace option still prefixes ids', () => {
    expect(ids(openai('sms--send_sms'), { providerNames: 'keep' })).toEqual(['sms--send_sms'])
    const { tools } = importToolsFromText(openai('sms--send_sms'), { namespace: 'agent' })
    expect(tools[0]).toMatchObject({
      id: 'agent.sms.send_sms',
      name: 'send_sms',
      namespace: 'agent',
    })
  })

  it('does not use a toolIds map that does not fit every name', () => {
    const tools = [
      { name: 'x--y', input_schema: { type: 'object' } },
      { name: 'z', input_schema: { type: 'object' } },
    ]
    // "x--y" → "other" is not how toolsel writes "other": the map is not used, the code is.
    const forged = JSON.stringify({ tools, toolIds: { 'x--y': 'other', z: 'z' } })
    expect(ids(forged)).toEqual(['x.y', 'z'])
    const missing = JSON.stringify({
      tools: [{ name: 'a-h0123456789ab', input_schema: { type: 'object' } }],
      toolIds: {},
    })
    expect(ids(missing)).toEqual(['a-h0123456789ab'])
  })
})
