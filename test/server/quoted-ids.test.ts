/**
 * Error messages that quote an id a client sent (DUPLICATE_TOOL_ID on PUT, UNKNOWN_TOOL on a tool
 * or batch read, unknown ids in usage examples and feedback), and the PUT answer's import warnings
 * that quote a tool's id or name, carry it escaped as `shownName` does
 * (bidi, zero-width and control characters as `\u` text, cut at 64 characters), over real HTTP:
 * JSON.stringify keeps a U+202E raw, so the body itself would hold one. Tool ids longer than
 * MAX_TOOL_ID_CHARS are refused wherever they enter (PUT, tool and batch reads, examples,
 * feedback), naming the id so quoted and the limit; one of exactly 500 goes through.
 */
import { connect } from 'node:net'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { MAX_TOOL_ID_CHARS } from '../../src/library/tool-id-limit.ts'
import { listenApp, type ListeningApp } from '../helpers/listen-app.ts'
import { createTestApp } from './test-service.ts'

/** What no error body may hold raw: controls, bidi controls, lone surrogates. */
const RAW = /[\u0000-\u001f\u007f-\u009f\u202a-\u202e\u2066-\u2069\ud800-\udfff]/
const SPOOF = 'rtl\u202etxt.exe'
/** The id as a message quotes it: `"rtl\u202etxt.exe"` with the backslash as text. */
const SHOWN = '"rtl\\u202etxt.exe"'

/* Tool ids past MAX_TOOL_ID_CHARS (500), refused wherever they enter over HTTP. */
const LIMIT = `is ${MAX_TOOL_ID_CHARS + 1} characters long; a tool id has at most ${MAX_TOOL_ID_CHARS}`
/** `ns.` and a name: an id of exactly `length` characters once imported with ?namespace=ns. */
const nameFor = (length: number, char: string) => char.repeat(length - 'ns.'.length)
const LONG_ID = `ns.${nameFor(MAX_TOOL_ID_CHARS + 1, 'a')}`
const EDGE_ID = `ns.${nameFor(MAX_TOOL_ID_CHARS, 'b')}`
/** A bidi override in a long id: quoted as `\u202e` text, cut at 64 characters. */
const SPOOF_ID = `\u202e${'c'.repeat(MAX_TOOL_ID_CHARS)}`
const SPOOF_SHOWN = `"\\u202e${'c'.repeat(63)}"…`

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

function send(method: string, path: string, body?: unknown): Promise<Response> {
  return fetch(`${server.url}${path}`, {
    method,
    headers: { 'content-type': 'application/json' },
    body: body === undefined ? undefined : JSON.stringify(body),
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
    // As long as an id may be (MAX_TOOL_ID_CHARS); a longer one is refused as such.
    const long = `x${'\u202e'.repeat(499)}`
    const answer = await send('POST', '/v1/libraries/sample/tools/batch', { ids: [long] })
    expect(answer.status).toBe(404)
    const error = await errorOf(answer)
    expect(error.code).toBe('UNKNOWN_TOOL')
    expect(error.message).toContain(`has no tool "x${'\\u202e'.repeat(63)}"….`)
    expect(error.message.length).toBeLessThan(1000)
  })
})

/** The answer to `bytes` sent on a new connection, as text (head and body). */
function rawAnswer(bytes: Buffer): Promise<string> {
  const { port } = new URL(server.url)
  return new Promise((resolve) => {
    const socket = connect({ port: Number(port), host: '127.0.0.1' })
    let text = ''
    socket.setEncoding('utf8').on('data', (chunk: string) => (text += chunk))
    socket.on('error', () => undefined)
    socket.on('close', () => resolve(text))
    socket.write(bytes)
  })
}

// Round 38: these quoted what the client sent as it came. A header value's bytes 0x80-0xff
// arrive as U+0080-U+00FF (C1 controls: \x9b is a terminal's CSI); a path's percent-encoding
// and a JSON key or value can hold anything.
describe('error messages quote headers, paths and keys a client sent escaped', () => {
  const C1 = '\u009b'
  const SHOWN_C1 = '\\u009b'
  it('a disallowed Origin, an unsupported Content-Encoding or charset', async () => {
    const cases: Array<[headers: Record<string, string>, status: number, shown: string]> = [
      [{ origin: `http://e${C1}vil.example` }, 403, `Origin "http://e${SHOWN_C1}vil.example"`],
      [{ 'content-encoding': `g${C1}zip` }, 400, `Content-Encoding "g${SHOWN_C1}zip"`],
      [
        { 'content-type': `application/json; charset=utf-16${C1}` },
        400,
        `charset "utf-16${SHOWN_C1}"`,
      ],
    ]
    for (const [headers, status, shown] of cases) {
      const answer = await fetch(`${server.url}/v1/select-tools`, {
        method: 'POST',
        headers: { 'content-type': 'application/json', ...headers },
        body: JSON.stringify({ instruction: 'Email Ann' }),
      })
      expect(answer.status).toBe(status)
      expect((await errorOf(answer)).message).toContain(shown)
    }
  })

  it('a request path over its body limit, a retriever kind, an unknown key', async () => {
    const head = `PUT /v1/rewards/x%E2%80%AE HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: application/json\r\nContent-Length: 20000000\r\nConnection: close\r\n\r\n`
    const text = await rawAnswer(Buffer.from(head))
    expect(text.split('\r\n')[0]).toBe('HTTP/1.1 413 Payload Too Large')
    const body = text.slice(text.indexOf('\r\n\r\n') + 4)
    expect(body).not.toMatch(RAW)
    expect(body).toContain('/v1/rewards/x\\\\u202e')
    const kind = await send('POST', '/v1/search-tools', { query: 'mail', retriever: SPOOF })
    expect(kind.status).toBe(400)
    expect((await errorOf(kind)).message).toContain(SHOWN)
    const key = await send('POST', '/v1/select-tools', { instruction: 'Email Ann', [SPOOF]: 1 })
    expect(key.status).toBe(400)
    expect((await errorOf(key)).message).toContain(SHOWN)
  })
})

const tool = (name: string) => ({
  name,
  description: 'Open a file',
  inputSchema: { type: 'object' },
})

describe('tool ids longer than 500 characters', () => {
  it('PUT refuses a library with one (IMPORT_FAILED naming it and its record); 500 is taken', async () => {
    const refused = await send('PUT', '/v1/libraries/long?namespace=ns', {
      tools: [tool('short'), tool(nameFor(MAX_TOOL_ID_CHARS + 1, 'a'))],
    })
    // Was: 201, a library holding an id no request can name.
    expect(refused.status).toBe(400)
    const error = await errorOf(refused)
    expect(error.code).toBe('IMPORT_FAILED')
    expect(error.message).toContain(`record 1: tool id "ns.${'a'.repeat(61)}"… ${LIMIT}`)
    expect(error.message.length).toBeLessThan(500)
    expect((await send('GET', '/v1/libraries/long')).status).toBe(404)

    const taken = await send('PUT', '/v1/libraries/edge?namespace=ns', {
      tools: [tool('short'), tool(nameFor(MAX_TOOL_ID_CHARS, 'b'))],
    })
    expect(taken.status).toBe(201)
    const read = await send('GET', `/v1/libraries/edge/tools/${EDGE_ID}`)
    expect(read.status).toBe(200)
    expect(((await read.json()) as { tool: { id: string } }).tool.id).toBe(EDGE_ID)
    const batch = await send('POST', '/v1/libraries/edge/tools/batch', { ids: [EDGE_ID] })
    expect(batch.status).toBe(200)
    const examples = await send('POST', '/v1/libraries/edge/examples', {
      examples: [{ instruction: 'open the file', tools: [EDGE_ID] }],
    })
    expect(examples.status).toBe(200)
  })

  it('a tool read and a batch read refuse one (INVALID_INPUT), not UNKNOWN_TOOL', async () => {
    const one = await send('GET', `/v1/libraries/sample/tools/${encodeURIComponent(SPOOF_ID)}`)
    // Was: 404 UNKNOWN_TOOL, after the library was searched for it.
    expect(one.status).toBe(400)
    const error = await errorOf(one)
    expect(error.code).toBe('INVALID_INPUT')
    expect(error.message).toBe(
      `The tool id ${SPOOF_SHOWN} is ${MAX_TOOL_ID_CHARS + 1} characters long; a tool id has at most ${MAX_TOOL_ID_CHARS}.`,
    )

    const batch = await send('POST', '/v1/libraries/sample/tools/batch', {
      ids: ['sms.send_sms', SPOOF_ID],
    })
    expect(batch.status).toBe(400)
    const batchError = await errorOf(batch)
    expect(batchError.code).toBe('INVALID_INPUT')
    expect(batchError.message).toContain(`"ids.1": tool id ${SPOOF_SHOWN} ${LIMIT}`)
  })

  it('usage examples and feedback name it and the limit', async () => {
    const examples = await send('POST', '/v1/libraries/sample/examples', {
      examples: [{ instruction: 'open the file', tools: ['sms.send_sms', LONG_ID] }],
    })
    expect(examples.status).toBe(400)
    const error = await errorOf(examples)
    expect(error.code).toBe('INVALID_INPUT')
    // Was: "Too big: expected string to have <=500 characters", naming neither the id nor its length.
    expect(error.message).toContain(`tool id "ns.${'a'.repeat(61)}"… ${LIMIT}`)

    const feedback = await send('POST', '/v1/feedback', {
      instruction: 'open the file',
      used: [LONG_ID],
    })
    expect(feedback.status).toBe(400)
    const feedbackError = await errorOf(feedback)
    expect(feedbackError.code).toBe('INVALID_INPUT')
    expect(feedbackError.message).toContain(`"used.0": tool id "ns.${'a'.repeat(61)}"… ${LIMIT}`)
  })
})
