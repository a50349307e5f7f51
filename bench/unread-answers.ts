/**
 * What clients that send requests and never read the answers make a real `toolsel serve` hold,
 * and for how long: `--clients` connections each pipeline `--requests` `GET /openapi.json` (no
 * key needed; about 200 KB an answer, so each fills loopback's socket buffers and leaves an answer
 * in the server) and read nothing. Printed per checkout: the server's RSS and its established
 * connections before, their peak, and at the end of the window (3 s after the last connection
 * closed, at most `--wait-s`), with the kernel's TCP buffer memory (/proc/net/sockstat, whole
 * machine: both ends' buffers), and when all were closed. This checkout runs with `server.sendTimeoutMs` = `--send-timeout-ms`; a
 * `--before DIR` checkout (built: its dist/) with its own defaults. Linux (/proc).
 *
 *   node --import tsx bench/unread-answers.ts [--clients 100] [--requests 40]
 *     [--send-timeout-ms 5000] [--wait-s 60] [--before /work/ci-base]
 * @module
 */
import { readFileSync } from 'node:fs'
import { mkdtemp, rm, writeFile } from 'node:fs/promises'
import { connect, type Socket } from 'node:net'
import { tmpdir } from 'node:os'
import { join, resolve } from 'node:path'
import { fileURLToPath } from 'node:url'
import { benchArgs, wholeNumber } from './bench-args.ts'

const { values } = benchArgs(import.meta.url, {
  options: {
    clients: { type: 'string', default: '100' },
    requests: { type: 'string', default: '40' },
    'send-timeout-ms': { type: 'string', default: '5000' },
    'wait-s': { type: 'string', default: '60' },
    before: { type: 'string' },
  },
})
const clients = wholeNumber(import.meta.url, '--clients', values.clients)
const requests = wholeNumber(import.meta.url, '--requests', values.requests)
const timeoutMs = wholeNumber(import.meta.url, '--send-timeout-ms', values['send-timeout-ms'])
const waitMs = wholeNumber(import.meta.url, '--wait-s', values['wait-s']) * 1000
// After the flags: a bad flag or --help loads none of the server code (bench-scripts-args.test.ts).
const { startServe } = await import('../test/helpers/start-serve.ts')

const sleep = (ms: number) => new Promise((done) => setTimeout(done, ms))

interface Sample {
  rssMb: number
  connections: number
  tcpMemMb: number
}

/** The server's resident memory, MiB. */
function rssMb(pid: number): number {
  const line = /VmRSS:\s+(\d+) kB/.exec(readFileSync(`/proc/${pid}/status`, 'utf8'))
  return Number(line?.[1] ?? 0) / 1024
}

/** Established TCP connections whose local port is `port` (IPv4 and IPv6). */
function established(port: number): number {
  const hex = `:${port.toString(16).toUpperCase().padStart(4, '0')}`
  let count = 0
  for (const file of ['/proc/net/tcp', '/proc/net/tcp6']) {
    for (const line of readFileSync(file, 'utf8').split('\n').slice(1)) {
      const [, local, , state] = line.trim().split(/\s+/)
      if (local?.endsWith(hex) && state === '01') count++
    }
  }
  return count
}

/** The kernel's TCP buffer memory (all sockets of the machine), MiB. */
function tcpMemMb(): number {
  const pages = /TCP:.* mem (\d+)/.exec(readFileSync('/proc/net/sockstat', 'utf8'))?.[1]
  return (Number(pages ?? 0) * 4096) / 2 ** 20
}

function sample(pid: number, port: number): Sample {
  return { rssMb: rssMb(pid), connections: established(port), tcpMemMb: tcpMemMb() }
}

async function open(port: number): Promise<Socket> {
  const socket = connect(port, '127.0.0.1')
  await new Promise((done, fail) => socket.once('connect', done).once('error', fail))
  return socket
}

const REQUEST = 'GET /openapi.json HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n'

async function measure(
  root: string,
  args: string[],
  clients: number,
  requests: number,
  waitMs: number,
): Promise<{ samples: Sample[]; closedS: number | undefined }> {
  // Its own fresh index directory, removed by `stop`.
  const serve = await startServe(args, { cwd: root })
  const { child } = serve
  const port = Number(new URL(serve.url).port)
  try {
    // The document is made once, on the first request: before the baseline.
    await fetch(`http://127.0.0.1:${port}/openapi.json`).then((answer) => answer.arrayBuffer())
    await sleep(500)
    const base = sample(child.pid!, port)
    const sockets = await Promise.all(Array.from({ length: clients }, () => open(port)))
    for (const socket of sockets) {
      socket.pause()
      socket.on('error', () => {})
      socket.write(REQUEST.repeat(requests))
    }
    // Peak: the most seen while the answers go out; after: at the end of the window, which
    // ends 3 s after the last connection closed or `waitMs` after the last one was written to.
    const started = performance.now()
    let peak = sample(child.pid!, port)
    let closedAt: number | undefined
    let after = peak
    while (performance.now() - started < waitMs) {
      await sleep(250)
      after = sample(child.pid!, port)
      peak = {
        rssMb: Math.max(peak.rssMb, after.rssMb),
        connections: Math.max(peak.connections, after.connections),
        tcpMemMb: Math.max(peak.tcpMemMb, after.tcpMemMb),
      }
      if (after.connections > 0) closedAt = undefined
      else closedAt ??= performance.now() - started
      if (closedAt !== undefined && performance.now() - started > closedAt + 3000) break
    }
    for (const socket of sockets) socket.destroy()
    return {
      samples: [base, peak, after],
      closedS: closedAt === undefined ? undefined : closedAt / 1000,
    }
  } finally {
    await serve.stop()
  }
}

async function main(): Promise<void> {
  const here = resolve(fileURLToPath(import.meta.url), '../..')
  const config = join(await mkdtemp(join(tmpdir(), 'toolsel-unread-config-')), 'config.json')
  await writeFile(config, JSON.stringify({ server: { sendTimeoutMs: timeoutMs } }))
  const runs: [string, string, string[]][] = [['this', here, ['--config', config]]]
  if (values.before !== undefined) runs.unshift(['before', resolve(values.before), []])
  console.log(
    `${clients} clients x ${requests} pipelined GET /openapi.json, never read; server.sendTimeoutMs ${timeoutMs} (this); window ${waitMs / 1000} s`,
  )
  console.log('| checkout | at | server RSS MiB | connections | kernel TCP MiB |')
  console.log('| -------- | ---- | -------------: | ----------: | -------------: |')
  for (const [name, root, args] of runs) {
    const { samples, closedS } = await measure(root, args, clients, requests, waitMs)
    const [base, peak, after] = samples
    for (const [when, at] of [
      ['before', base],
      ['peak', peak],
      ['end', after],
    ] as const)
      console.log(
        `| ${name} | ${when} | ${at.rssMb.toFixed(0)} | ${at.connections} | ${at.tcpMemMb.toFixed(0)} |`,
      )
    console.log(
      `| ${name} | all closed | ${closedS === undefined ? `no, after ${waitMs / 1000} s` : `after ${closedS.toFixed(1)} s`} | | |`,
    )
  }
  await rm(resolve(config, '..'), { recursive: true, force: true })
}

await main()
