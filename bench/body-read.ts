/**
 * What reading a large upload body costs the server (round 50, srv55): one PUT
 * /v1/libraries/<name> of `--mib` MiB of spaces (plain ASCII, with a Content-Length; refused once
 * read: 413 past one string, else 400 IMPORT_FAILED, nothing written) sent over loopback in
 * 8 MiB writes, to each checkout's `toolsel serve` (a child process, `server.bodyLimitBytes`
 * 512 MiB), and to a bare `node:http` server that copies the body into one buffer and answers
 * 200 (the floor: Node's own parsing and the socket). Turns alternate between the servers, all
 * started once. Per server, medians: "sent ms", from the first write until the last byte was
 * handed to the socket (the server read it as it came: its read, within a socket buffer);
 * "answer ms", until the answer's end (the read and what follows it: for toolsel, the import
 * worker's checks of the bytes); "server CPU ms", the server process's CPU time over the PUT
 * (/proc, its threads included). Ratios to the bare server, and with `--before`, now / before.
 * `--route examples` (round 52): `POST /v1/libraries/demo/examples` of the same spaces instead
 * (over 4 MiB: checked on the examples-body thread, refused 400 malformed JSON). `--idle-ms N`:
 * a pause before each turn (11000: past a kept thread's 10 s idle, so every turn's thread is
 * started afresh, as for a body after 10 s of none).
 *
 *   npm run build   # and /work/ci-base built
 *   node --import tsx bench/body-read.ts [--before /work/ci-base] [--mib 512] [--turns 5]
 *     [--route put|examples] [--idle-ms 0]
 * @module
 */
import { spawn, type ChildProcess } from 'node:child_process'
import { request } from 'node:http'
import { mkdtemp, rm } from 'node:fs/promises'
import { loadavg, tmpdir } from 'node:os'
import { join, resolve } from 'node:path'
import { benchArgs, usageError, wholeNumber } from './bench-args.ts'

const { values } = benchArgs(import.meta.url, {
  options: {
    before: { type: 'string' },
    mib: { type: 'string', default: '512' },
    turns: { type: 'string', default: '5' },
    route: { type: 'string', default: 'put' },
    'idle-ms': { type: 'string', default: '0' },
  },
})
const turns = wholeNumber(import.meta.url, '--turns', values.turns)
const idleMs = wholeNumber(import.meta.url, '--idle-ms', values['idle-ms'])
const route = values.route
if (route !== 'put' && route !== 'examples') {
  usageError(import.meta.url, `--route is put or examples, not "${route}"`)
}
const [METHOD, PATH] =
  route === 'put' ? ['PUT', '/v1/libraries/bodyread'] : ['POST', '/v1/libraries/demo/examples']
const mib = wholeNumber(import.meta.url, '--mib', values.mib, 1)
if (mib > 512) throw new Error('--mib is at most 512 (the largest server.bodyLimitBytes)')
const { cpuMillis, startServe } = await import('./perf/serve-process.ts')
const { MAX_TEXT_CHARS } = await import('../src/read-text-file.ts')
// 512 MiB: MAX_TEXT_CHARS + 1, within the body limit (test/server/body-one-string.test.ts's body).
const BYTES = mib === 512 ? MAX_TEXT_CHARS + 1 : mib * 1024 * 1024
const CHUNK = Buffer.alloc(8 * 1024 * 1024, 0x20)

/** The bare server: the body copied into one buffer of its Content-Length, then 200. */
const BARE = `
const { createServer } = require('node:http')
const server = createServer((req, res) => {
  const bytes = new Uint8Array(Number(req.headers['content-length']))
  let at = 0
  req.on('data', (chunk) => { bytes.set(chunk, at); at += chunk.length })
  req.on('end', () => res.end(JSON.stringify({ bytes: at })))
})
server.listen(0, '127.0.0.1', () => console.log(server.address().port))
`

async function startBare(): Promise<{ server: ChildProcess; url: string }> {
  const server = spawn(process.execPath, ['-e', BARE], { stdio: ['ignore', 'pipe', 'inherit'] })
  const port = await new Promise<string>((done) =>
    server.stdout!.once('data', (chunk: Buffer) => done(chunk.toString().trim())),
  )
  return { server, url: `http://127.0.0.1:${port}` }
}

interface Turn {
  status: number
  sentMs: number
  ms: number
  cpuMs: number
}

/** One PUT (or POST, `--route examples`) of BYTES spaces: its status, ms to the last byte sent and to the answer's end. */
function put(url: string): Promise<Omit<Turn, 'cpuMs'>> {
  return new Promise((done, fail) => {
    const started = performance.now()
    let sentMs = Number.NaN
    const req = request(
      `${url}${PATH}`,
      {
        method: METHOD,
        headers: { 'content-type': 'application/json', 'content-length': String(BYTES) },
      },
      (response) => {
        response.resume()
        response.on('end', () =>
          done({ status: response.statusCode!, sentMs, ms: performance.now() - started }),
        )
        response.on('error', fail)
      },
    )
    req.on('error', fail)
    let left = BYTES
    const write = (): void => {
      while (left > 0) {
        const piece = left >= CHUNK.length ? CHUNK : CHUNK.subarray(0, left)
        left -= piece.length
        if (!req.write(piece)) {
          req.once('drain', write)
          return
        }
      }
      req.end(() => (sentMs = performance.now() - started))
    }
    write()
  })
}

const here = resolve(import.meta.dirname, '..')
const checkouts: Array<[string, string]> = [['now', here]]
if (values.before !== undefined) checkouts.push(['before', resolve(values.before)])
const work = await mkdtemp(join(tmpdir(), 'toolsel-body-read-'))
const servers: Array<{ label: string; server: ChildProcess; url: string }> = []
const load = loadavg()[0].toFixed(1)
const turnsOf = new Map<string, Turn[]>()
try {
  servers.push({ label: 'bare node:http', ...(await startBare()) })
  for (const [label, root] of checkouts) {
    const started = await startServe({
      root,
      indexDir: join(work, label),
      library: 'demo',
      env: { TOOLSEL_BODY_LIMIT_BYTES: String(512 * 1024 * 1024) },
    })
    servers.push({ label: `toolsel serve (${label})`, ...started })
  }
  for (let turn = 0; turn < turns; turn += 1) {
    for (const { label, url, server } of servers) {
      if (idleMs > 0) await new Promise((resolve) => setTimeout(resolve, idleMs))
      const cpuBefore = await cpuMillis(server.pid!)
      const measured = await put(url)
      const cpuMs = (await cpuMillis(server.pid!)) - cpuBefore
      turnsOf.set(label, [...(turnsOf.get(label) ?? []), { ...measured, cpuMs }])
    }
  }
} finally {
  for (const { server } of servers) server.kill('SIGTERM')
  await rm(work, { recursive: true, force: true })
}
const median = (list: number[]): number =>
  [...list].sort((a, b) => a - b)[Math.floor(list.length / 2)]
const medians = (label: string) => {
  const list = turnsOf.get(label)!
  return {
    statuses: [...new Set(list.map((turn) => turn.status))].join(', '),
    sentMs: median(list.map((turn) => turn.sentMs)),
    ms: median(list.map((turn) => turn.ms)),
    cpuMs: median(list.map((turn) => turn.cpuMs)),
  }
}
const bare = medians('bare node:http')
const then = turnsOf.has('toolsel serve (before)') ? medians('toolsel serve (before)') : undefined
console.log(
  `${METHOD} ${PATH} of ${BYTES.toLocaleString('en-US')} bytes over loopback, median of ${turns} (alternating${idleMs > 0 ? `, ${idleMs} ms idle before each` : ''}); load average ${load} -> ${loadavg()[0].toFixed(1)}`,
)
console.log(
  '| server | status | sent ms | answer ms | server CPU ms | sent / bare | answer / bare | CPU / bare | sent, answer, CPU / before |',
)
console.log('| --- | --- | ---: | ---: | ---: | ---: | ---: | ---: | ---: |')
for (const { label } of servers) {
  const row = medians(label)
  const ratio = (key: 'sentMs' | 'ms' | 'cpuMs', of: typeof row) => (row[key] / of[key]).toFixed(2)
  const vsBefore =
    then === undefined || label === 'bare node:http'
      ? ''
      : `${ratio('sentMs', then)}, ${ratio('ms', then)}, ${ratio('cpuMs', then)}`
  console.log(
    `| ${label} | ${row.statuses} | ${row.sentMs.toFixed(0)} | ${row.ms.toFixed(0)} | ${row.cpuMs.toFixed(0)} | ${ratio('sentMs', bare)} | ${ratio('ms', bare)} | ${ratio('cpuMs', bare)} | ${vsBefore} |`,
  )
}
