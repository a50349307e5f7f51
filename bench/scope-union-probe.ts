/**
 * Client-chosen unions of real servers (bench/README "Round 27"): one library of `<size>` tools
 * of 200 servers, served in process; one client asks `search_tools` over `<count>` distinct
 * unions of `<width>` servers each (`/mcp?library=big&servers=srvA,srvB,…`), one after another.
 * Per union it prints the status, the wall ms, the process's CPU ms (main thread and workers)
 * and the heap after it; then the totals. Each new union builds its own BM25 view.
 *
 *   node --import tsx bench/scope-union-probe.ts [size, default 50000] [count, default 40] [width, default 2]
 * @module
 */
import { mkdtemp, rm } from 'node:fs/promises'
import { loadavg, tmpdir } from 'node:os'
import { join } from 'node:path'
import { serveApp } from './serve-app.ts'

const size = Number(process.argv[2] ?? 50000)
const count = Number(process.argv[3] ?? 40)
const width = Number(process.argv[4] ?? 2)
const tools = Array.from({ length: size }, (_, i) => ({
  id: `srv${i % 200}.op_${i}`,
  name: `op_${i}`,
  namespace: `srv${i % 200}`,
  description: `Looks up record ${i} of service ${i % 200}: its status, owner and the last ${i % 7} changes.`,
  parameters: {
    type: 'object',
    properties: { id: { type: 'string', description: 'The record id' } },
  },
}))
const indexDir = await mkdtemp(join(tmpdir(), 'toolsel-scope-union-probe-'))
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
  console.log('put', put.status)
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
  await call('servers=srv199')
  console.log(`load ${loadavg()[0].toFixed(2)}; ${size} tools, ${count} unions of ${width} servers`)
  console.log('| union | status | answer | wall ms | CPU ms | heap MB |')
  console.log('| ---: | ---: | --- | ---: | ---: | ---: |')
  let wall = 0
  let cpu = 0
  const refused = { count: 0 }
  for (let union = 0; union < count; union += 1) {
    const servers = Array.from({ length: width }, (_, i) => `srv${(union * width + i) % 199}`)
    const started = performance.now()
    const before = process.cpuUsage()
    const answer = await call(`servers=${servers.join(',')}`)
    const used = process.cpuUsage(before)
    const ms = performance.now() - started
    const cpuMs = (used.user + used.system) / 1000
    wall += ms
    cpu += cpuMs
    const error = /"code\\?":\\?"([A-Z_]+)/.exec(answer.text)?.[1]
    if (error) refused.count += 1
    const heap = process.memoryUsage().heapUsed / 2 ** 20
    console.log(
      `| ${union + 1} | ${answer.status} | ${error ?? 'results'} | ${ms.toFixed(0)} | ${cpuMs.toFixed(0)} | ${heap.toFixed(0)} |`,
    )
  }
  console.log(
    `total: wall ${wall.toFixed(0)} ms, CPU ${cpu.toFixed(0)} ms, ${refused.count} of ${count} refused`,
  )
} finally {
  await server.close()
  await rm(indexDir, { recursive: true, force: true })
}
