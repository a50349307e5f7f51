/**
 * Error messages that quote an id a client sent (DUPLICATE_TOOL_ID on PUT, UNKNOWN_TOOL on a tool
 * or batch read, unknown ids in usage examples and feedback), and the PUT answer's import warnings
 * that quote a tool's id or name, carry it escaped as `shownName` does
 * (bidi, zero-width and control characters as `\u` text, cut at 64 characters), over real HTTP:
 * JSON.stringify keeps a U+202E raw, so the body itself would hold one.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { listenApp, type ListeningApp } from '../helpers/listen-app.ts'
import { createTestApp } from './test-service.ts'

/** What no error body may hold raw: controls, bidi controls, lone surrogates. */
const RAW = /[\u0000-\u001f\u007f-\u009f\u202a-\u202e\u2066-\u2069\ud800-\udfff]/
const SPOOF = 'rtl\u202etxt.exe'
/** The id as a message quotes it: `"rtl\u202etxt.exe"` with the backslash as text. */
const SHOWN = '"rtl\\u202etxt.exe"'

let server: ListeningApp

beforeAll(async () => {
  const { app } = await createTestApp()
  server = await listenApp(app.fetch)
})

afterAll(async () => {
  await server?.close()
})

/** The error of an answer, after checking that its raw text holds no control or bidi character. */
async function errorOf(answer: Response): Promise<{ code: string; message: string }> {
  const text = await answer.text()
  expect(text).not.toMatch(RAW)
  return (JSON.parse(text) as { error: { code: string; message: string } }).error
}

function send(method: string, path: string, body: unknown): Promise<Response> {
  return fetch(`${server.url}${path}`, {
    method,
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify(body),
  })
}

describe('error messages quote ids escaped', () => {
  it('PUT with two tools of one id holding U+202E: DUPLICATE_TOOL_ID names it escaped', async () => {
    const tool = { name: SPOOF, description: 'Open a file', inputSchema: { type: 'object' } }
    const answer = await send('PUT', '/v1/libraries/dup?namespace=ns', {
      tools: [tool, { ...tool, description: 'Another' }],
    })
    expect(answer.status).toBe(400)
    const error = await errorOf(answer)
    expect(error.code).toBe('DUPLICATE_TOOL_ID')
    expect(error.message).toContain(`tool id "ns.rtl\\u202etxt.exe" appears twice`)
  })

  it('a tool read and a batch read of an unknown id: UNKNOWN_TOOL names it escaped', async () => {
    const one = await fetch(`${server.url}/v1/libraries/sample/tools/${encodeURIComponent(SPOOF)}`)
    expect(one.status).toBe(404)
    const error = await errorOf(one)
    expect(error.code).toBe('UNKNOWN_TOOL')
    expect(error.message).toContain(`has no tool ${SHOWN}`)

    const batch = await send('POST', '/v1/libraries/sample/tools/batch', {
      ids: ['sms.send_sms', SPOOF, 'clear\u001b[2J'],
    })
    expect(batch.status).toBe(404)
    const batchError = await errorOf(batch)
    expect(batchError.code).toBe('UNKNOWN_TOOL')
    expect(batchError.message).toContain(`has no tool ${SHOWN}, "clear\\u001b[2J"`)
  })

  it('usage examples and feedback naming an unknown id: INVALID_INPUT names it escaped', async () => {
    const examples = await send('POST', '/v1/libraries/sample/examples', {
      examples: [{ instruction: 'open the file', tools: [SPOOF] }],
    })
    expect(examples.status).toBe(400)
    const error = await errorOf(examples)
    expect(error.code).toBe('INVALID_INPUT')
    expect(error.message).toContain(`does not have: ${SHOWN}.`)

    const feedback = await send('POST', '/v1/feedback', {
      instruction: 'open the file',
      used: [SPOOF],
    })
    expect(feedback.status).toBe(400)
    const feedbackError = await errorOf(feedback)
    expect(feedbackError.code).toBe('INVALID_INPUT')
    expect(feedbackError.message).toContain(SHOWN)
  })

  it('PUT warnings quote ids, names and operationIds escaped', async () => {
    const tools = [
      {
        name: SPOOF,
        description: 'Open a file',
        inputSchema: { type: 'object', properties: { days: { type: 'int' } } },
      },
    ]
    const answer = await send('PUT', '/v1/libraries/warned?namespace=ns', { tools })
    expect(answer.status).toBe(201)
    // The warnings' text (`import.schemaChanges[].id` is the id itself, as data).
    const { warnings } = (await answer.json()) as { warnings: string[] }
    for (const warning of warnings) expect(warning).not.toMatch(RAW)
    expect(warnings).toContainEqual(
      expect.stringContaining(
        'rewritten into JSON Schema: ns.rtl\\u202etxt.exe: properties.days.type: "int" → "integer"',
      ),
    )

    const spec = {
      openapi: '3.0.0',
      info: { title: 'Files', version: '1' },
      paths: { '/open': { get: { operationId: 'open\u202etxt', responses: {} } } },
    }
    const openapi = await send('PUT', '/v1/libraries/spec?format=openapi', spec)
    expect(openapi.status).toBe(201)
    const specWarnings = ((await openapi.json()) as { warnings: string[] }).warnings
    for (const warning of specWarnings) expect(warning).not.toMatch(RAW)
    expect(specWarnings).toContainEqual(
      expect.stringContaining('operationId "open\\u202etxt" is used as the name'),
    )
  })

  it('a long unknown id is quoted cut at 64 characters', async () => {
    const long = `x${'\u202e'.repeat(20_000)}`
    const answer = await send('POST', '/v1/libraries/sample/tools/batch', { ids: [long] })
    expect(answer.status).toBe(404)
    const error = await errorOf(answer)
    expect(error.code).toBe('UNKNOWN_TOOL')
    expect(error.message).toContain(`has no tool "x${'\\u202e'.repeat(63)}"….`)
    expect(error.message.length).toBeLessThan(1000)
  })
})
