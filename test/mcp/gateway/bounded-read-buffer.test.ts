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
  OwnMessageCount,
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
    // A clock that stands still: the reserve is not refilled meanwhile.
    const count = new OwnMessageCount(MAX_SERVER_MESSAGES_PER_SECOND, () => 0)
    const buffer = new BoundedReadBuffer(LIMIT, () => undefined, count)
    const readAll = (from: number, to: number) => {
      for (let id = from; id < to; id += 1) {
        buffer.append(Buffer.from(message(id)))
        expect(buffer.readMessage()).toMatchObject({ id })
      }
    }
    // Answers to requests sent: any number within a second.
    for (let id = 0; id < 2 * MAX_SERVER_MESSAGES_PER_SECOND; id += 1) buffer.count.sent(id)
    readAll(0, 2 * MAX_SERVER_MESSAGES_PER_SECOND)
    // The same ids again (answered already), then ids never sent: the reserve's worth is read…
    readAll(0, MAX_SERVER_MESSAGES_PER_SECOND)
    // …and one more is the flood; what comes after is dropped.
    buffer.append(Buffer.from(message(-1) + message(-2)))
    expect(() => buffer.readMessage()).toThrow(UpstreamMessageFlood)
    expect(buffer.readMessage()).toBeNull()
  })
})

describe('OwnMessageCount (the flood cap)', () => {
  const CAP = MAX_SERVER_MESSAGES_PER_SECOND
  const NOTE = { jsonrpc: '2.0', method: 'notifications/message' } as const

  /**
   * Reads `perBurst` messages of the server's own at once every interval of `intervals` (ms, in
   * turn) on a clock of its own, for `seconds`; also a `stall` (ms) every 5 s, its backlog read at
   * once after it. The clock time (ms) of the message that tripped the cap, or undefined. Also the
   * most messages read within one second (a one-second window, fixed or sliding, trips past CAP).
   */
  function run(perBurst: number, intervals: number[], seconds: number, stall = 0) {
    let now = 0
    const count = new OwnMessageCount(CAP, () => now)
    const times: number[] = []
    let trippedAt: number | undefined
    let due = 0
    let stalledUntil = 0
    for (let burst = 0; due < seconds * 1000 && trippedAt === undefined; burst += 1) {
      if (stall > 0 && due >= stalledUntil + 5000) stalledUntil = due + stall
      // Read when it comes, or once the stall is over (with the bursts that came during it).
      now = Math.max(due, stalledUntil)
      for (let i = 0; i < perBurst && trippedAt === undefined; i += 1) {
        times.push(now)
        try {
          count.read(NOTE)
        } catch (error) {
          expect(error).toBeInstanceOf(UpstreamMessageFlood)
          trippedAt = now
        }
      }
      due += intervals[burst % intervals.length]
    }
    let mostInASecond = 0
    for (let from = 0, to = 0; to < times.length; to += 1) {
      while (times[to] - times[from] >= 1000) from += 1
      mostInASecond = Math.max(mostInASecond, to - from + 1)
    }
    return { trippedAt, mostInASecond }
  }

  it('never trips on a steady rate under the cap, however it is spaced', () => {
    // 98% in bursts every 100 ms on average, unevenly (40, 130, 130 ms): 11 bursts fall within a
    // second now and then, so a one-second window (round 35's) trips, a sliding one too.
    // Before: tripped (round 35's window, on the real clock, at message 5,001).
    const uneven = run(490, [40, 130, 130], 30)
    expect(uneven.mostInASecond).toBeGreaterThan(CAP)
    expect(uneven.trippedAt).toBeUndefined()
    // 90%, one message at a time; 95% in bursts of 95 every 20 ms with a 1 s stall every 5 s
    // (its backlog of 4,750 read at once).
    expect(run(1, [1000 / (0.9 * CAP)], 30).trippedAt).toBeUndefined()
    expect(run(95, [20], 30, 1000).trippedAt).toBeUndefined()
  })

  it('trips on a rate over the cap once its reserve of the cap is spent', () => {
    // 1.2 x the cap in bursts of 600 every 100 ms: 1,000 a second more than the reserve gets
    // back, so it lasts ~5 s. Before: tripped at 0.8 s (the 5,001st message within a second).
    const over = run(600, [100], 30).trippedAt
    expect(over).toBeGreaterThanOrEqual(4500)
    expect(over).toBeLessThanOrEqual(5500)
    // 2 x: within ~1 s; a flood of 10 x (50 a ms): within ~0.11 s (after ~5,500 messages).
    const twice = run(1000, [100], 30).trippedAt
    expect(twice).toBeGreaterThanOrEqual(900)
    expect(twice).toBeLessThanOrEqual(1100)
    expect(run(50, [1], 30).trippedAt).toBeLessThanOrEqual(112)
    // The same rate trips just as well after a quiet hour (the reserve holds at most the cap).
    let now = 0
    const count = new OwnMessageCount(CAP, () => now)
    now = 3_600_000
    for (let i = 0; i < CAP; i += 1) count.read(NOTE)
    expect(() => count.read(NOTE)).toThrow(UpstreamMessageFlood)
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
