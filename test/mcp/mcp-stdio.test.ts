import { spawn } from 'node:child_process'
import { mkdtempSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { fileURLToPath } from 'node:url'
import { Client } from '@modelcontextprotocol/sdk/client/index.js'
import { StdioClientTransport } from '@modelcontextprotocol/sdk/client/stdio.js'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { call, dataOf, errorOf } from './fixtures/toolsel-harness.ts'
import { copySavedDemo } from '../helpers/start-serve.ts'
import { MAX_STDIO_LINE_BYTES } from '../../src/mcp/stdio-line-gate.ts'

const ROOT = fileURLToPath(new URL('../..', import.meta.url))
const NOTES_FIXTURE = fileURLToPath(new URL('./fixtures/notes-upstream.ts', import.meta.url))
const HUNG_FIXTURE = fileURLToPath(new URL('./fixtures/hung-upstream.mjs', import.meta.url))
/**
 * The index directory every run serves: the demo as saved once per test run (vitest's global
 * setup), so that each start loads it instead of importing and indexing its 197 tools (round 48:
 * ~0.5 s a start at rest, more under load, in each of this file's 11 starts).
 */
const INDEX_DIR = mkdtempSync(join(tmpdir(), 'toolsel-mcp-'))
beforeAll(() => copySavedDemo(INDEX_DIR))

interface Spawned {
  client: Client
  stderr: () => string
  /** Errors the client raised, e.g. for a stdout line that is not a protocol message. */
  errors: Error[]
}

const open: Client[] = []
/** The piped runs' config files so far (each its own). */
let configs = 0

const INITIALIZE = {
  jsonrpc: '2.0',
  id: 1,
  method: 'initialize',
  params: {
    protocolVersion: '2025-06-18',
    capabilities: {},
    clientInfo: { name: 'pipe', version: '1' },
  },
}

/**
 * The piped runs' `server.shutdownGraceMs`. The first answers wait for the Qwen3 token counter to
 * load in a worker thread (about 1 s on an idle machine, 10 s and more on two cores busy with the
 * whole suite), so the default 10 s grace made "answers what it received before stdin closed"
 * fail under load. What a grace that runs out does is its own test below.
 */
const PIPE_GRACE_MS = 90_000
/**
 * Each test starts `toolsel mcp --stdio` through the tsx loader (sources newer than dist/): 3-5 s
 * idle, 25-35 s on two busy cores, past vitest's 30 s default. Above PIPE_GRACE_MS too: a drain
 * that never ends fails on the missing answers, not on a test timeout.
 */
const TEST_TIMEOUT_MS = 150_000

/** `node bin/toolsel.mjs mcp --stdio` on INDEX_DIR, its stdio piped. */
function spawnPiped(logLevel: string, ...args: string[]) {
  return spawn(
    process.execPath,
    [
      'bin/toolsel.mjs',
      'mcp',
      '--stdio',
      '--index-dir',
      INDEX_DIR,
      ...args,
      '--log-level',
      logLevel,
    ],
    { cwd: ROOT, stdio: ['pipe', 'pipe', 'pipe'] },
  )
}

/**
 * Runs `node bin/toolsel.mjs mcp --stdio` as a piped client would: writes `lines` at once (each
 * with its newline; a Buffer is written as it is), closes stdin, and waits for the exit.
 */
async function pipeToolsel(
  logLevel: string,
  lines: string[] | Buffer,
  graceMs = PIPE_GRACE_MS,
): Promise<{ code: number | null; stdout: string; stderr: string }> {
  // A file of its own: the tests run side by side, and a file another run rewrites may be read
  // empty.
  const config = join(INDEX_DIR, `grace-${graceMs}-${(configs += 1)}.json`)
  writeFileSync(config, JSON.stringify({ server: { shutdownGraceMs: graceMs } }))
  const child = spawnPiped(logLevel, '--config', config)
  let stdout = ''
  let stderr = ''
  child.stdout.on('data', (chunk: Buffer) => (stdout += chunk.toString()))
  child.stderr.on('data', (chunk: Buffer) => (stderr += chunk.toString()))
  const exited = new Promise<number | null>((resolve) => child.on('exit', resolve))
  child.stdin.end(Buffer.isBuffer(lines) ? lines : lines.map((line) => `${line}\n`).join(''))
  return { code: await exited, stdout, stderr }
}

/** Spawns `node bin/toolsel.mjs mcp --stdio <args>` and connects the SDK's stdio client. */
function spawnToolsel(...args: string[]): Promise<Spawned> {
  return spawnToolselWith({}, ...args)
}

/** `spawnToolsel` with `env` added to the SDK's default environment. */
async function spawnToolselWith(env: Record<string, string>, ...args: string[]): Promise<Spawned> {
  const transport = new StdioClientTransport({
    command: process.execPath,
    args: ['bin/toolsel.mjs', 'mcp', '--stdio', '--index-dir', INDEX_DIR, ...args],
    cwd: ROOT,
    env,
    stderr: 'pipe',
  })
  let stderr = ''
  transport.stderr?.on('data', (chunk: Buffer) => (stderr += chunk.toString()))
  const client = new Client({ name: 'toolsel-stdio-test', version: '1.0.0' })
  const errors: Error[] = []
  client.onerror = (error) => errors.push(error)
  // initialize waits for the start-up (see TEST_TIMEOUT_MS), not the SDK's 60 s default.
  await client.connect(transport, { timeout: TEST_TIMEOUT_MS - 30_000 })
  open.push(client)
  return { client, stderr: () => stderr, errors }
}

interface Hits {
  library: string
  tools: Array<{ id: string }>
  syncing?: string
}

/** search_tools `query` (k 1) until `done` holds for its answer (the test's limit bounds it). */
async function searchUntil(client: Client, query: string, done: (hits: Hits) => boolean) {
  for (;;) {
    const hits = dataOf<Hits>(await call(client, 'search_tools', { query, k: 1 }))
    if (done(hits)) return hits
    await new Promise((resolve) => setTimeout(resolve, 200))
  }
}

// The tests run side by side (each mostly waits on its own `toolsel mcp --stdio`, which only
// reads INDEX_DIR): the clients are closed after the last of them.
afterAll(async () => {
  for (const client of open.splice(0)) await client.close()
})

describe('toolsel mcp --stdio', { concurrent: true }, () => {
  it(
    'serves search_tools, get_tool_schemas and select_tools; logs go to stderr only',
    async () => {
      const { client, stderr, errors } = await spawnToolsel('--log-level', 'info')
      const { tools } = await client.listTools()
      expect(tools.map((tool) => tool.name)).toEqual([
        'search_tools',
        'get_tool_schemas',
        'select_tools',
      ])
      const hits = dataOf<{ tools: Array<{ id: string }> }>(
        await call(client, 'search_tools', { query: 'send an email', k: 2 }),
      )
      expect(hits.tools[0].id).toBe('mail.send_email')
      const schemas = dataOf<{ tools: Array<{ inputSchema: object }> }>(
        await call(client, 'get_tool_schemas', { ids: ['mail.send_email'] }),
      )
      expect(schemas.tools[0].inputSchema).toMatchObject({ type: 'object' })
      expect(stderr()).toContain('MCP server ready on stdio')
      expect(stderr(), 'the saved demo loaded as saved').not.toMatch(/library "demo"/i)
      expect(errors).toEqual([])
    },
    TEST_TIMEOUT_MS,
  )

  it(
    'applies --servers to every tool: other servers are invisible',
    async () => {
      const { client } = await spawnToolsel('--servers', 'slack,mail', '--log-level', 'warn')
      const hits = dataOf<{ tools: Array<{ id: string }> }>(
        await call(client, 'search_tools', { query: 'send a message', k: 10 }),
      )
      expect(hits.tools.length).toBeGreaterThan(0)
      expect(hits.tools.every((tool) => /^(slack|mail)\./.test(tool.id))).toBe(true)
      const error = errorOf(
        await call(client, 'get_tool_schemas', { ids: ['weather.get_weather_forecast'] }),
      )
      expect(error.code).toBe('UNKNOWN_TOOL')
    },
    TEST_TIMEOUT_MS,
  )

  it(
    'runs as a gateway from a Claude-Desktop-style --gateway-config file',
    async () => {
      const file = join(INDEX_DIR, 'clients.json')
      writeFileSync(
        file,
        JSON.stringify({
          mcpServers: {
            notes: {
              type: 'stdio',
              command: process.execPath,
              args: ['--import', 'tsx', NOTES_FIXTURE],
            },
          },
        }),
      )
      const { client } = await spawnToolsel('--gateway-config', file, '--log-level', 'warn')
      // initialize is answered before the first sync: the search waits for it (5 s at most),
      // then answers with a `syncing` note; under load the notes server can take longer.
      const hits = await searchUntil(client, 'create a note', (seen) => !seen.syncing)
      expect(hits).toMatchObject({ library: 'gateway', tools: [{ id: 'notes.create_note' }] })
      const result = await call(client, 'call_tool', {
        id: 'notes.create_note',
        arguments: { title: 'a' },
      })
      expect(result.content).toEqual([{ type: 'text', text: 'created n1: a' }])
    },
    TEST_TIMEOUT_MS,
  )

  it(
    'answers initialize, tools/list and ping at once in gateway mode while an upstream hangs; searches say what is still syncing',
    async () => {
      // "hung" never answers initialize; its spawnTimeoutMs and the first sync's bound are
      // 10 minutes. Before, toolsel mcp --stdio answered initialize only after the first sync:
      // the client's connect (120 s here) ran out.
      const marker = `hung-${process.pid}-${Date.now()}`
      const file = join(INDEX_DIR, `hung-${marker}.json`)
      writeFileSync(
        file,
        JSON.stringify({
          gateway: {
            servers: {
              notes: { command: process.execPath, args: ['--import', 'tsx', NOTES_FIXTURE] },
              hung: { command: process.execPath, args: [HUNG_FIXTURE, marker] },
            },
            spawnTimeoutMs: 600_000,
            connectSlotMs: 600_000,
            firstSyncTimeoutMs: 600_000,
          },
        }),
      )
      // Each search, and the call to the hung server, waits for the first sync that never ends:
      // 0.5 s (the test switch), not the 5 s a client waits (was 10-15 s of this test).
      const { client, errors } = await spawnToolselWith(
        { TOOLSEL_TEST_FIRST_SYNC_WAIT_MS: '500' },
        '--config',
        file,
        '--log-level',
        'warn',
      )
      const { tools } = await client.listTools()
      expect(tools.map((tool) => tool.name)).toEqual([
        'search_tools',
        'get_tool_schemas',
        'select_tools',
        'call_tool',
        'list_servers',
      ])
      expect(await client.ping()).toEqual({})

      // Once notes listed its tools: found, with a note that names what is not done yet.
      const hits = await searchUntil(client, 'create a note', (seen) => seen.tools.length > 0)
      expect(hits).toMatchObject({ library: 'gateway', tools: [{ id: 'notes.create_note' }] })
      expect(hits.syncing).toBe(
        "The gateway's first sync of its upstream servers is not over (1 of 2 upstreams done, 1 connecting): the tools of servers that have not listed them yet are missing from this answer. Ask again shortly; list_servers shows each server's status.",
      )
      const servers = dataOf<{ servers: Array<{ name: string; status: string }> }>(
        await call(client, 'list_servers', {}),
      )
      expect(servers.servers.map(({ name, status }) => [name, status])).toEqual([
        ['notes', 'connected'],
        ['hung', 'connecting'],
      ])
      // A listed server's tool runs during the sync; one of the hung server is not there yet.
      const result = await call(client, 'call_tool', {
        id: 'notes.create_note',
        arguments: { title: 'a' },
      })
      expect(result.content).toEqual([{ type: 'text', text: 'created n1: a' }])
      const pending = errorOf(await call(client, 'call_tool', { id: 'hung.anything' }))
      expect(pending.code).toBe('UPSTREAM_UNAVAILABLE')
      expect(pending.message).toContain('first sync not done: 1 of 2 upstreams done, 1 connecting')
      // The list the client saw never changes: toolsel's own tools, whatever the upstreams list.
      expect((await client.listTools()).tools).toHaveLength(5)
      expect(errors).toEqual([])
    },
    TEST_TIMEOUT_MS,
  )

  it(
    'answers the requests it received before stdin closed (a piped client)',
    async () => {
      const messages = [
        INITIALIZE,
        { jsonrpc: '2.0', method: 'notifications/initialized' },
        {
          jsonrpc: '2.0',
          id: 2,
          method: 'tools/call',
          params: { name: 'search_tools', arguments: { query: 'send an email', k: 1 } },
        },
        {
          jsonrpc: '2.0',
          id: 3,
          method: 'tools/call',
          params: { name: 'select_tools', arguments: { instruction: 'email Ann the weather' } },
        },
      ]
      // All at once, then end of input: the answers must still come.
      const { code, stdout, stderr } = await pipeToolsel(
        'info',
        messages.map((message) => JSON.stringify(message)),
      )
      expect(code).toBe(0)
      const answers = stdout
        .trim()
        .split('\n')
        .map((line) => JSON.parse(line) as { id: number; result?: { isError?: boolean } })
      expect(answers.map((answer) => answer.id).sort()).toEqual([1, 2, 3])
      expect(answers.every((answer) => answer.result && !answer.result.isError)).toBe(true)
      expect(stderr).toContain('MCP server stopping (stdin closed)')
    },
    TEST_TIMEOUT_MS,
  )

  it(
    'lives through a response for no request nested 20,000 deep, and answers the line after it',
    async () => {
      // The SDK's error for a response to an unknown id JSON.stringifies it: past the stack for
      // this one. Round 36's own line reading let that throw out of a 'data' event: exit 1. Since
      // round 37 a message nested past MAX_MESSAGE_DEPTH is refused before the SDK sees it: -32600
      // with id null (a response and a batch have no id to answer).
      const depth = 20_000
      const deep = `${'{"a":'.repeat(depth)}1${'}'.repeat(depth)}`
      const { code, stdout, stderr } = await pipeToolsel('warn', [
        `{"jsonrpc":"2.0","id":"r","result":${deep}}`,
        `[{"jsonrpc":"2.0","id":"r2","result":${deep}}]`,
        '{"jsonrpc":"2.0","id":"after","method":"ping"}',
      ])
      expect(stderr).not.toContain('Maximum call stack size exceeded\n    at')
      expect(code).toBe(0)
      const answers = stdout
        .trim()
        .split('\n')
        .map((line) => JSON.parse(line) as { id: unknown; error?: { code: number } })
      expect(answers.map((answer) => [answer.id, answer.error?.code])).toEqual([
        [null, -32600],
        [null, -32600],
        ['after', undefined],
      ])
    },
    TEST_TIMEOUT_MS,
  )

  it(
    'stops after server.shutdownGraceMs with the requests still unanswered, and says so',
    async () => {
      // The select waits for the token counter (a worker thread loading the tokenizer): far longer
      // than a grace of 0 ms, so it is still unanswered when stdin closes.
      const { code, stdout, stderr } = await pipeToolsel(
        'info',
        [
          JSON.stringify(INITIALIZE),
          JSON.stringify({
            jsonrpc: '2.0',
            id: 2,
            method: 'tools/call',
            params: { name: 'select_tools', arguments: { instruction: 'email Ann the weather' } },
          }),
        ],
        0,
      )
      expect(code).toBe(0)
      expect(
        stdout
          .trim()
          .split('\n')
          .map((line) => (JSON.parse(line) as { id: number }).id),
      ).toEqual([1])
      expect(stderr).toMatch(
        /MCP server closing with 1 request\(s\) unanswered after server\.shutdownGraceMs \(0 ms\)/,
      )
    },
    TEST_TIMEOUT_MS,
  )

  it(
    'answers a line over the limit, one not UTF-8 and an unended last one with errors, and goes on',
    async () => {
      // On e8dbfac the SDK's reading closed the transport at the long line: the process ended
      // with only the initialize answered; the query's bad bytes were searched as U+FFFD, and
      // the unended line was dropped without a word.
      const line = (message: unknown) => Buffer.from(`${JSON.stringify(message)}\n`)
      const { code, stdout, stderr } = await pipeToolsel(
        'warn',
        Buffer.concat([
          line(INITIALIZE),
          Buffer.alloc(MAX_STDIO_LINE_BYTES + 1, 'a'),
          Buffer.from('\n'),
          line({ jsonrpc: '2.0', id: 2, method: 'ping' }),
          Buffer.from(
            '{"jsonrpc":"2.0","id":3,"method":"tools/call","params":{"name":"search_tools","arguments":{"query":"send m',
          ),
          Buffer.of(0xff, 0xc0, 0x80),
          Buffer.from('ail"}}}\n'),
          line({ jsonrpc: '2.0', id: 4, method: 'ping' }),
          Buffer.from('{"jsonrpc":"2.0","id":5,"method":"pi'),
        ]),
      )
      expect(code).toBe(0)
      const answers = stdout
        .trim()
        .split('\n')
        .map((text) => JSON.parse(text) as { id: number | null; error?: { message: string } })
      expect(answers.filter((answer) => answer.id !== null).map((answer) => answer.id)).toEqual([
        1, 2, 4,
      ])
      expect(answers.filter((answer) => answer.id === null).map((answer) => answer.error)).toEqual([
        {
          code: -32000,
          message:
            'Payload Too Large: a line of stdin of 10,485,760 bytes is over the limit of 10,485,759; it was skipped unread.',
        },
        {
          code: -32700,
          message: 'Parse error: a line of stdin is not UTF-8 text at byte 106; it was not read.',
        },
        {
          code: -32700,
          message:
            'Parse error: stdin ended inside a message (36 bytes after the last newline); it was not read.',
        },
      ])
      expect(stderr).toContain('a line of stdin was not answered as a request (Payload Too Large')
    },
    TEST_TIMEOUT_MS,
  )

  it(
    'stops reading stdin while its answers go unread, and answers everything once they are read',
    async () => {
      // On e8dbfac the server read all of stdin and kept every unread answer: 60,000 unread
      // tools/list answers grew it to 1.1 GiB in 30 s. Here the client's writes back up instead.
      const child = spawnPiped('warn')
      const exited = new Promise<number | null>((resolve) => child.on('exit', resolve))
      let stdout = ''
      const reading = (chunk: Buffer) => (stdout += chunk.toString())
      child.stdout.on('data', reading)
      child.stdin.write(`${JSON.stringify(INITIALIZE)}\n`)
      while (!stdout.includes('\n')) await new Promise((resolve) => setTimeout(resolve, 50))
      child.stdout.off('data', reading)
      child.stdout.pause()
      const count = 20_000
      let pings = ''
      for (let id = 2; id < count + 2; id += 1)
        pings += `${JSON.stringify({ jsonrpc: '2.0', id, method: 'ping' })}\n`
      child.stdin.write(pings)
      // Unread: the server must stop taking stdin, not take all of it. Waited for until it has
      // answered (so it is reading) and what it left unread stayed the same for 2 s: it stopped
      // (10 s at most; was a fixed 10 s).
      let left = child.stdin.writableLength
      let sameSince = Date.now()
      for (const started = Date.now(); left > 0 && Date.now() - started < 10_000;) {
        await new Promise((resolve) => setTimeout(resolve, 100))
        if (child.stdin.writableLength !== left || child.stdout.readableLength === 0) {
          left = child.stdin.writableLength
          sameSince = Date.now()
        } else if (Date.now() - sameSince >= 2000) break
      }
      expect(child.stdin.writableLength).toBeGreaterThan(0)
      child.stdout.on('data', reading).resume()
      child.stdin.end()
      expect(await exited).toBe(0)
      const ids = stdout
        .trim()
        .split('\n')
        .map((line) => (JSON.parse(line) as { id: number }).id)
      expect(ids.length).toBe(count + 1)
      expect(new Set(ids).size).toBe(count + 1)
    },
    TEST_TIMEOUT_MS,
  )

  it(
    'writes the answers of batch lines read unread one after another, without a listener warning',
    async () => {
      // On 556d92b each answer written past stdout's buffer added a 'drain' listener (the SDK's
      // send), and one 64 KiB stdin chunk holds ~11 of these lines: Node printed
      // "MaxListenersExceededWarning: ... 11 drain listeners added to [Socket]".
      const child = spawnPiped('warn')
      const exited = new Promise<number | null>((resolve) => child.on('exit', resolve))
      let stderr = ''
      child.stderr.on('data', (chunk: Buffer) => (stderr += chunk.toString()))
      child.stdout.pause()
      // 20 lines of 100 tools/list: 23 MB of answers, 1.2 MB a line.
      const lines = 20
      let batches = ''
      for (let line = 1; line <= lines; line += 1) {
        const batch = Array.from({ length: 100 }, (_, at) => ({
          jsonrpc: '2.0',
          id: line * 100 + at,
          method: 'tools/list',
        }))
        batches += `${JSON.stringify(batch)}\n`
      }
      child.stdin.write(batches)
      // Unread answers wait for the first one's bytes to reach this paused pipe (they were a
      // fixed 3 s, which a start under load could pass): the server dispatches a stdin chunk's
      // lines in one turn and answers each in its microtasks, so the ~11 lines of that chunk are
      // all sent before stdout's first 'drain' (a later turn) whenever reading resumes.
      while (child.stdout.readableLength === 0 && child.exitCode === null)
        await new Promise((resolve) => setTimeout(resolve, 10))
      // Each answer line's first id and length, read as it comes (not kept whole).
      const answers: Array<{ first: number; count: number }> = []
      let rest = ''
      child.stdout.setEncoding('utf8').on('data', (chunk: string) => {
        const parts = (rest + chunk).split('\n')
        rest = parts.pop()!
        for (const part of parts) {
          const batch = JSON.parse(part) as Array<{ id: number }>
          answers.push({ first: batch[0].id, count: batch.length })
        }
      })
      child.stdout.resume()
      child.stdin.end()
      expect(await exited).toBe(0)
      expect(answers).toEqual(
        Array.from({ length: lines }, (_, at) => ({ first: (at + 1) * 100, count: 100 })),
      )
      expect(stderr).not.toContain('MaxListenersExceededWarning')
    },
    TEST_TIMEOUT_MS,
  )

  it(
    'answers a stdin line that is not a JSON-RPC message with the JSON-RPC error, and goes on',
    async () => {
      const { code, stdout, stderr } = await pipeToolsel('warn', [
        JSON.stringify(INITIALIZE),
        'not json at all',
        JSON.stringify({ hello: 'world' }),
        JSON.stringify({ jsonrpc: '2.0', id: 2, method: 'tools/list' }),
      ])
      expect(code).toBe(0)
      const answers = stdout
        .trim()
        .split('\n')
        .map((line) => JSON.parse(line) as { id: number | null; error?: { code: number } })
      expect(
        answers.filter((answer) => answer.id === null).map((answer) => answer.error?.code),
      ).toEqual([-32700, -32600])
      expect(
        answers
          .filter((answer) => answer.id !== null)
          .map((answer) => answer.id)
          .sort(),
      ).toEqual([1, 2])
      expect(stderr).toContain('MCP stdio: a line of stdin was not answered as a request')
    },
    TEST_TIMEOUT_MS,
  )
})
