/**
 * The longest event-loop block one maximal hostile body causes on each POST route (#10: "anyone
 * who reaches the port must not freeze the process"). Each checkout's `toolsel serve` (the demo
 * library, default configuration) runs as a child process; this process sends one body at a time
 * (made before, sent as bytes) while a second client polls `GET /healthz` back to back: the
 * slowest `/healthz` answer meanwhile is the longest the server's event loop was held ("block
 * ms"; its floor is one request's time). Bodies are `--bytes`, by default just under the query
 * routes' 4 MiB (MAX_QUERY_BODY_BYTES; the examples and upload routes take up to
 * `server.bodyLimitBytes`, 32 MiB): one word, CJK text, one-character words, and JSON nested deep, in the
 * field each route reads. With `--before <checkout>` (built, e.g. /work/ci-base) both run, one
 * after the other, each case `--turns` times (median).
 *
 *   npm run build
 *   node --import tsx bench/hostile-body-stall.ts [--before /work/ci-base] [--only <substring>]
 *     [--turns 3] [--bytes 4190208]
 * @module
 */
import { mkdtemp, rm } from 'node:fs/promises'
import { loadavg, tmpdir } from 'node:os'
import { join, resolve } from 'node:path'
import { Worker } from 'node:worker_threads'
import { benchArgs, wholeNumber } from './bench-args.ts'

const { values } = benchArgs(import.meta.url, {
  options: {
    before: { type: 'string' },
    only: { type: 'string' },
    turns: { type: 'string', default: '3' },
    bytes: { type: 'string', default: String(4 * 1024 * 1024 - 4096) },
  },
})
const turns = wholeNumber(import.meta.url, '--turns', values.turns)
const { startServe } = await import('./perf/serve-process.ts')

const BYTES = wholeNumber(import.meta.url, '--bytes', values.bytes, 1024)
const json = (value: unknown) => Buffer.from(JSON.stringify(value))

/** Texts of about `BYTES` bytes as JSON strings (CJK: 3 bytes a character). */
const TEXTS: Array<[string, string]> = [
  ['one word', 'z'.repeat(BYTES)],
  ['CJK', '中'.repeat(Math.floor(BYTES / 3))],
  ['1-char words', 'a '.repeat(Math.floor(BYTES / 2))],
]
/** `{"field": [[[…]]]}`-shaped: a value nested as deep as the bytes allow, in `field`. */
function deep(before: string, after: string): Buffer {
  const depth = Math.floor((BYTES - before.length - after.length) / 2)
  return Buffer.from(`${before}${'['.repeat(depth)}${']'.repeat(depth)}${after}`)
}

const MCP_HEADERS = {
  accept: 'application/json, text/event-stream',
  'mcp-protocol-version': '2025-03-26',
}
const mcpCall = (name: string, args: Record<string, unknown>) =>
  json({ jsonrpc: '2.0', id: 1, method: 'tools/call', params: { name, arguments: args } })

interface Case {
  route: string
  body: string
  method: 'POST' | 'PUT'
  path: string
  make: (ids: string[]) => Buffer
  headers?: Record<string, string>
}

/** Example instructions of `text`, cut to pieces of 2,000 characters (10,000 at most). */
function examples(text: string, ids: string[]) {
  const pieces: Array<{ instruction: string; tools: string[] }> = []
  for (let at = 0; at < text.length && pieces.length < 10_000; at += 2000)
    pieces.push({ instruction: text.slice(at, at + 2000), tools: [ids[0]] })
  return pieces
}

/** Tools whose descriptions (100,000 characters at most each) hold `text`. */
function tools(text: string) {
  const list = []
  for (let at = 0; at < text.length; at += 100_000)
    list.push({
      id: `t${at}`,
      name: `t${at}`,
      description: text.slice(at, at + 100_000),
      parameters: { type: 'object', properties: {} },
    })
  return { tools: list }
}

const cases: Case[] = []
for (const [name, text] of TEXTS) {
  cases.push(
    {
      route: 'select-tools',
      body: name,
      method: 'POST',
      path: '/v1/select-tools',
      make: () => json({ instruction: text }),
    },
    {
      route: 'search-tools',
      body: name,
      method: 'POST',
      path: '/v1/search-tools',
      make: () => json({ query: text }),
    },
    {
      route: 'tools/batch (schemas)',
      body: name,
      method: 'POST',
      path: '/v1/libraries/demo/tools/batch',
      make: () => json({ ids: [text] }),
    },
    {
      route: 'feedback',
      body: name,
      method: 'POST',
      path: '/v1/feedback',
      make: (ids) => json({ instruction: text, used: [ids[0]] }),
    },
    {
      route: 'examples',
      body: `${name}, 2,000-char instructions`,
      method: 'POST',
      path: '/v1/libraries/demo/examples',
      make: (ids) => json({ examples: examples(text, ids) }),
    },
    {
      route: 'library upload',
      body: `${name}, 100,000-char descriptions`,
      method: 'PUT',
      path: '/v1/libraries/hostile',
      make: () => json(tools(text)),
    },
    {
      route: 'MCP select_tools',
      body: name,
      method: 'POST',
      path: '/mcp',
      headers: MCP_HEADERS,
      make: () => mcpCall('select_tools', { instruction: text }),
    },
    {
      route: 'MCP get_tool_schemas',
      body: name,
      method: 'POST',
      path: '/mcp',
      headers: MCP_HEADERS,
      make: () => mcpCall('get_tool_schemas', { ids: [text] }),
    },
  )
}
cases.push(
  ...(
    [
      ['select-tools', '/v1/select-tools', '{"instruction":"send mail","x":', '}'],
      ['search-tools', '/v1/search-tools', '{"query":"send mail","x":', '}'],
      ['tools/batch (schemas)', '/v1/libraries/demo/tools/batch', '{"ids":', '}'],
      ['feedback', '/v1/feedback', '{"instruction":"send mail","used":', '}'],
      ['examples', '/v1/libraries/demo/examples', '{"examples":', '}'],
      ['library upload', '/v1/libraries/hostile', '{"tools":', '}'],
      [
        'MCP select_tools',
        '/mcp',
        '{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"select_tools","arguments":{"instruction":',
        '}}}',
      ],
    ] as const
  ).map(([route, path, before, after]): Case => ({
    route,
    body: 'deep JSON',
    method: route === 'library upload' ? 'PUT' : 'POST',
    path,
    ...(path === '/mcp' && { headers: MCP_HEADERS }),
    make: () => deep(before, after),
  })),
)
const chosen = cases.filter(
  (row) => values.only === undefined || `${row.route} ${row.body}`.includes(values.only),
)

interface Measured {
  status: number
  ms: number
  blockMs: number
}

/**
 * The second client: polls `url` back to back in a worker thread (this thread's own work of
 * sending a large body would delay it, bench/upload-stall.ts) and, told to stop, posts the
 * slowest answer's ms since it was told to start.
 */
const PROBER = `
const { parentPort, workerData } = require('node:worker_threads')
let slowest = 0
let stop = false
parentPort.on('message', (message) => {
  if (message === 'reset') slowest = 0
  else stop = true
})
;(async () => {
  while (!stop) {
    const started = performance.now()
    await fetch(workerData).then((response) => response.arrayBuffer())
    slowest = Math.max(slowest, performance.now() - started)
  }
  parentPort.postMessage(slowest)
})()
`

/** Sends `body` while a second client polls `/healthz`; the slowest poll is the block. */
async function measure(url: string, row: Case, body: Buffer): Promise<Measured> {
  const prober = new Worker(PROBER, { eval: true, workerData: `${url}/healthz` })
  const slowest = new Promise<number>((resolve) => prober.once('message', resolve))
  await new Promise((resolve) => setTimeout(resolve, 200))
  prober.postMessage('reset')
  const started = performance.now()
  const response = await fetch(`${url}${row.path}`, {
    method: row.method,
    headers: { 'content-type': 'application/json', ...row.headers },
    body: new Uint8Array(body),
  })
  await response.arrayBuffer()
  const ms = performance.now() - started
  // A block that outlasts the answer (work after it went out) still delays the next poll.
  await new Promise((resolve) => setTimeout(resolve, 50))
  prober.postMessage('stop')
  const blockMs = await slowest
  await prober.terminate()
  return { status: response.status, ms, blockMs }
}

const median = (list: number[]) => [...list].sort((a, b) => a - b)[Math.floor(list.length / 2)]

async function runCheckout(root: string): Promise<Map<Case, Measured>> {
  const indexDir = await mkdtemp(join(tmpdir(), 'hostile-body-'))
  const { server, url } = await startServe({ root, indexDir, library: 'demo' })
  try {
    const search = await fetch(`${url}/v1/search-tools`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ query: 'send an email' }),
    })
    const ids = ((await search.json()) as { results: Array<{ id: string }> }).results.map(
      (result) => result.id,
    )
    const results = new Map<Case, Measured>()
    for (const row of chosen) {
      const body = row.make(ids)
      const runs: Measured[] = []
      for (let turn = 0; turn < turns; turn += 1) runs.push(await measure(url, row, body))
      results.set(row, {
        status: runs[0].status,
        ms: median(runs.map((run) => run.ms)),
        blockMs: median(runs.map((run) => run.blockMs)),
      })
      if (row.method === 'PUT') await fetch(`${url}${row.path}`, { method: 'DELETE' })
    }
    return results
  } finally {
    server.kill('SIGTERM')
    await new Promise((resolve) => server.once('exit', resolve))
    await rm(indexDir, { recursive: true, force: true })
  }
}

const here = resolve(import.meta.dirname, '..')
const load = loadavg()
  .map((value) => value.toFixed(1))
  .join(' ')
const after = await runCheckout(here)
const before = values.before === undefined ? undefined : await runCheckout(resolve(values.before))
const loadAfter = loadavg()
  .map((value) => value.toFixed(1))
  .join(' ')
console.log(
  `${chosen.length} cases, bodies of ${BYTES.toLocaleString('en-US')} bytes, median of ${turns}; load average ${load} -> ${loadAfter}`,
)
const head = before
  ? '| route | body | status before / now | answer ms before / now | block ms before / now | ratio |'
  : '| route | body | status | answer ms | block ms |'
console.log(head)
console.log(head.replace(/[^|]+/g, ' --- '))
for (const row of chosen) {
  const now = after.get(row)!
  const then = before?.get(row)
  const cells = then
    ? [
        `${then.status} / ${now.status}`,
        `${then.ms.toFixed(0)} / ${now.ms.toFixed(0)}`,
        `${then.blockMs.toFixed(0)} / ${now.blockMs.toFixed(0)}`,
        (now.blockMs / then.blockMs).toFixed(2),
      ]
    : [String(now.status), now.ms.toFixed(0), now.blockMs.toFixed(0)]
  console.log(`| ${row.route} | ${row.body} | ${cells.join(' | ')} |`)
}
