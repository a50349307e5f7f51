/**
 * A JSON tool document of 1 MiB or more has its records counted before it is parsed
 * (`countJsonRecords`): one past `library.maxTools` is refused without JSON.parse building the
 * whole document first (round 32: a 260 MB TaskBench file of 9,000,000 nodes was parsed whole,
 * over 1 GB, before it was refused). Each refused document here ends in a syntax error, so an
 * answer other than "invalid JSON" shows that nothing was parsed. Real files, real HTTP.
 */
import { mkdtemp, rm, writeFile } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { importToolsFromFile } from '../../../src/library/importers/index.ts'
import {
  MAX_DOCUMENT_DEPTH,
  RECORD_COUNT_MIN_CHARS,
  scanJsonDocument,
} from '../../../src/library/importers/parse-json-text.ts'
import { listenApp } from '../../helpers/listen-app.ts'
import { createTestApp } from '../../server/test-service.ts'
import { expectToolselErrorAsync } from './expect-toolsel-error.ts'

let root: string
beforeAll(async () => {
  root = await mkdtemp(join(tmpdir(), 'toolsel-record-count-'))
})
afterAll(async () => {
  await rm(root, { recursive: true, force: true })
})

/** A TaskBench `tool_desc.json` of `count` nodes, over RECORD_COUNT_MIN_CHARS for 20,000. */
function taskBench(count: number, end = '],"links":[]}'): string {
  const nodes = Array.from({ length: count }, (_, at) =>
    JSON.stringify({ id: `node_${at}`, desc: `Does task number ${at} of the benchmark.` }),
  )
  return `{"nodes":[${nodes.join(',')}${end}`
}

const REFUSED = (max: number) =>
  `more than ${max} records (counted before the document was parsed; nothing was parsed): refused (library.maxTools, env TOOLSEL_MAX_TOOLS, raises the limit)`

describe('records counted before a large JSON document is parsed', () => {
  it('a TaskBench file past library.maxTools is refused unparsed; one within it imports', async () => {
    const broken = taskBench(20_000, '],"links":[oops')
    expect(broken.length).toBeGreaterThan(RECORD_COUNT_MIN_CHARS)
    const file = join(root, 'tool_desc.json')
    await writeFile(file, broken)
    await expectToolselErrorAsync(
      () => importToolsFromFile(file, { maxTools: 1000 }),
      'IMPORT_FAILED',
      `${file}: ${REFUSED(1000)}`,
    )
    // Within the cap the document is parsed as before, and its syntax error said.
    await expectToolselErrorAsync(
      () => importToolsFromFile(file, { maxTools: 20_000 }),
      'IMPORT_FAILED',
      'invalid JSON',
    )
    await writeFile(file, taskBench(20_000))
    expect((await importToolsFromFile(file, { maxTools: 20_000 })).tools).toHaveLength(20_000)
  })

  it('PUT of a large array past library.maxTools is refused before the parse, in the worker too', async () => {
    const { app } = await createTestApp({
      config: { library: { maxTools: 500 }, server: { importWorkerMinChars: 1 } },
    })
    const served = await listenApp(app.fetch)
    try {
      const tools = Array.from({ length: 20_000 }, (_, at) =>
        JSON.stringify({ name: `tool_${at}`, description: `Does task number ${at} well.` }),
      )
      const body = `[${tools.join(',')},{"name":`
      expect(body.length).toBeGreaterThan(RECORD_COUNT_MIN_CHARS)
      const answer = await fetch(`${served.url}/v1/libraries/many`, {
        method: 'PUT',
        headers: { 'content-type': 'application/json' },
        body,
      })
      expect(answer.status).toBe(400)
      const { error } = (await answer.json()) as { error: { code: string; message: string } }
      expect(error.code).toBe('IMPORT_FAILED')
      expect(error.message).toContain(REFUSED(500))
    } finally {
      await served.close()
    }
  })

  it('a document nested deeper than MAX_DOCUMENT_DEPTH is refused before the parse', async () => {
    // 1,000,000 arrays inside one tool's inputSchema (2 MB): the import worker parsed them whole.
    const deep = `${'['.repeat(1_000_000)}${']'.repeat(1_000_000)}`
    const file = join(root, 'deep.json')
    await writeFile(
      file,
      `{"tools":[{"name":"deep_tool","description":"d","inputSchema":{"type":"object","properties":{"a":{"type":"array","enum":${deep}}}}}]}`,
    )
    await expectToolselErrorAsync(
      () => importToolsFromFile(file),
      'IMPORT_FAILED',
      `${file}: the document nests more than ${MAX_DOCUMENT_DEPTH} arrays and objects deep (seen before it was parsed; nothing was parsed): a tool's parameters nest at most 64 levels`,
    )
  })

  it('counts the lists the parsed check counts, and only those', () => {
    const cases: [string, number][] = [
      ['[]', 0],
      [' [ {"a":[1,2,3,4]}, "x,y", [5,6] ] ', 3],
      ['{"tools":[{"name":"a"},{"name":"b"}]}', 2],
      ['{"nodes":[], "links":[1,2,3]}', 0],
      ['{"functions":[1,2,3,4]}', 4],
      ['{"result":{"tools":[1,2]}}', 2],
      ['{"x":{"tools":[1,2]}}', 0],
      ['{"tools":1,"a_much_longer_key":[1,2,3]}', 0],
      ['{"a":"tools","b":[1,2]}', 0],
      [String.raw`{"tools":["a\"],[","b"]}`, 2],
      ['{"nodes":[1,2],"tools":[1,2,3,4,5]}', 5],
    ]
    expect(cases.map(([text]) => scanJsonDocument(text).records)).toEqual(
      cases.map(([, count]) => count),
    )
    expect(scanJsonDocument(`[${'1,'.repeat(100)}1]`, 10).records).toBe(11)
    expect(scanJsonDocument('{"a":[[{"b":[]}]],"c":[1]}').depth).toBe(5)
    expect(scanJsonDocument(`${'['.repeat(5000)}${']'.repeat(5000)}`, Infinity, 100).depth).toBe(
      101,
    )
  })
})
