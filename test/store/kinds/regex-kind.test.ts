import { mkdtemp, readdir } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { describe, expect, it } from 'vitest'
import { defaultConfig } from '../../../src/config/schema.ts'
import { ToolLibrary } from '../../../src/library/tool-library.ts'
import {
  buildIndexedLibrary,
  loadIndexedLibrary,
  saveIndexedLibrary,
} from '../../../src/store/library-lifecycle.ts'
import { requireRetriever } from '../../../src/store/indexed-library.ts'
import { MATCH_TIMEOUT_MS, RegexRetriever } from '../../../src/store/kinds/regex-kind.ts'
import { createTestApp, postJson, readJson } from '../../server/test-service.ts'
import { SAMPLE_TOOLS } from '../../helpers/sample-tools.ts'
import { CONTRACT_TOOLS, runRetrieverContract } from '../../retrieve/retriever.contract.ts'

runRetrieverContract({ name: 'RegexRetriever', create: async (tools) => new RegexRetriever(tools) })

describe('regex retriever kind', () => {
  const retriever = new RegexRetriever(CONTRACT_TOOLS)
  const ids = async (pattern: string, k = 10) =>
    (await retriever.retrieve(pattern, { k })).map((candidate) => candidate.id)

  it('finds tools by exact name, name prefix and alternation, case-insensitively', async () => {
    expect(await ids('^send_sms$')).toEqual(['messaging.send_sms'])
    expect(await ids('^GET_')).toEqual([
      'maps.get_directions',
      'weather.get_air_quality',
      'weather.get_forecast',
    ])
    expect(await ids('send_(sms|email)')).toEqual(['messaging.send_email', 'messaging.send_sms'])
  })

  it('scores name 3, description 1, parameters 1, namespace 1, ties by id', async () => {
    const scored = await retriever.retrieve('weather|city', { k: 30 })
    expect(scored.slice(0, 2)).toEqual([
      // name (weather.… ids) 3 + description 1 + parameter "city" 1 + namespace 1
      { id: 'weather.get_forecast', score: 6 },
      // name 3 + description ("air quality") 0 + namespace 1
      { id: 'weather.get_air_quality', score: 4 },
    ])
    expect(scored.at(-1)).toEqual({ id: 'travel.book_hotel', score: 1 })
  })

  it('refuses a bad pattern with INVALID_INPUT that names it and the fix', async () => {
    await expect(retriever.retrieve('find (cheap flights', { k: 5 })).rejects.toMatchObject({
      code: 'INVALID_INPUT',
      message: expect.stringMatching(
        /^Regex "find \(cheap flights" is not a valid regular expression .*escape \( \) \[ \] \{ \} \. \* \+ \? with a backslash/,
      ),
    })
    await expect(retriever.retrieve('(a+)+$', { k: 5 })).rejects.toMatchObject({
      code: 'INVALID_INPUT',
      message: expect.stringContaining('repeats a repeated group'),
    })
    await expect(retriever.retrieve('x'.repeat(201), { k: 5 })).rejects.toMatchObject({
      code: 'INVALID_INPUT',
      message: expect.stringContaining(
        'is 201 characters long; the regex retriever takes at most 200',
      ),
    })
  })

  it('stops a backtracking pattern the shape check lets through, and refuses it', async () => {
    const description = 'Send an email message to a recipient with a subject and a body. '
    const long = new RegexRetriever([
      { id: 'a', name: 'a', description: description.repeat(40), parameters: {} },
    ])
    // Exponential in the field's length, or its fourth power: minutes each before.
    for (const pattern of ['(.|.)*Z', '([\\s\\S]|[\\s\\S])*Z', '.*.*.*Z', '(.|\\s)*Z']) {
      const start = performance.now()
      await expect(long.retrieve(pattern, { k: 5 })).rejects.toMatchObject({
        code: 'INVALID_INPUT',
        message: expect.stringContaining(`for more than ${MATCH_TIMEOUT_MS} ms and was stopped`),
      })
      expect(performance.now() - start).toBeLessThan(1000)
    }
    // The process goes on: the next pattern answers.
    expect(await ids('^send_sms$')).toEqual(['messaging.send_sms'])
  })

  it('is built with bm25, saved without files of its own, and loaded back', async () => {
    const config = defaultConfig()
    const library = new ToolLibrary('sample', SAMPLE_TOOLS)
    const indexed = await buildIndexedLibrary(library, config, { retriever: 'regex' })
    expect([...indexed.retrievers.keys()]).toEqual(['bm25', 'regex'])
    expect(indexed.manifest.defaultRetriever).toBe('regex')
    const dir = await saveIndexedLibrary(await mkdtemp(join(tmpdir(), 'toolsel-regex-')), indexed)
    expect((await readdir(dir)).sort()).toEqual([
      'bm25.bin',
      'manifest.json',
      'tools.idx',
      'tools.jsonl',
    ])
    const loaded = await loadIndexedLibrary(dir, config)
    const query = { k: 5 }
    expect(await requireRetriever(loaded).retrieve('^send_', query)).toEqual(
      await requireRetriever(indexed, 'regex').retrieve('^send_', query),
    )
  })

  it('serves POST /v1/search-tools with "retriever": "regex" on a library uploaded with it', async () => {
    const { app } = await createTestApp()
    const put = await app.request('/v1/libraries/rx?retriever=regex', {
      method: 'PUT',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify(SAMPLE_TOOLS),
    })
    expect(put.status).toBe(201)
    const search = (query: string, retriever = 'regex') =>
      app.request('/v1/search-tools', postJson({ query, library: 'rx', retriever }))
    const found = await readJson(await search('^send_email$'))
    expect(found).toMatchObject({ library: 'rx', retriever: 'regex' })
    expect(found.results.map((hit: { id: string }) => hit.id)).toEqual(['mail.send_email'])
    const bad = await search('send (email')
    expect(bad.status).toBe(400)
    expect((await readJson(bad)).error.code).toBe('INVALID_INPUT')
  })
})
