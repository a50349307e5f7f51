/**
 * Request bodies that are not UTF-8: refused with 400 INVALID_INPUT naming the first bad byte (and
 * its line for an upload), as a tool file read from disk is, not read as U+FFFD and saved or
 * matched. Over real HTTP (a listening server), in the process and in the upload import worker.
 */
import { afterEach, describe, expect, it } from 'vitest'
import { listenApp, type ListeningApp } from '../helpers/listen-app.ts'
import { createTestApp } from './test-service.ts'

const BOM = Buffer.from([0xef, 0xbb, 0xbf])

/** An MCP tools/list body of two tools, the second described with `description`'s bytes. */
function mcpBody(description: Buffer): Buffer {
  const [before, after] = JSON.stringify({
    tools: [
      {
        name: 'send_message',
        description: 'Send a chat message.',
        inputSchema: { type: 'object' },
      },
      { name: 'book_table', description: '@@', inputSchema: { type: 'object' } },
    ],
  }).split('@@')
  return Buffer.concat([Buffer.from(before), description, Buffer.from(after)])
}

let served: ListeningApp | undefined
afterEach(async () => {
  await served?.close()
  served = undefined
})

async function serve(importWorkerMinChars?: number) {
  const { app } = await createTestApp({
    config: importWorkerMinChars === undefined ? {} : { server: { importWorkerMinChars } },
  })
  served = await listenApp(app.fetch)
  return served.url
}

async function send(url: string, method: string, body: Buffer) {
  const response = await fetch(url, {
    method,
    headers: { 'content-type': 'application/json' },
    body: new Uint8Array(body),
  })
  return { status: response.status, body: (await response.json()) as any }
}

describe('request bodies that are not UTF-8', () => {
  for (const [where, minChars] of [
    ['in the process', undefined],
    ['in the import worker', 1],
  ] as const) {
    it(`PUT /v1/libraries/:library refuses a Latin-1 byte ${where}, naming byte and line`, async () => {
      const url = await serve(minChars)
      // "caf\xe9": the é of Latin-1, one byte that starts no UTF-8 character.
      const body = mcpBody(Buffer.from('Book a table at a caf\xe9.', 'latin1'))
      const offset = body.indexOf(0xe9)
      const answer = await send(`${url}/v1/libraries/latin`, 'PUT', body)
      expect(answer.status).toBe(400)
      expect(answer.body.error).toEqual({
        code: 'INVALID_INPUT',
        message: `The request body is not UTF-8 text at byte ${offset} (line 1): send the tool file as UTF-8. Nothing was imported.`,
      })
      // Nothing was saved or served.
      expect((await fetch(`${url}/v1/libraries/latin`)).status).toBe(404)
    })

    it(`PUT keeps a byte-order mark's meaning and a real U+FFFD ${where}`, async () => {
      const url = await serve(minChars)
      const body = Buffer.concat([BOM, mcpBody(Buffer.from('Book a table \ufffd café.'))])
      const answer = await send(`${url}/v1/libraries/bom`, 'PUT', body)
      expect(answer.status).toBe(201)
      const tool = await fetch(`${url}/v1/libraries/bom/tools/bom.book_table`)
      expect(((await tool.json()) as any).tool.description).toBe('Book a table \ufffd café.')
    })
  }

  it('names the line of the bad byte in a multi-line upload', async () => {
    const url = await serve()
    const body = Buffer.from(
      JSON.stringify(
        { tools: [{ name: 'a_tool', description: '@@', inputSchema: { type: 'object' } }] },
        null,
        2,
      ).replace('@@', 'x\u00e9'),
    )
    // The é's second byte alone: a continuation byte with no lead.
    const bad = Buffer.concat([
      body.subarray(0, body.indexOf(0xc3)),
      body.subarray(body.indexOf(0xc3) + 1),
    ])
    const answer = await send(`${url}/v1/libraries/lines`, 'PUT', bad)
    expect(answer.status).toBe(400)
    expect(answer.body.error.message).toContain(`at byte ${bad.indexOf(0xa9)} (line 5)`)
  })

  it('JSON bodies of select, search, feedback and examples are refused at the bad byte', async () => {
    const url = await serve()
    const instruction = Buffer.from('{"instruction":"send a message to Ren\xe9"}', 'latin1')
    for (const path of ['/v1/select-tools', '/v1/search-tools', '/v1/feedback']) {
      const answer = await send(`${url}${path}`, 'POST', instruction)
      expect(answer.status, path).toBe(400)
      expect(answer.body.error, path).toEqual({
        code: 'INVALID_INPUT',
        message: `The request body is not UTF-8 text at byte ${instruction.indexOf(0xe9)}: send JSON as UTF-8.`,
      })
    }
    // An overlong encoding of "/" (C0 AF) is not UTF-8 either.
    const examples = Buffer.concat([
      Buffer.from('{"examples":[{"instruction":"a'),
      Buffer.from([0xc0, 0xaf]),
      Buffer.from('","tools":["mail.send_email"]}]}'),
    ])
    const answer = await send(`${url}/v1/libraries/sample/examples`, 'POST', examples)
    expect(answer.status).toBe(400)
    expect(answer.body.error.message).toBe(
      `The request body is not UTF-8 text at byte ${examples.indexOf(0xc0)}: send JSON as UTF-8.`,
    )
  })

  it('/mcp: a JSON-RPC body that is not UTF-8 is a parse error naming the byte; UTF-8 and a BOM are read', async () => {
    const url = await serve()
    const mcp = (body: Buffer) =>
      fetch(`${url}/mcp`, {
        method: 'POST',
        headers: {
          'content-type': 'application/json',
          accept: 'application/json, text/event-stream',
          'mcp-protocol-version': '2025-03-26',
        },
        body: new Uint8Array(body),
      })
    const call = (query: Buffer) =>
      Buffer.concat([
        Buffer.from(
          '{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"search_tools","arguments":{"query":"',
        ),
        query,
        Buffer.from('"}}}'),
      ])
    const bad = call(Buffer.from('send a message to Ren\xe9', 'latin1'))
    const refused = await mcp(bad)
    expect(refused.status).toBe(400)
    expect(await refused.json()).toEqual({
      jsonrpc: '2.0',
      error: {
        code: -32700,
        message: `Parse error: the request body is not UTF-8 text at byte ${bad.indexOf(0xe9)}`,
      },
      id: null,
    })
    const good = await mcp(Buffer.concat([BOM, call(Buffer.from('envoyer un e-mail à René'))]))
    expect(good.status).toBe(200)
    expect(await good.text()).toContain('"result"')
  })

  it('a JSON body with a byte-order mark, or with multi-byte text, is read as before', async () => {
    const url = await serve()
    const body = Buffer.concat([BOM, Buffer.from('{"instruction":"envoyer un e-mail à René 📧"}')])
    const answer = await send(`${url}/v1/select-tools`, 'POST', body)
    expect(answer.status).toBe(200)
    expect(answer.body.tools.length).toBeGreaterThan(0)
  })
})
