/**
 * What pipelined requests that are never read make the server hold: one connection writes
 * `--requests` `GET /openapi.json` (no key needed; about 200 KB an answer) at once and reads
 * nothing; once the server stops answering, its answers made and its heap (used, with array
 * buffers) over its heap before are printed. Then a client that reads: 200 (or fewer
 * `--requests`) pipelined on one connection, time until every answer came (the cost of answering
 * them one at a time). Each app in its own process (`--serve ROOT`, internal), this checkout's
 * and, with `--before DIR`, DIR's (with `src/`), in turns.
 *
 *   node --import tsx bench/pipelined-flood.ts [--requests 1600] [--turns 3] [--before DIR]
 * @module
 */
import { fork, type ChildProcess } from 'node:child_process'
import { connect, type Socket } from 'node:net'
import { resolve } from 'node:path'
import { fileURLToPath } from 'node:url'
import { benchArgs, wholeNumber } from './bench-args.ts'
import { markdownTable } from './lib/measure.ts'

const { values } = benchArgs(import.meta.url, {
  options: {
    requests: { type: 'string', default: '1600' },
    turns: { type: 'string', default: '3' },
    before: { type: 'string' },
    serve: { type: 'string' },
  },
})

interface Measure {
  produced: number
  heapMb: number
}

/** The child: the app of checkout `root` on a free port; answers `measure` over IPC. */
async function serveChild(root: string): Promise<void> {
  const { serve } = await import('@hono/node-server')
  const { loadCheckoutApp } = await import('./perf/checkout-app.ts')
  const { app } = await loadCheckoutApp(root, {
    configure: (config) => (config.log.access = 'off'),
  })
  let produced = 0
  const server = serve({
    fetch: async (request: Request, env: unknown) => {
      const response = await app.fetch(request, env)
      produced += 1
      return response
    },
    port: 0,
    hostname: '127.0.0.1',
  })
  await new Promise((done) => server.once('listening', done))
  const heap = () => {
    const usage = process.memoryUsage()
    return usage.heapUsed + usage.arrayBuffers
  }
  let base = 0
  process.on('message', (message: string) => {
    if (message === 'base') {
      global.gc?.()
      base = heap()
      produced = 0
      process.send!('ok')
    } else if (message === 'measure') {
      process.send!({ produced, heapMb: (heap() - base) / 2 ** 20 })
    } else if (message === 'exit') process.exit(0)
  })
  process.send!({ port: (server.address() as { port: number }).port })
}

function ask<T>(child: ChildProcess, message: string): Promise<T> {
  return new Promise((done) => {
    child.once('message', (answer) => done(answer as T))
    child.send(message)
  })
}

const sleep = (ms: number) => new Promise((done) => setTimeout(done, ms))

async function open(port: number): Promise<Socket> {
  const socket = connect(port, '127.0.0.1')
  await new Promise((done) => socket.once('connect', done))
  return socket
}

const request = 'GET /openapi.json HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n'

/** Unread: answers made and heap growth once the count stops moving for 1 s. */
async function unread(child: ChildProcess, port: number, count: number): Promise<Measure> {
  await ask(child, 'base')
  const socket = await open(port)
  socket.pause()
  socket.write(request.repeat(count))
  let last: Measure = { produced: -1, heapMb: 0 }
  let peak = 0
  for (let quiet = 0; quiet < 10;) {
    await sleep(100)
    const now = await ask<Measure>(child, 'measure')
    peak = Math.max(peak, now.heapMb)
    quiet = now.produced === last.produced ? quiet + 1 : 0
    last = now
  }
  socket.destroy()
  await sleep(500)
  return { produced: last.produced, heapMb: peak }
}

/** Read: ms until all `count` pipelined answers came (counted by their status lines' ends). */
async function read(port: number, count: number): Promise<number> {
  const socket = await open(port)
  const started = performance.now()
  let length = 0
  await new Promise<void>((done) => {
    let seen = 0
    let bodyLength = 0
    socket.on('data', (chunk: Buffer) => {
      length += chunk.length
      if (bodyLength === 0) {
        const head = chunk.toString('latin1')
        const end = head.indexOf('\r\n\r\n')
        const match = /content-length:\s*(\d+)/i.exec(head.slice(0, end))
        if (end > 0 && match) bodyLength = Number(match[1]) + end + 4
      }
      seen = bodyLength > 0 ? Math.floor(length / bodyLength) : 0
      if (seen >= count) done()
    })
    socket.write(request.repeat(count))
  })
  socket.destroy()
  return performance.now() - started
}

async function main(): Promise<void> {
  const count = wholeNumber(import.meta.url, '--requests', values.requests)
  const turns = wholeNumber(import.meta.url, '--turns', values.turns)
  const script = fileURLToPath(import.meta.url)
  const trees = [['this', resolve(fileURLToPath(import.meta.url), '../..')]]
  if (values.before !== undefined) trees.push(['before', resolve(values.before)])
  const apps = await Promise.all(
    trees.map(async ([name, root]) => {
      const child = fork(script, ['--serve', root], {
        execArgv: ['--expose-gc', '--import', 'tsx'],
      })
      const { port } = await new Promise<{ port: number }>((done) =>
        child.once('message', (message) => done(message as { port: number })),
      )
      // The document is made on the first request.
      await fetch(`http://127.0.0.1:${port}/openapi.json`).then((answer) => answer.arrayBuffer())
      return { name, child, port }
    }),
  )
  const rows: string[][] = []
  for (let turn = 1; turn <= turns; turn++) {
    for (const app of turn % 2 === 1 ? apps : [...apps].reverse()) {
      const flood = await unread(app.child, app.port, count)
      const ms = await read(app.port, Math.min(count, 200))
      rows.push([
        String(turn),
        app.name,
        String(flood.produced),
        flood.heapMb.toFixed(0),
        ms.toFixed(0),
      ])
    }
  }
  const header = ['turn', 'app', 'unread: answers made', 'unread: heap growth MB']
  header.push(`read ${Math.min(count, 200)}: ms`)
  const align = ['---:', '---', '---:', '---:', '---:']
  console.log(markdownTable(header, rows, align).join('\n'))
  for (const app of apps) app.child.send('exit')
}

if (values.serve !== undefined) await serveChild(values.serve)
else await main()
