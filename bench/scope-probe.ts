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
import { loadavg } from 'node:os'
import { benchArgs, usageError } from './bench-args.ts'

const { positionals: args } = benchArgs(import.meta.url, { options: {}, allowPositionals: true })
// What it measures only once the flags are good: --help and a bad flag answer without it.
const { measureStall } = await import('./stall-probe.ts')
const size = Number(args[0] ?? 20000)
if (!Number.isFinite(size) || size < 1)
  usageError(import.meta.url, `<size> (first argument) must be a positive number, got "${args[0]}"`)
// The server code only once the argument is good: --help and a bad argument answer without it.
const { serveScopeLibrary } = await import('./scope-library.ts')
const server = await serveScopeLibrary(size)
const call = server.search
try {
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
}
