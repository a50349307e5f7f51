import { StdioClientTransport } from '@modelcontextprotocol/sdk/client/stdio.js'
import { describe, expect, it } from 'vitest'
import type { UpstreamConfig } from '../../../src/config/schema.ts'
import {
  createUpstreamTransport,
  replaceReadBuffer,
} from '../../../src/mcp/gateway/create-upstream-transport.ts'
import {
  BoundedReadBuffer,
  MAX_SERVER_MESSAGES_PER_SECOND,
  TopLevelId,
  UpstreamLineRunaway,
  UpstreamMessageFlood,
  type MessageId,
} from '../../../src/mcp/gateway/bounded-read-buffer.ts'

const LIMIT = 200

/** What `line` is read as when fed `size` bytes at a time. */
function answers(line: string, size = 7): MessageId | undefined {
  const scanner = new TopLevelId()
  const bytes = Buffer.from(line)
  for (let at = 0; at < bytes.length; at += size) scanner.feed(bytes.subarray(at, at + size))
  return scanner.answers
}

describe('TopLevelId', () => {
  it('reads the top-level id at the start or the end of an answer, in pieces', () => {
    const text = 'y'.repeat(500)
    expect(answers(JSON.stringify({ jsonrpc: '2.0', id: 12, result: { text } }))).toBe(12)
    expect(answers(JSON.stringify({ result: { text }, jsonrpc: '2.0', id: 'a"b' }))).toBe('a"b')
    expect(answers(JSON.stringify({ error: { code: 1, message: text }, id: 3 }), 1)).toBe(3)
    expect(answers('{"i\\u0064" : 4 , "result":{}}')).toBe(4)
  })

  it('does not take an id nested in the result or inside a string for the answer', () => {
    const nested = { result: { id: 1, items: [{ id: 2 }], note: '"id":3,' }, jsonrpc: '2.0' }
    expect(answers(JSON.stringify(nested))).toBeUndefined()
    expect(answers(JSON.stringify({ ...nested, id: 9 }))).toBe(9)
    expect(answers('{"id": {"x": 1}, "result": {}}')).toBeUndefined()
  })

  it("answers no request for the server's own requests and notifications", () => {
    expect(answers(JSON.stringify({ jsonrpc: '2.0', id: 5, method: 'sampling/x' }))).toBe(undefined)
    expect(answers(JSON.stringify({ jsonrpc: '2.0', method: 'notifications/message' }))).toBe(
      undefined,
    )
  })
})

describe('BoundedReadBuffer', () => {
  const message = (id: number, bytes = 10) =>
    `${JSON.stringify({ jsonrpc: '2.0', id, result: { text: 'x'.repeat(bytes) } })}\n`

  function read(chunks: string[]) {
    const dropped: Array<MessageId | undefined> = []
    const buffer = new BoundedReadBuffer(LIMIT, (id) => dropped.push(id))
    const ids: unknown[] = []
    for (const chunk of chunks) {
      buffer.append(Buffer.from(chunk))
      for (let next = buffer.readMessage(); next; next = buffer.readMessage())
        ids.push((next as { id: unknown }).id)
    }
    return { ids, dropped }
  }

  it('skips a line over the limit to its newline and reads the lines around it', () => {
    const stream = message(1) + message(2, 5 * LIMIT) + message(3)
    // In one chunk, in pieces, and a byte at a time.
    for (const size of [stream.length, 64, 1]) {
      const chunks: string[] = []
      for (let at = 0; at < stream.length; at += size) chunks.push(stream.slice(at, at + size))
      expect(read(chunks)).toEqual({ ids: [1, 3], dropped: [2] })
    }
  })

  it('skips a line of up to 16 x the limit; past it throws UpstreamLineRunaway once, then drops all', () => {
    const start = message(1, 0).slice(0, -3)
    const piece = 'x'.repeat(LIMIT)
    // 15 limits and its end: skipped, the next line read.
    expect(read([start, ...Array(15).fill(piece), '"}}\n', message(2)])).toEqual({
      ids: [2],
      dropped: [1],
    })
    // Never ending: the append that takes it past 16 limits throws; what comes after is dropped.
    const buffer = new BoundedReadBuffer(LIMIT, () => undefined)
    buffer.append(Buffer.from(start))
    for (let i = 0; i < 15; i += 1) buffer.append(Buffer.from(piece))
    expect(() => buffer.append(Buffer.from(piece))).toThrow(UpstreamLineRunaway)
    buffer.append(Buffer.from(`"}}\n${message(3)}`))
    expect(buffer.readMessage()).toBeNull()
  })

  it('takes several small lines that arrive together past the limit', () => {
    const small = Array.from({ length: 10 }, (_, i) => message(i, 100)).join('')
    expect(small.length).toBeGreaterThan(LIMIT)
    expect(read([small])).toEqual({ ids: [...Array(10).keys()], dropped: [] })
  })

  it('counts answers to requests never sent (or answered already) toward the flood cap, not the others', () => {
    const buffer = new BoundedReadBuffer(LIMIT, () => undefined)
    const readAll = (from: number, to: number) => {
      for (let id = from; id < to; id += 1) {
        buffer.append(Buffer.from(message(id)))
        expect(buffer.readMessage()).toMatchObject({ id })
      }
    }
    // Answers to requests sent: any number within a second.
    for (let id = 0; id < 2 * MAX_SERVER_MESSAGES_PER_SECOND; id += 1) buffer.count.sent(id)
    readAll(0, 2 * MAX_SERVER_MESSAGES_PER_SECOND)
    // The same ids again (answered already), then ids never sent: the cap's worth is read…
    readAll(0, MAX_SERVER_MESSAGES_PER_SECOND)
    // …and one more is the flood; what comes after is dropped.
    buffer.append(Buffer.from(message(-1) + message(-2)))
    expect(() => buffer.readMessage()).toThrow(UpstreamMessageFlood)
    expect(buffer.readMessage()).toBeNull()
  })
})

// It replaces a private field of the pinned SDK's StdioClientTransport: an SDK upgrade that
// renames it must fail this check by name.
describe("the SDK's stdio read buffer", () => {
  it('is the field replaceReadBuffer expects, and a stdio upstream gets a BoundedReadBuffer', () => {
    const sdk = new StdioClientTransport({ command: 'node' }) as unknown as {
      _readBuffer: Record<string, unknown>
    }
    for (const method of ['append', 'readMessage', 'clear'])
      expect(typeof sdk._readBuffer[method]).toBe('function')
    const config = { command: 'node', args: [], env: {}, tags: [], enabled: true }
    const transport = createUpstreamTransport(config as unknown as UpstreamConfig, () => {}, {
      maxMessageBytes: LIMIT,
      onOversize: () => {},
    })
    expect((transport as unknown as { _readBuffer: unknown })._readBuffer).toBeInstanceOf(
      BoundedReadBuffer,
    )
    const renamed = Object.assign(new StdioClientTransport({ command: 'node' }), {
      _readBuffer: undefined,
    })
    expect(() => replaceReadBuffer(renamed, new BoundedReadBuffer(LIMIT, () => {}))).toThrow(
      /has no _readBuffer \{append, readMessage, clear\}/,
    )
  })
})
