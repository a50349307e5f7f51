/**
 * toolsel's MCP server over a large library in a real process (not a test): spawns
 * `toolsel mcp --stdio` and, as an MCP client, walks `tools/list` to its last page, then makes
 * one `search_tools` call. Prints per run the seconds to `initialize`, the pages, tools and bytes
 * (largest page, all pages) of the walk and its seconds, the search's, and the server's peak
 * RSS (VmHWM); then the medians.
 *
 *   node --import tsx bench/mcp-tools-list.ts --library perf-1000000 --index-dir /tmp/p1m [--runs 3]
 *   node --import tsx bench/mcp-tools-list.ts --upstream-tools 1000000 [--page-size 1000]
 *     [--gateway '{"maxToolsPerServer":1000000}'] [--runs 3]
 *
 * `--library`/`--index-dir`: that saved index (e.g. the 1M one `node --expose-gc --import tsx
 * bench/perf.ts --child 1000000 --out /tmp/p1m` builds). `--upstream-tools N`: gateway mode
 * instead, one stdio upstream (test/mcp/fixtures/node-upstream.mjs) listing N tools,
 * `--page-size` a page; `--gateway` (JSON) is merged into the `gateway` section. It first waits
 * (`list_servers`, every 0.5 s, up to `--timeout` seconds) until the upstream is listed or down,
 * and prints how long that took, the tools it lists and its last error.
 * @module
 */
import { mkdtemp, rm, writeFile } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { fileURLToPath } from 'node:url'
import { benchArgs } from './bench-args.ts'

const { values } = benchArgs(import.meta.url, {
  options: {
    library: { type: 'string' },
    'index-dir': { type: 'string' },
    'upstream-tools': { type: 'string', default: '0' },
    'page-size': { type: 'string', default: '1000' },
    gateway: { type: 'string', default: '{}' },
    runs: { type: 'string', default: '1' },
    timeout: { type: 'string', default: '600' },
  },
})
// What it measures only once the flags are good: --help and a bad flag answer without it.
const { Client } = await import('@modelcontextprotocol/sdk/client/index.js')
const { StdioClientTransport } = await import('@modelcontextprotocol/sdk/client/stdio.js')
const { processRssMiB } = await import('./perf/http-load.ts')
const { loadAverage: load, median } = await import('./lib/measure.ts')

const BIN = fileURLToPath(new URL('../bin/toolsel.mjs', import.meta.url))
const UPSTREAM = fileURLToPath(new URL('../test/mcp/fixtures/node-upstream.mjs', import.meta.url))
const upstreamTools = Number(values['upstream-tools'])
const timeoutMs = Number(values.timeout) * 1000

interface Run {
  initializeS: number
  listedS?: number
  upstream?: { status: string; toolCount: number; lastError: string | null }
  pages: number
  tools: number
  largestPageBytes: number
  bytes: number
  walkS: number
  searchS: number
  hits: number
  peakMiB: number
}

async function measure(dir: string): Promise<Run> {
  const args = [BIN, 'mcp', '--stdio', '--log-level', 'error']
  if (upstreamTools > 0) {
    const config = join(dir, 'toolsel.json')
    const gateway = {
      servers: {
        big: {
          command: process.execPath,
          args: [UPSTREAM],
          env: {
            UPSTREAM_TOOLS: String(upstreamTools),
            UPSTREAM_PAGE_SIZE: values['page-size'],
          },
        },
      },
      syncIntervalMs: 0,
      ...(JSON.parse(values.gateway) as Record<string, unknown>),
    }
    await writeFile(config, JSON.stringify({ gateway }))
    args.push('--config', config)
  } else {
    if (!values.library) throw new Error('--library <name> or --upstream-tools <n>')
    args.push('--library', values.library)
    if (values['index-dir']) args.push('--index-dir', values['index-dir'])
  }
  const env = { ...process.env, TOOLSEL_LIBRARY: '' } as Record<string, string>
  const transport = new StdioClientTransport({ command: process.execPath, args, env })
  const client = new Client({ name: 'mcp-tools-list-bench', version: '1.0.0' })
  const started = performance.now()
  const seconds = (since: number) => (performance.now() - since) / 1000
  await client.connect(transport, { timeout: timeoutMs })
  const initializeS = seconds(started)
  const pid = transport.pid!
  try {
    let listedS: number | undefined
    let upstream: Run['upstream']
    if (upstreamTools > 0) {
      for (;;) {
        const answer = await client.callTool({ name: 'list_servers', arguments: {} }, undefined, {
          timeout: timeoutMs,
        })
        const servers = (answer.structuredContent as { servers: Array<Run['upstream'] & {}> })
          .servers
        upstream = servers[0]
        if (upstream.status !== 'connecting' || seconds(started) * 1000 > timeoutMs) break
        await new Promise((done) => setTimeout(done, 500))
      }
      listedS = seconds(started)
    }
    const walking = performance.now()
    let cursor: string | undefined
    let pages = 0
    let tools = 0
    let bytes = 0
    let largestPageBytes = 0
    do {
      const page = await client.listTools(cursor === undefined ? undefined : { cursor }, {
        timeout: timeoutMs,
      })
      const size = Buffer.byteLength(JSON.stringify(page))
      pages += 1
      tools += page.tools.length
      bytes += size
      largestPageBytes = Math.max(largestPageBytes, size)
      cursor = page.nextCursor
    } while (cursor !== undefined)
    const walkS = seconds(walking)
    const searching = performance.now()
    const search = await client.callTool(
      { name: 'search_tools', arguments: { query: 'look up a record of the ledger' } },
      undefined,
      { timeout: timeoutMs },
    )
    const searchS = seconds(searching)
    const found = search.structuredContent as { tools?: unknown[] } | undefined
    const peakMiB = await processRssMiB(pid, 'VmHWM')
    return {
      initializeS,
      listedS,
      upstream,
      pages,
      tools,
      largestPageBytes,
      bytes,
      walkS,
      searchS,
      hits: found?.tools?.length ?? 0,
      peakMiB,
    }
  } finally {
    await client.close()
  }
}

const dir = await mkdtemp(join(tmpdir(), 'mcp-tools-list-'))
const runs: Run[] = []
process.stdout.write(`load average at start: ${load()}\n`)
try {
  for (let run = 1; run <= Number(values.runs); run += 1) {
    const measured = await measure(dir)
    runs.push(measured)
    const upstream = measured.upstream
      ? `, upstream ${measured.upstream.status} after ${measured.listedS?.toFixed(2)} s with ${measured.upstream.toolCount.toLocaleString('en-US')} tools${measured.upstream.lastError ? ` (${measured.upstream.lastError})` : ''}`
      : ''
    process.stdout.write(
      `run ${run}: initialize ${measured.initializeS.toFixed(2)} s${upstream}; tools/list ${measured.pages} page(s), ${measured.tools} tools, ${measured.bytes.toLocaleString('en-US')} bytes (largest page ${measured.largestPageBytes.toLocaleString('en-US')}) in ${(measured.walkS * 1000).toFixed(1)} ms; search_tools ${measured.hits} tools in ${(measured.searchS * 1000).toFixed(1)} ms; server peak RSS ${measured.peakMiB.toFixed(0)} MiB; load ${load()}\n`,
    )
  }
} finally {
  await rm(dir, { recursive: true, force: true })
}

const cell = (pick: (run: Run) => number, digits = 0) => median(runs.map(pick)).toFixed(digits)
process.stdout.write(
  `\n| library | initialize (s) | upstream listed (s) | tools/list pages | tools listed | largest page (bytes) | walk (ms) | search_tools (ms) | server peak RSS (MiB) |\n|---|---|---|---|---|---|---|---|---|\n| ${upstreamTools > 0 ? `gateway, 1 upstream of ${upstreamTools.toLocaleString('en-US')} tools (${values['page-size']} a page)` : values.library} | ${cell((run) => run.initializeS, 2)} | ${upstreamTools > 0 ? cell((run) => run.listedS ?? 0, 2) : '-'} | ${cell((run) => run.pages)} | ${cell((run) => run.tools)} | ${cell((run) => run.largestPageBytes)} | ${cell((run) => run.walkS * 1000, 1)} | ${cell((run) => run.searchS * 1000, 1)} | ${cell((run) => run.peakMiB)} |\n\nmedians over ${runs.length} run(s); load average at end: ${load()}\n`,
)
