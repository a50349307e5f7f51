/**
 * Scoped MCP views chosen by the client (bench/README "Round 26: a fresh attacker's pass"): one
 * library of `<size>` tools of 200 servers and 50 tags, served in process; `search_tools` over
 * `/mcp?library=big&servers=…` / `tags=…` for scopes the library lacks, one real server, all
 * servers but one, and 2,500 names or tags; per row the status, wall ms, the longest event-loop
 * stall and its CPU (bench/stall-probe.ts), and the /healthz probes answered meanwhile.
 *
 *   node --import tsx bench/scope-probe.ts [size, default 20000]
 * @module
 */
import { mkdtemp, rm } from 'node:fs/promises'
import { loadavg, tmpdir } from 'node:os'
import { join } from 'node:path'
import { serveApp } from './serve-app.ts'
import { measureStall } from './stall-probe.ts'
import { serverTools } from './server-tools.ts'

const size = Number(process.argv[2] ?? 20000)
const tools = serverTools(size)
const indexDir = await mkdtemp(join(tmpdir(), 'toolsel-scope-probe-'))
const server = await serveApp({ library: { default: 'demo', loadAll: false, indexDir } })
const H = {
  'content-type': 'application/json',
  accept: 'application/json, text/event-stream',
  'mcp-protocol-version': '2025-03-26',
}
try {
  const put = await fetch(`${server.url}/v1/libraries/big`, {
    method: 'PUT',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify(tools),
  })
  console.log('put', put.status, (await put.text()).slice(0, 100))
  const call = (query: string) =>
    fetch(`${server.url}/mcp?library=big&${query}`, {
      method: 'POST',
      headers: H,
      body: JSON.stringify({
        jsonrpc: '2.0',
        id: 1,
        method: 'tools/call',
        params: { name: 'search_tools', arguments: { query: 'record status' } },
      }),
    }).then(async (r) => ({ status: r.status, text: await r.text() }))
  await call('')
  console.log('load', loadavg()[0].toFixed(2))
  console.log(
    '| scope | status | wall ms | stall max ms | stall CPU max ms | /healthz answered | answer |',
  )
  console.log('| --- | ---: | ---: | ---: | ---: | ---: | --- |')
  const health = () =>
    fetch(`${server.url}/healthz`).catch(() => new Response(null, { status: 599 }))
  const longList = Array.from({ length: 2500 }, (_, i) => `x${i}`).join(',')
  const rows: Array<[string, string]> = [
    ['random server name 1', 'servers=nosuch1'],
    ['random server name 2', 'servers=nosuch2'],
    ['one real server', 'servers=srv1'],
    [
      'all servers but one',
      `servers=${Array.from({ length: 199 }, (_, i) => `srv${i + 1}`).join(',')}`,
    ],
    ['2,500 names', `servers=${longList}`],
    ['2,500 tags', `tags=${longList}`],
  ]
  for (const [name, query] of rows) {
    let answer: { status: number; text: string } | undefined
    const stall = await measureStall(name, health, async () => {
      answer = await call(query)
    })
    console.log(
      `| ${name} | ${answer!.status} | ${stall.ms.toFixed(0)} | ${stall.stallMax.toFixed(0)} | ${stall.stallCpuMax.toFixed(0)} | ${stall.requests} | ${answer!.text.slice(0, 80).replace(/\|/g, '/')}`,
    )
  }
} finally {
  await server.close()
  await rm(indexDir, { recursive: true, force: true })
}
