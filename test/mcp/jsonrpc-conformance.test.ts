/**
 * JSON-RPC 2.0 conformance of the MCP endpoints: the specification's own examples (section 7)
 * adapted to MCP methods (`ping`, `tools/list`, unknown ones), sent to a real `toolsel serve`
 * (POST /mcp with a read key) and a real `toolsel mcp --stdio` child, with what each answers.
 * Where MCP narrows JSON-RPC: ids are strings or integers, never null; params are by name; the
 * stdio transport reads no batches (docs/mcp.md, "Protocol conformance").
 * @module
 */
import { spawn, type ChildProcessWithoutNullStreams } from 'node:child_process'
import { mkdtempSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { MCP_HEADERS } from '../helpers/mcp-fetch.ts'
import { ROOT, startServe, type RunningServe } from '../helpers/start-serve.ts'

const ADMIN_KEY = 'conformance-admin-0123456789'
const READ_KEY = 'conformance-read-0123456789ab'
/** Start-up through the tsx loader: 3-5 s idle, 30 s and more on two busy cores. */
const START_TIMEOUT_MS = 120_000

const ANY_MESSAGE = expect.any(String) as unknown as string
const error = (code: number, id: string | number | null = null) => ({
  jsonrpc: '2.0',
  id,
  error: { code, message: ANY_MESSAGE },
})
const pong = (id: string | number) => ({ jsonrpc: '2.0', id, result: {} })
const toolList = (id: string | number) => ({
  jsonrpc: '2.0',
  id,
  result: expect.objectContaining({
    tools: expect.arrayContaining([expect.objectContaining({ name: 'search_tools' })]),
  }) as unknown,
})
const ping = (id: unknown) => JSON.stringify({ jsonrpc: '2.0', method: 'ping', id })
const initialize = (protocolVersion: string) =>
  JSON.stringify({
    jsonrpc: '2.0',
    id: 'init',
    method: 'initialize',
    params: {
      protocolVersion,
      capabilities: {},
      clientInfo: { name: 'conformance', version: '1' },
    },
  })
const negotiated = (protocolVersion: string) => ({
  jsonrpc: '2.0',
  id: 'init',
  result: expect.objectContaining({ protocolVersion }) as unknown,
})

/** The answer to a tools/call naming 'a' 100,000 times: the name cut at 64 characters. */
const LONG_NAME_ERROR = {
  jsonrpc: '2.0',
  id: 'long',
  error: {
    code: -32602,
    message: `Invalid params: the tool name "${'a'.repeat(64)}"… is 100,000 characters long; MCP tool names are at most 128`,
  },
}

/** The answer to a request nested past MAX_MESSAGE_DEPTH (256). */
const DEEP_REQUEST_ERROR = {
  jsonrpc: '2.0',
  id: 'deep',
  error: {
    code: -32600,
    message:
      'Invalid Request: the message nests arrays and objects more than 256 levels deep; toolsel takes at most 256',
  },
}

/** JSON-RPC 2.0 section 7's mixed batch, with MCP methods. */
const MIXED_BATCH = `[
  {"jsonrpc": "2.0", "method": "ping", "id": "1"},
  {"jsonrpc": "2.0", "method": "notify_hello", "params": {"n": 7}},
  {"jsonrpc": "2.0", "method": "tools/list", "params": {}, "id": "2"},
  {"foo": "boo"},
  {"jsonrpc": "2.0", "method": "foo.get", "params": {"name": "myself"}, "id": "5"},
  {"jsonrpc": "2.0", "method": "get_data", "id": "9"}
]`

/** An object nesting `levels` objects: `{"a":{"a":…1…}}`. */
const nested = (levels: number) => `${'{"a":'.repeat(levels)}1${'}'.repeat(levels)}`

interface Case {
  name: string
  /** One message (a line on stdio). */
  body: string
  http: { status: number; answer?: unknown }
  /** The answer lines on stdio (none or one). */
  stdio: unknown[]
}

/**
 * An HTTP answer `[...]` is a batch's: compared without order (JSON-RPC lets a server answer a
 * batch in any order). `answer` undefined: no body.
 */
const CASES: Case[] = [
  {
    name: 'invalid JSON',
    body: '{"jsonrpc": "2.0", "method": "ping", "params": "bar", "baz]',
    http: { status: 400, answer: error(-32700) },
    stdio: [error(-32700)],
  },
  {
    name: 'an invalid Request object',
    body: '{"jsonrpc": "2.0", "method": 1, "params": "bar"}',
    http: { status: 400, answer: error(-32600) },
    stdio: [error(-32600)],
  },
  {
    name: 'a batch that is invalid JSON',
    body: '[{"jsonrpc": "2.0", "method": "ping", "id": "1"}, {"jsonrpc": "2.0", "method"]',
    http: { status: 400, answer: error(-32700) },
    stdio: [error(-32700)],
  },
  {
    name: 'an empty array',
    body: '[]',
    http: { status: 400, answer: error(-32600) },
    stdio: [error(-32600)],
  },
  {
    name: 'a non-empty invalid batch [1]',
    body: '[1]',
    http: { status: 400, answer: [error(-32600)] },
    stdio: [[error(-32600)]],
  },
  {
    name: 'an invalid batch [1,2,3]',
    body: '[1,2,3]',
    http: { status: 400, answer: [error(-32600), error(-32600), error(-32600)] },
    stdio: [[error(-32600), error(-32600), error(-32600)]],
  },
  {
    name: 'a batch inside a batch [[ping]]',
    body: `[[${ping(1)}]]`,
    http: { status: 400, answer: [error(-32600)] },
    stdio: [[error(-32600)]],
  },
  {
    name: 'a mixed batch',
    body: MIXED_BATCH,
    http: {
      status: 200,
      answer: [pong('1'), toolList('2'), error(-32600), error(-32601, '5'), error(-32601, '9')],
    },
    stdio: [[pong('1'), toolList('2'), error(-32600), error(-32601, '5'), error(-32601, '9')]],
  },
  {
    name: 'a batch of one request',
    body: `[${ping(1)}]`,
    http: { status: 200, answer: [pong(1)] },
    stdio: [[pong(1)]],
  },
  {
    name: 'a batch of notifications only',
    body: '[{"jsonrpc": "2.0", "method": "notify_sum", "params": {"a": 1}}, {"jsonrpc": "2.0", "method": "notifications/initialized"}]',
    http: { status: 202 },
    stdio: [],
  },
  {
    name: 'a batch with an id used twice (one answer was lost)',
    body: `[${ping(1)}, {"jsonrpc": "2.0", "method": "tools/list", "id": 1}, ${ping('1')}]`,
    http: { status: 200, answer: [pong(1), error(-32600, 1), pong('1')] },
    stdio: [[pong(1), error(-32600, 1), pong('1')]],
  },
  {
    name: 'params by name',
    body: '{"jsonrpc": "2.0", "method": "tools/list", "params": {}, "id": 3}',
    http: { status: 200, answer: toolList(3) },
    stdio: [toolList(3)],
  },
  {
    name: 'params by position',
    body: '{"jsonrpc": "2.0", "method": "tools/list", "params": [1, 2], "id": 4}',
    http: { status: 200, answer: error(-32602, 4) },
    stdio: [error(-32602, 4)],
  },
  {
    name: 'a method not found',
    body: '{"jsonrpc": "2.0", "method": "foobar", "id": "1"}',
    http: { status: 200, answer: error(-32601, '1') },
    stdio: [error(-32601, '1')],
  },
  {
    name: 'a notification',
    body: '{"jsonrpc": "2.0", "method": "notifications/initialized"}',
    http: { status: 202 },
    stdio: [],
  },
  {
    name: 'a string id',
    body: ping('a-string'),
    http: { status: 200, answer: pong('a-string') },
    stdio: [pong('a-string')],
  },
  {
    name: 'a number id',
    body: ping(42),
    http: { status: 200, answer: pong(42) },
    stdio: [pong(42)],
  },
  {
    name: 'a null id (MCP: never null)',
    body: ping(null),
    http: { status: 400, answer: error(-32600) },
    stdio: [error(-32600)],
  },
  {
    name: 'a fractional id (MCP: an integer)',
    body: ping(1.5),
    http: { status: 400, answer: error(-32600) },
    stdio: [error(-32600)],
  },
  {
    name: 'a request with a member JSON-RPC has not: its id is read',
    body: '{"jsonrpc": "2.0", "method": "ping", "id": 7, "extra": 1}',
    http: { status: 400, answer: error(-32600, 7) },
    stdio: [error(-32600, 7)],
  },
  {
    // A 100,000-character name: the SDK answered "Tool aaa…(all of it) not found".
    name: 'tools/call naming a tool past 128 characters (MCP names are 1 to 128)',
    body: JSON.stringify({
      jsonrpc: '2.0',
      id: 'long',
      method: 'tools/call',
      params: { name: 'a'.repeat(100_000), arguments: {} },
    }),
    http: { status: 200, answer: LONG_NAME_ERROR },
    stdio: [LONG_NAME_ERROR],
  },
  {
    // Round 36: /mcp answered -32700 "Parse error" (the SDK's JSON.stringify of a response it
    // did not expect overflowed the stack); stdio answered nothing.
    name: 'valid JSON nested 5,000 levels deep (a response): -32600, not a parse error',
    body: `{"jsonrpc": "2.0", "id": "r", "result": ${nested(5_000)}}`,
    http: { status: 400, answer: error(-32600) },
    stdio: [error(-32600)],
  },
  {
    name: 'a request nested past 256 levels: -32600 naming the limit, with its id',
    body: `{"jsonrpc": "2.0", "id": "deep", "method": "tools/call", "params": {"name": "search_tools", "arguments": ${nested(300)}}}`,
    http: { status: 400, answer: DEEP_REQUEST_ERROR },
    stdio: [DEEP_REQUEST_ERROR],
  },
  {
    name: 'a request nested 256 levels: answered',
    body: `{"jsonrpc": "2.0", "id": "d256", "method": "ping", "params": {"_meta": ${nested(254)}}}`,
    http: { status: 200, answer: pong('d256') },
    stdio: [pong('d256')],
  },
  {
    name: 'invalid JSON nested deep: a parse error',
    body: '['.repeat(5_000),
    http: { status: 400, answer: error(-32700) },
    stdio: [error(-32700)],
  },
  {
    name: 'valid JSON that is no object',
    body: '"ping"',
    http: { status: 400, answer: error(-32600) },
    stdio: [error(-32600)],
  },
  {
    name: 'initialize with a version we take',
    body: initialize('2025-06-18'),
    http: { status: 200, answer: negotiated('2025-06-18') },
    stdio: [negotiated('2025-06-18')],
  },
  {
    name: 'initialize with a version we do not know: the latest',
    body: initialize('2099-01-01'),
    http: { status: 200, answer: negotiated('2025-11-25') },
    stdio: [negotiated('2025-11-25')],
  },
]

/** `actual` as `expected` says; an array without order. */
function expectAnswer(actual: unknown, expected: unknown, name: string): void {
  if (Array.isArray(expected)) {
    expect(actual, name).toHaveLength(expected.length)
    expect(actual, name).toEqual(expect.arrayContaining(expected))
  } else {
    expect(actual, name).toEqual(expected)
  }
}

describe('JSON-RPC 2.0 examples against POST /mcp of a real toolsel serve (a read key)', () => {
  let serve: RunningServe

  beforeAll(async () => {
    serve = await startServe([], {
      savedDemo: true,
      env: { TOOLSEL_ADMIN_KEY: ADMIN_KEY, TOOLSEL_READ_KEYS: READ_KEY },
    })
  }, START_TIMEOUT_MS)
  afterAll(() => serve?.stop())

  const post = (body: string | Uint8Array<ArrayBuffer>) =>
    fetch(`${serve.url}/mcp`, {
      method: 'POST',
      headers: { ...MCP_HEADERS, authorization: `Bearer ${READ_KEY}` },
      body,
    })

  it.each(CASES)('$name', async ({ name, body, http }) => {
    const response = await post(body)
    const text = await response.text()
    expect(response.status, `${name}: ${text}`).toBe(http.status)
    if (http.answer === undefined) {
      expect(text).toBe('')
    } else {
      expect(response.headers.get('content-type')).toMatch(/^application\/json/)
      expectAnswer(JSON.parse(text), http.answer, name)
    }
  })

  it('reads a body that starts with a byte-order mark (RFC 8259 lets a parser ignore it)', async () => {
    const bom = new Uint8Array(
      Buffer.concat([Buffer.from([0xef, 0xbb, 0xbf]), Buffer.from(ping(7))]),
    )
    const response = await post(bom)
    expect(response.status).toBe(200)
    expect(await response.json()).toEqual(pong(7))
  })

  // hard21 (round 35): the -32600 for an id used twice quoted the whole id raw in its message (a
  // 30,000-character id with U+202E: each later request's error carried it twice, bidi and all).
  it('quotes an id used twice escaped and cut at 64 characters, as error messages do', async () => {
    const id = `\u202e${'x'.repeat(30_000)}`
    const response = await post(`[${Array.from({ length: 100 }, () => ping(id)).join(',')}]`)
    expect(response.status).toBe(200)
    const text = await response.text()
    const answers = JSON.parse(text) as { id: unknown; error?: { message: string } }[]
    expect(answers).toHaveLength(100)
    const errors = answers.filter((answer) => answer.error !== undefined)
    expect(errors).toHaveLength(99)
    for (const answer of errors) {
      expect(answer.id).toBe(id)
      expect(answer.error!.message).toBe(
        `Invalid Request: the id "\\u202e${'x'.repeat(63)}"… is used twice in this batch`,
      )
    }
    // The ids themselves are echoed (JSON-RPC): 100 of them, and little else.
    expect(text.length).toBeLessThan(100 * 30_300)
  })

  it('answers a batch over 100 messages with one -32600 (the SDK)', async () => {
    const response = await post(`[${Array.from({ length: 101 }, (_, i) => ping(i)).join(',')}]`)
    expect(response.status).toBe(400)
    expect(await response.json()).toEqual(error(-32600))
  })
})

/** A `toolsel mcp --stdio` child, read line by line. */
class StdioChild {
  readonly child: ChildProcessWithoutNullStreams
  #lines: string[] = []
  #waiting: (() => void) | undefined
  #rest = ''
  stderr = ''

  constructor() {
    const indexDir = mkdtempSync(join(tmpdir(), 'toolsel-conformance-'))
    this.child = spawn(
      process.execPath,
      ['bin/toolsel.mjs', 'mcp', '--stdio', '--index-dir', indexDir, '--log-level', 'warn'],
      { cwd: ROOT, stdio: ['pipe', 'pipe', 'pipe'] },
    )
    this.child.stderr.on('data', (chunk: Buffer) => (this.stderr += chunk.toString()))
    this.child.stdout.on('data', (chunk: Buffer) => {
      const parts = (this.#rest + chunk.toString()).split('\n')
      this.#rest = parts.pop()!
      this.#lines.push(...parts)
      this.#waiting?.()
    })
  }

  write(data: string | Buffer): void {
    this.child.stdin.write(data)
  }

  /** The next line of stdout, parsed. */
  async next(): Promise<unknown> {
    while (this.#lines.length === 0) {
      if (this.child.exitCode !== null) throw new Error(`exited:\n${this.stderr}`)
      await new Promise<void>((resolve) => (this.#waiting = resolve))
    }
    return JSON.parse(this.#lines.shift()!) as unknown
  }

  /**
   * Writes `data`, reads `count` lines, then writes a ping with id `mark` and reads up to its
   * answer: the lines before it are answers to `data` too (so one case's extra answer fails that
   * case, not the next). A request's answer comes before a later ping's on this quiet server.
   */
  async exchange(data: string | Buffer, count: number, mark: string): Promise<unknown[]> {
    this.write(data)
    const answers: unknown[] = []
    for (let i = 0; i < count; i += 1) answers.push(await this.next())
    this.write(`${ping(mark)}\n`)
    for (;;) {
      const line = await this.next()
      if ((line as { id?: unknown }).id === mark) {
        expect(line).toEqual(pong(mark))
        return answers
      }
      answers.push(line)
    }
  }

  stop(): void {
    this.child.stdin.end()
  }
}

describe('JSON-RPC 2.0 examples against a real toolsel mcp --stdio, one per line', () => {
  let stdio: StdioChild

  beforeAll(async () => {
    stdio = new StdioChild()
    // Started once its first answer comes.
    expect(await stdio.exchange('', 0, 'started')).toEqual([])
  }, START_TIMEOUT_MS)
  afterAll(() => stdio?.stop())

  it.each(CASES)('$name', async ({ name, body, stdio: expected }) => {
    const answers = await stdio.exchange(`${body.replaceAll('\n', ' ')}\n`, expected.length, name)
    // One line at most; a batch's answer (an array) without order.
    expect(answers, name).toHaveLength(expected.length)
    answers.forEach((answer, i) => expectAnswer(answer, expected[i], name))
  })

  it('skips a blank line and a line of only whitespace, unanswered', async () => {
    expect(await stdio.exchange('\n', 0, 'blank')).toEqual([])
    expect(await stdio.exchange(' \t \r\n', 0, 'whitespace')).toEqual([])
  })

  it('reads a line ended by CRLF', async () => {
    expect(await stdio.exchange(`${ping('crlf')}\r\n`, 1, 'after-crlf')).toEqual([pong('crlf')])
  })

  it('reads a line that starts with a byte-order mark, as /mcp reads such a body', async () => {
    const bom = Buffer.from([0xef, 0xbb, 0xbf])
    for (const id of ['bom', 'bom-again']) {
      const line = Buffer.concat([bom, Buffer.from(`${ping(id)}\n`)])
      expect(await stdio.exchange(line, 1, `after-${id}`)).toEqual([pong(id)])
    }
  })

  // hard21 (round 35): on 6928266 the first batch was never answered (its id taken over by the
  // second, whose array got the first answer) and a cancelled request held its batch forever.
  it('answers each of two running batches that reuse one id', async () => {
    const answers = await stdio.exchange(
      `[${ping('d')}, ${ping('e')}]\n[${ping('d')}]\n`,
      0,
      'after-reused',
    )
    expect(answers).toHaveLength(2)
    expectAnswer(answers[0], [pong('d'), pong('e')], 'first batch')
    expectAnswer(answers[1], [pong('d')], 'second batch')
  })

  it('answers a batch without its request cancelled in it or on a later line', async () => {
    const cancel = (id: string) =>
      JSON.stringify({
        jsonrpc: '2.0',
        method: 'notifications/cancelled',
        params: { requestId: id },
      })
    const inBatch = `[${ping('c1')}, ${cancel('c1')}, ${ping('c2')}]\n`
    expect(await stdio.exchange(inBatch, 0, 'after-cancel')).toEqual([[pong('c2')]])
    const later = `[${ping('l1')}, ${ping('l2')}]\n`
    const answers = await stdio.exchange(`${later}${cancel('l1')}\n`, 0, 'after-later-cancel')
    // l1 was answered before the cancel was read, or never: the batch comes either way.
    expect(answers).toHaveLength(1)
    expect((answers[0] as unknown[]).length).toBeGreaterThanOrEqual(1)
    expect(answers[0]).toContainEqual(pong('l2'))
  })

  it('reads a line with whitespace around its JSON', async () => {
    const answers = await stdio.exchange(` \t${ping('spaced')} \t\n`, 1, 'after-spaced')
    expect(answers).toEqual([pong('spaced')])
  })
})

describe('toolsel mcp --stdio and a batch piped before stdin closes', () => {
  it(
    'answers the whole batch in one line before it exits',
    async () => {
      const stdio = new StdioChild()
      const exited = new Promise<number | null>((resolve) => stdio.child.on('exit', resolve))
      stdio.write(
        `[${ping('p')}, {"jsonrpc": "2.0", "method": "tools/list", "id": "t"}, {"jsonrpc": "2.0", "method": "notifications/initialized"}]\n`,
      )
      stdio.stop()
      const answer = await stdio.next()
      expect(await exited).toBe(0)
      expectAnswer(answer, [pong('p'), toolList('t')], 'piped batch')
    },
    START_TIMEOUT_MS,
  )

  // hard21 (round 35): a cancelled request stayed counted as unanswered, so stdin's end waited
  // server.shutdownGraceMs (10 s) for it and warned of it.
  it(
    'exits at once after a cancelled request, without waiting for its answer',
    async () => {
      const stdio = new StdioChild()
      const exited = new Promise<number | null>((resolve) => stdio.child.on('exit', resolve))
      const cancel = JSON.stringify({
        jsonrpc: '2.0',
        method: 'notifications/cancelled',
        params: { requestId: 'c1' },
      })
      stdio.write(`${ping('c1')}\n${cancel}\n${ping('c2')}\n`)
      expect(await stdio.next()).toEqual(pong('c2'))
      const stopped = Date.now()
      stdio.stop()
      expect(await exited).toBe(0)
      expect(Date.now() - stopped).toBeLessThan(5_000)
      expect(stdio.stderr).not.toContain('unanswered')
    },
    START_TIMEOUT_MS,
  )
})
