/**
 * An attacker's table: inputs at or under the default limits, one request each, against the
 * server's default configuration (the demo library, no keys), and how long each holds the event
 * loop. Serves the app over real HTTP in this process; a client keeps polling `/healthz` while
 * the request runs, and `perf_hooks.monitorEventLoopDelay` (bench/stall-probe.ts) records the
 * longest stall: wall clock ("stall ms") and the main thread's own CPU ("CPU ms", the stall
 * without the waits for a core of a loaded machine). A row is a finding when "CPU ms" is over
 * 100 ms. Bodies are made before the measurement and sent as bytes, so the client's own work is
 * not counted.
 *
 * Before running a library-upload row the script uploads `rx` (the sample tools with a regex
 * part and one 2,000-character description), which the regex rows search, and `grouped` (one tool
 * of 24 objects of 2,048 parameters, 1.2 MB), which a tools/batch row asks for; before the rows
 * that select from it, `large` (three tools of 7.9 MB); before the scoped MCP rows, `many`
 * (50,000 small tools of 20 servers), and one scoped view of it.
 *
 *   node --import tsx bench/adversarial.ts [--only <substring of a row name>] [--list]
 *
 * On the code before round 20 some rows do not end for minutes (the regex and parsePlan rows), and
 * before round 21 the OpenAPI row of 30 levels never ends: run them one at a time with `--only`.
 * @module
 */
import { request as httpRequest } from 'node:http'
import { mkdtemp, rm } from 'node:fs/promises'
import { loadavg, tmpdir } from 'node:os'
import { join } from 'node:path'
import { benchArgs } from './bench-args.ts'

const { values } = benchArgs(import.meta.url, {
  options: { only: { type: 'string' }, list: { type: 'boolean', default: false } },
})
// What it measures only once the flags are good: --help and a bad flag answer without it.
const { describedTool, groupedTool, refFanOut, wideTool } =
  await import('../test/helpers/oversized-tools.ts')
const { SAMPLE_TOOLS } = await import('../test/helpers/sample-tools.ts')
const { serveApp } = await import('./serve-app.ts')
const { measureStall } = await import('./stall-probe.ts')

interface Case {
  name: string
  /** What makes it large, for the table. */
  size: string
  method: 'POST' | 'PUT'
  path: string
  body: Buffer
  headers?: Record<string, string>
  /** Uploads the library `large` (three tools of 7.9 MB) before the rows run. */
  needsLarge?: true
  /**
   * Uploads the library `many` (50,000 small tools of 20 servers) and asks for one scoped view
   * of it before the rows run.
   */
  needsMany?: true
  /**
   * Sends one request per path, one after another (with the same body), instead of `path`'s one;
   * the status column then counts the answers that were `RATE_LIMITED`.
   */
  paths?: string[]
}

const MAX_CHARS = 8000 // server.maxInstructionChars
const COMPLETION_CHARS = 32_000 // MAX_COMPLETION_CHARS of the reward routes
const json = (value: unknown) => Buffer.from(JSON.stringify(value))
const post = (name: string, size: string, path: string, body: unknown): Case => ({
  name,
  size,
  method: 'POST',
  path,
  body: Buffer.isBuffer(body) ? body : json(body),
})
const fill = (unit: string, chars: number) => unit.repeat(Math.floor(chars / unit.length))

/** Instruction texts of the select, search and MCP rows: each at the instruction limit. */
const TEXTS: Array<[string, string]> = [
  ['one long word', 'z'.repeat(MAX_CHARS)],
  ['many short words', fill('ab ', MAX_CHARS)],
  ['many "and the"', `I want X${fill(' and the Y', MAX_CHARS - 8)}`],
  ['many commas', fill('send mail, ', MAX_CHARS)],
  ['many sentences', fill('Send mail. Then text Ann. ', MAX_CHARS)],
  ['camelCase run', fill('aB', MAX_CHARS)],
  ['combining marks', `e${'\u0301'.repeat(MAX_CHARS - 1)}`],
  ['emoji and RTL', fill('😀\u202eשלום ', MAX_CHARS)],
  ['NUL characters', fill('a\u0000', MAX_CHARS)],
  ['white space run', `a${' '.repeat(MAX_CHARS - 2)}b`],
]

/** Planner completions of the reward rows: each one completion of the largest size. */
const COMPLETIONS: Array<[string, string]> = [
  ['open braces', '{'.repeat(COMPLETION_CHARS)],
  [
    'nested brackets, not JSON',
    `${'['.repeat(COMPLETION_CHARS / 2 - 1)}x${']'.repeat(COMPLETION_CHARS / 2)}`,
  ],
  ['list item with a space run', `1. a${' '.repeat(COMPLETION_CHARS - 5)}b`],
  ['code fences', fill('```', COMPLETION_CHARS)],
]

const REGEXES: Array<[string, string]> = [
  ['regex (.|.)*Z', '(.|.)*Z'],
  ['regex .*.*.*Z', '.*.*.*Z'],
  ['regex (a+)+ (refused by shape)', '(a+)+$'],
]

/** Three tools of 7.9 MB (within the tool and body limits), and a request that chooses two. */
const LARGE_TOOLS = [
  ['send_email', 'Send an email message to a recipient.'],
  ['book_flight', 'Book a flight ticket to a city.'],
  ['send_sms', 'Send a text message (SMS) to a phone number.'],
].map(([id, description]) => describedTool(id, 1000, 7900, description))
const LARGE_INSTRUCTION = 'Send an email to Ann, book a flight to Rome and text Bob by SMS'

/** 50,000 small tools of 20 servers (namespaces), some tagged: the scoped MCP rows' library. */
const MANY_TOOLS = Array.from({ length: 50_000 }, (_, index) => ({
  id: `srv${index % 20}.op_${index}`,
  name: `op_${index}`,
  namespace: `srv${index % 20}`,
  ...(index % 3 === 0 && { tags: [`t${index % 4}`] }),
  description: `Looks up record ${index} of service ${index % 20}: its status, owner and the last changes.`,
  parameters: {
    type: 'object',
    properties: { id: { type: 'string', description: 'The record id' } },
  },
}))
/** 40 distinct unions of 4 of `many`'s 20 servers (10,000 tools each): runs of 4, then with a gap. */
const UNIONS = Array.from({ length: 40 }, (_, index) =>
  [0, 1, 2, index < 20 ? 3 : 4].map((step) => `srv${(index + step) % 20}`).join(','),
)
/** 2,500 names, within the 16 KB of a request's head. */
const MANY_NAMES = Array.from({ length: 2500 }, (_, index) => `x${index}`).join(',')

function mcpCall(name: string, args: Record<string, unknown>): Buffer {
  return json({ jsonrpc: '2.0', id: 1, method: 'tools/call', params: { name, arguments: args } })
}
const MCP_HEADERS = {
  accept: 'application/json, text/event-stream',
  'mcp-protocol-version': '2025-03-26',
}

const cases: Case[] = [
  ...TEXTS.map(([name, text]) =>
    post(`select: ${name}`, `${text.length} chars`, '/v1/select-tools', {
      instruction: text,
      explain: true,
    }),
  ),
  ...TEXTS.slice(0, 4).map(([name, text]) =>
    post(`search: ${name}`, `${text.length} chars`, '/v1/search-tools', { query: text }),
  ),
  ...REGEXES.map(([name, pattern]) =>
    post(`search: ${name}`, '2,000-char field', '/v1/search-tools', {
      query: pattern,
      library: 'rx',
      retriever: 'regex',
    }),
  ),
  ...COMPLETIONS.map(([name, text]) =>
    post(`rewards/planner: ${name}`, `1 x ${text.length} chars`, '/v1/rewards/planner', {
      instruction: 'send an email',
      gold: ['mail.send_email'],
      completions: [text],
    }),
  ),
  post('rewards/selector: fenced', '125 x 32,000 chars', '/v1/rewards/selector', {
    gold: 'mail.send_email',
    completions: Array.from(
      { length: 125 },
      (_, index) => `\`\`\`\n"${'x'.repeat(31_980)}${index}"`,
    ),
  }),
  post(
    'rewards/planner: 30 MB of numbers as completions',
    '15 M values',
    '/v1/rewards/planner',
    Buffer.from(`{"instruction":"x","gold":["a"],"completions":[${'1,'.repeat(15_000_000)}1]}`),
  ),
  post('rewards/planner: one completion of 30 MB', '30 MB', '/v1/rewards/planner', {
    instruction: 'x',
    gold: ['a'],
    completions: ['x'.repeat(30_000_000)],
  }),
  post(
    'tools/batch: 100 copies of the id of a 1.2 MB tool',
    '100 ids',
    '/v1/libraries/grouped/tools/batch',
    { ids: Array.from({ length: 100 }, () => 'g') },
  ),
  post('tools/batch: unknown ids', '1,000 x 1,000 chars', '/v1/libraries/rx/tools/batch', {
    ids: Array.from({ length: 1000 }, (_, index) => `${'u'.repeat(995)}${index}`),
  }),
  {
    ...post(
      'mcp: search_tools, one long word',
      '8,000 chars',
      '/mcp',
      mcpCall('search_tools', {
        query: 'z'.repeat(MAX_CHARS),
      }),
    ),
    headers: MCP_HEADERS,
  },
  {
    ...post(
      'mcp: select_tools, many "and the"',
      '8,000 chars',
      '/mcp',
      mcpCall('select_tools', {
        instruction: TEXTS[2][1],
      }),
    ),
    headers: MCP_HEADERS,
  },
  {
    ...post(
      'mcp: batch of 100 select_tools',
      '100 x 8,000 chars',
      '/mcp',
      Buffer.from(
        JSON.stringify(
          Array.from({ length: 100 }, (_, index) => ({
            jsonrpc: '2.0',
            id: index + 1,
            method: 'tools/call',
            params: { name: 'select_tools', arguments: { instruction: TEXTS[1][1] } },
          })),
        ),
      ),
    ),
    headers: MCP_HEADERS,
  },
  {
    ...post(
      'mcp: 3.9 MB of numbers in the arguments',
      '1.95 M values',
      '/mcp',
      Buffer.from(
        `{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"search_tools","arguments":{"query":"mail","pad":[${'1,'.repeat(1_950_000)}1]}}}`,
      ),
    ),
    headers: MCP_HEADERS,
  },
  {
    ...post(
      'mcp: select_tools in the library of the 1.2 MB tool',
      '1 call',
      '/mcp',
      mcpCall('select_tools', { instruction: 'g', library: 'grouped' }),
    ),
    headers: MCP_HEADERS,
  },
  {
    ...post('select: schemas of two chosen 7.9 MB tools', '1 request', '/v1/select-tools', {
      instruction: LARGE_INSTRUCTION,
      library: 'large',
    }),
    needsLarge: true,
  },
  {
    ...post(
      'mcp: select_tools choosing two 7.9 MB tools',
      '1 call',
      '/mcp',
      mcpCall('select_tools', { instruction: LARGE_INSTRUCTION, library: 'large' }),
    ),
    headers: MCP_HEADERS,
    needsLarge: true,
  },
  {
    ...post(
      'mcp: search_tools scoped to a server the library lacks',
      '50,000 tools',
      '/mcp?library=many&servers=nosuch',
      mcpCall('search_tools', { query: 'record status' }),
    ),
    headers: MCP_HEADERS,
    needsMany: true,
  },
  {
    ...post(
      'mcp: search_tools scoped to 2,500 tags the library lacks',
      '50,000 tools',
      `/mcp?library=many&tags=${MANY_NAMES}`,
      mcpCall('search_tools', { query: 'record status' }),
    ),
    headers: MCP_HEADERS,
    needsMany: true,
  },
  {
    ...post(
      'mcp: search_tools scoped to all servers but one',
      '47,500 tools in scope',
      `/mcp?library=many&servers=${Array.from({ length: 19 }, (_, index) => `srv${index + 1}`).join(',')}`,
      mcpCall('search_tools', { query: 'record status' }),
    ),
    headers: MCP_HEADERS,
    needsMany: true,
  },
  {
    ...post(
      'mcp: search_tools over 40 new unions of 4 servers, one client',
      '40 x 10,000 tools in scope',
      '/mcp',
      mcpCall('search_tools', { query: 'record status' }),
    ),
    headers: MCP_HEADERS,
    needsMany: true,
    paths: UNIONS.map((union) => `/mcp?library=many&servers=${union}`),
  },
  {
    name: 'upload: one parameter, 60k enum values',
    size: '60,000 values',
    method: 'PUT',
    path: '/v1/libraries/enum',
    body: json([
      {
        id: 'e',
        name: 'e',
        description: 'enum',
        parameters: {
          type: 'object',
          properties: { v: { type: 'string', enum: Array.from({ length: 60_000 }, String) } },
        },
      },
    ]),
  },
  {
    name: 'upload: 20k parameters',
    size: '20,000 properties',
    method: 'PUT',
    path: '/v1/libraries/wide',
    body: json(wideTool(20_000)),
  },
  {
    name: 'upload: 24 objects of 2,048 parameters',
    size: '49,152 properties',
    method: 'PUT',
    path: '/v1/libraries/grouped',
    body: json(groupedTool(24, 2048)),
  },
  {
    name: 'upload: 1,000 parameters of 30,000-character descriptions',
    size: '30 MB',
    method: 'PUT',
    path: '/v1/libraries/described',
    body: json([describedTool('d', 1000, 30_000)]),
  },
  {
    name: 'upload: one tool of 8 MB, 1,000 parameters of 8,000-character descriptions',
    size: '8 MB',
    method: 'PUT',
    path: '/v1/libraries/described8',
    body: json([describedTool('d8', 1000, 8000)]),
  },
  {
    name: 'upload: four tools of 7.9 MB',
    size: '31.6 MB',
    method: 'PUT',
    path: '/v1/libraries/large4',
    body: json(['a', 'b', 'c', 'd'].map((id) => describedTool(`large_${id}`, 1000, 7900))),
  },
  {
    // Round 28: each operation warned "operationId … is used as the name …" and the answer
    // listed every warning (Microsoft Graph: 12,779 warnings, 2.4 MB); now 20 of each kind.
    name: 'upload: OpenAPI, 10,000 dotted operationIds (a warning each)',
    size: '10,000 operations',
    method: 'PUT',
    path: '/v1/libraries/dotted?format=openapi',
    body: json({
      openapi: '3.0.0',
      info: { title: 'dotted', version: '1' },
      paths: Object.fromEntries(
        Array.from({ length: 10_000 }, (_, index) => [
          `/items${index}`,
          { get: { operationId: `items.item${index}.get`, summary: `Gets item ${index}.` } },
        ]),
      ),
    }),
  },
  {
    name: 'upload: 5,000 ordinary tools',
    size: '2.0 MB',
    method: 'PUT',
    path: '/v1/libraries/ordinary',
    body: json(
      Array.from({ length: 5000 }, (_, index) => ({
        id: `svc${index % 50}.op_${index}`,
        name: `op_${index}`,
        description: `Looks up record ${index} of service ${index % 50}: its status, owner and the last ${index % 7} changes, filtered by date.`,
        parameters: {
          type: 'object',
          properties: {
            id: { type: 'string', description: 'The record id' },
            since: { type: 'string', description: 'ISO date of the oldest change' },
            limit: { type: 'integer', description: 'Most changes to return' },
          },
          required: ['id'],
        },
      })),
    ),
  },
  {
    name: 'upload: 10k copies of one id, rename',
    size: '10,000 tools',
    method: 'PUT',
    path: '/v1/libraries/dupes?onDuplicate=rename',
    body: json(
      Array.from({ length: 10_000 }, (_, index) => ({
        id: 'same',
        name: 'same',
        description: `copy ${index}`,
      })),
    ),
  },
  {
    name: 'upload: OpenAPI $ref fan-out',
    size: '2^16 expanded paths',
    method: 'PUT',
    path: '/v1/libraries/fan?format=openapi',
    body: json(refFanOut(16)),
  },
  {
    name: 'upload: OpenAPI $ref fan-out, 30 levels',
    size: '2^30 expanded paths',
    method: 'PUT',
    path: '/v1/libraries/fan30?format=openapi',
    body: json(refFanOut(30)),
  },
  post('examples: 10k long instructions', '10,000 x 500 chars', '/v1/libraries/rx/examples', {
    examples: Array.from({ length: 10_000 }, (_, index) => ({
      instruction: `${fill('send the mail ', 490)} ${index}`,
      tools: ['mail.send_email'],
    })),
  }),
]

const selected = cases.filter((row) => values.only === undefined || row.name.includes(values.only))
if (values.list) {
  for (const row of cases) console.log(row.name)
  process.exit(0)
}

function send(
  url: string,
  row: Case,
): Promise<{ status: number; bytes: number; limited: boolean }> {
  const target = new URL(row.path, url)
  return new Promise((resolve, reject) => {
    const request = httpRequest(
      target,
      {
        method: row.method,
        headers: {
          'content-type': 'application/json',
          'content-length': String(row.body.length),
          ...row.headers,
        },
      },
      (response) => {
        let bytes = 0
        let limited = false
        response.on('data', (chunk: Buffer) => {
          bytes += chunk.length
          limited ||= chunk.includes('RATE_LIMITED')
        })
        response.on('end', () => resolve({ status: response.statusCode ?? 0, bytes, limited }))
        response.on('error', reject)
      },
    )
    request.on('error', reject)
    request.end(row.body)
  })
}

const indexDir = await mkdtemp(join(tmpdir(), 'toolsel-adversarial-'))
const server = await serveApp({ library: { default: 'demo', loadAll: false, indexDir } })
try {
  const description = 'Send an email message to a recipient with a subject and a body. '
  const rx = await send(server.url, {
    name: 'setup',
    size: '',
    method: 'PUT',
    path: '/v1/libraries/rx?retriever=regex',
    body: json([
      ...SAMPLE_TOOLS,
      { id: 'long', name: 'long', description: description.repeat(40).slice(0, 2000) },
    ]),
  })
  if (rx.status !== 201) throw new Error(`uploading the regex library answered ${rx.status}`)
  // The widest tool the import takes (24 objects of 2,048 parameters, 1.2 MB), for the batch row.
  const grouped = await send(server.url, {
    name: 'setup',
    size: '',
    method: 'PUT',
    path: '/v1/libraries/grouped',
    body: json(groupedTool(24, 2048)),
  })
  if (grouped.status !== 201)
    throw new Error(`uploading the grouped tool answered ${grouped.status}`)
  if (selected.some((row) => row.needsLarge)) {
    const large = await send(server.url, {
      name: 'setup',
      size: '',
      method: 'PUT',
      path: '/v1/libraries/large',
      body: json(LARGE_TOOLS),
    })
    if (large.status !== 201) throw new Error(`uploading the large tools answered ${large.status}`)
  }
  if (selected.some((row) => row.needsMany)) {
    const many = await send(server.url, {
      name: 'setup',
      size: '',
      method: 'PUT',
      path: '/v1/libraries/many',
      body: json(MANY_TOOLS),
    })
    if (many.status !== 201) throw new Error(`uploading the many tools answered ${many.status}`)
    // A client's first scoped view of the library (what a scope of it costs once).
    await send(server.url, {
      name: 'setup',
      size: '',
      method: 'POST',
      path: '/mcp?library=many&servers=srv0',
      body: mcpCall('search_tools', { query: 'record status' }),
      headers: MCP_HEADERS,
    })
  }
  // A request that the server drops (keep-alive closed while the loop was held) counts as answered.
  const health = () =>
    fetch(`${server.url}/healthz`).catch(() => new Response(null, { status: 599 }))
  // Warm-up: the first selection loads the model, the first MCP call its token counter.
  await send(server.url, cases[0])
  await send(
    server.url,
    cases.find((row) => row.path === '/mcp')!,
  )
  console.log(`load average ${loadavg()[0].toFixed(2)}; node ${process.version}`)
  console.log(
    '| input class | size | status | ms | stall max ms | CPU ms | /healthz answers | bytes answered |',
  )
  console.log('|---|---|--:|--:|--:|--:|--:|--:|')
  for (const row of selected) {
    let status: number | string = 0
    let bytes = 0
    // The longest wait between two turns of a 1 ms timer: the wall-clock stall.
    let longest = 0
    let last = performance.now()
    const probe = setInterval(() => {
      const now = performance.now()
      longest = Math.max(longest, now - last)
      last = now
    }, 1)
    const stall = await measureStall(row.name, health, async () => {
      last = performance.now()
      longest = 0
      if (row.paths === undefined) {
        const answer = await send(server.url, row)
        status = answer.status
        bytes = answer.bytes
        return
      }
      let limited = 0
      for (const path of row.paths) {
        const answer = await send(server.url, { ...row, path })
        status = answer.status
        bytes += answer.bytes
        if (answer.limited) limited += 1
      }
      status = `${status}, ${limited} limited`
    })
    clearInterval(probe)
    console.log(
      `| ${row.name} | ${row.size} | ${status} | ${stall.ms.toFixed(0)} | ${Math.max(longest, stall.stallMax).toFixed(0)} | ${stall.stallCpuMax.toFixed(0)} | ${stall.requests} | ${bytes} |`,
    )
  }
} finally {
  await server.close()
  await rm(indexDir, { recursive: true, force: true })
}
