/**
 * The first MCP calls on a library after a restart: a server uploads the library (`PUT`, as a
 * client would) and closes; a second server starts over the same index directory (the library
 * loaded from its saved index) and answers `search_tools` and then `select_tools` on it, each
 * twice, while bench/stall-probe.ts measures the event loop (the MCP token counter is warmed on
 * the demo library first). The first call's token count needs every tool's content hash: a
 * library loaded from an index without them hashed each tool on the event loop (round 24 saves
 * them in `tools.idx`).
 *
 *   node --import tsx bench/restart-first-call.ts [--size 10000 | --large] [--data DIR]
 *
 * `--size N`: N tools of the benchmark's ToolGen names (bench/perf/synthetic-library.ts);
 * `--large`: three tools of 7.9 MB (test/helpers/oversized-tools.ts).
 * @module
 */
import { mkdtemp, rm } from 'node:fs/promises'
import { loadavg, tmpdir } from 'node:os'
import { join } from 'node:path'
import { benchArgs } from './bench-args.ts'

const { values } = benchArgs(import.meta.url, {
  options: {
    size: { type: 'string', default: '10000' },
    large: { type: 'boolean', default: false },
    data: { type: 'string', default: process.env.TOOLSEL_DATA_DIR ?? '../shared/data' },
  },
})
// What it measures only once the flags are good: --help and a bad flag answer without it.
const { describedTool } = await import('../test/helpers/oversized-tools.ts')
const { callMcpTool } = await import('../test/helpers/mcp-fetch.ts')
const { buildSyntheticLibrary } = await import('./perf/synthetic-library.ts')
const { serveApp } = await import('./serve-app.ts')
const { measureStall } = await import('./stall-probe.ts')

const tools = values.large
  ? [
      ['send_email', 'Send an email message to a recipient.'],
      ['book_flight', 'Book a flight ticket to a city.'],
      ['send_sms', 'Send a text message (SMS) to a phone number.'],
    ].map(([id, description]) => describedTool(id, 1000, 7900, description))
  : (await buildSyntheticLibrary(values.data, Number(values.size))).tools
const body = JSON.stringify(tools)

/** A server over `indexDir` as `toolsel serve` runs (saved libraries loaded at start). */
const serve = (indexDir: string) => serveApp({ library: { default: 'demo', indexDir } })

const mcp = (url: string, name: string, args: Record<string, unknown>): Promise<Response> =>
  callMcpTool(`${url}/mcp`, name, args)

const indexDir = await mkdtemp(join(tmpdir(), 'toolsel-restart-'))
try {
  const first = await serve(indexDir)
  const put = await fetch(`${first.url}/v1/libraries/lib`, {
    method: 'PUT',
    headers: { 'content-type': 'application/json' },
    body,
  })
  if (put.status !== 201) throw new Error(`the upload answered ${put.status}`)
  await first.close()

  const second = await serve(indexDir)
  try {
    const health = () =>
      fetch(`${second.url}/healthz`).catch(() => new Response(null, { status: 599 }))
    // The token counter loads on the first MCP call: not part of what is measured.
    await (await mcp(second.url, 'search_tools', { query: 'send mail' })).arrayBuffer()
    console.log(
      `${values.large ? 'three 7.9 MB tools' : `${tools.length} tools`} (${body.length.toLocaleString('en-US')} bytes); load average ${loadavg()[0].toFixed(2)}`,
    )
    console.log(
      '| call after the restart | status | ms | stall max ms | CPU ms | /healthz answers |',
    )
    console.log('|---|--:|--:|--:|--:|--:|')
    const calls: Array<[string, string, Record<string, unknown>]> = [
      ['search_tools', 'search_tools', { query: 'send an email', library: 'lib' }],
      ['search_tools again', 'search_tools', { query: 'book a flight', library: 'lib' }],
      ['select_tools', 'select_tools', { instruction: 'Send an email to Ann', library: 'lib' }],
      ['select_tools again', 'select_tools', { instruction: 'Book a flight', library: 'lib' }],
    ]
    for (const [row, name, args] of calls) {
      let status = 0
      const stall = await measureStall(row, health, async () => {
        const response = await mcp(second.url, name, args)
        status = response.status
        const text = await response.text()
        if (text.includes('"isError":true')) throw new Error(`${name}: ${text.slice(0, 300)}`)
      })
      console.log(
        `| ${row} | ${status} | ${stall.ms.toFixed(0)} | ${stall.stallMax.toFixed(0)} | ${stall.stallCpuMax.toFixed(0)} | ${stall.requests} |`,
      )
    }
  } finally {
    await second.close()
  }
} finally {
  await rm(indexDir, { recursive: true, force: true })
}
