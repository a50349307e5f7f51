/**
 * `server.sendTimeoutMs` (server/send-timeout.ts): a connection whose answer is not read is
 * closed once it has made no progress for the timeout (before: held with its answer forever);
 * a slow client that reads, and a request whose answer is still being made, are not.
 */
import { createServer, type Server } from 'node:http'
import { writeFile } from 'node:fs/promises'
import { connect, type AddressInfo, type Socket } from 'node:net'
import { join } from 'node:path'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { closeStalledSends } from '../../src/server/send-timeout.ts'
import { startServe, type RunningServe } from '../helpers/start-serve.ts'

/** An answer far larger than loopback's socket buffers (a few MiB each way). */
const BIG = Buffer.alloc(24 * 1024 * 1024, 120)
/**
 * The Node server's timeout: was 1500 ms with a reader of 6 MiB/s (progress about every 0.5 s at
 * worst); now 750 ms with one twice as fast, the same margin, half the waits.
 */
const TIMEOUT_MS = 750

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms))

async function request(port: number, path: string): Promise<Socket> {
  const socket = connect(port, '127.0.0.1')
  await new Promise<void>((resolve, reject) =>
    socket.once('connect', resolve).once('error', reject),
  )
  socket.write(`GET ${path} HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n`)
  return socket
}

/** Resumes `socket` and reads it until it ends or fails: the bytes and the error's code. */
function readToEnd(socket: Socket): Promise<{ bytes: number; text: string; error?: string }> {
  let bytes = 0
  let text = ''
  return new Promise((resolve) => {
    socket.on('data', (chunk: Buffer) => {
      bytes += chunk.length
      text += chunk.toString('latin1')
    })
    socket.once('error', (error: NodeJS.ErrnoException) =>
      resolve({ bytes, text, error: error.code }),
    )
    socket.once('end', () => resolve({ bytes, text }))
    socket.resume()
  })
}

/**
 * Reads `socket`'s answer of BIG 256 KiB at a time with a pause of 20 ms after each (about
 * 12 MiB/s: the 24 MiB answer takes about 2 s, the OS takes more of it every 0.25 s at most):
 * true once all of it came, false if it closed first.
 */
function readSlowly(socket: Socket): Promise<boolean> {
  let received = 0
  let sincePause = 0
  return new Promise<boolean>((resolve) => {
    socket.on('error', () => resolve(false))
    socket.on('close', () => resolve(false))
    socket.on('data', (chunk: Buffer) => {
      received += chunk.length
      sincePause += chunk.length
      // The head's bytes come first: the body's are all there once received passes its length.
      if (received > BIG.length) resolve(true)
      if (sincePause < 256 * 1024) return
      sincePause = 0
      socket.pause()
      setTimeout(() => socket.resume(), 20)
    })
  })
}

describe('closeStalledSends on a Node server', () => {
  let server: Server
  let port: number
  const closed: number[] = []

  beforeAll(async () => {
    server = createServer((request, response) => {
      if (request.url === '/big-then-block') {
        // The answer sent, then the event loop held 1 s, past the timeout (another request's
        // synchronous work) while the client reads it: the client never stalled, the server did.
        response.setHeader('content-length', BIG.length)
        response.end(BIG)
        setTimeout(() => {
          const until = performance.now() + 1000
          while (performance.now() < until);
        }, 300)
        return
      }
      if (request.url === '/slow-to-make') {
        // Nothing pending for three timeouts while the answer is made: not a stall.
        setTimeout(() => response.end('made'), 3 * TIMEOUT_MS)
        return
      }
      response.setHeader('content-length', BIG.length)
      response.end(BIG)
    })
    closeStalledSends(server, TIMEOUT_MS, {
      checkEveryMs: 100,
      onClose: (_socket, stalledMs) => closed.push(stalledMs),
    })
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve))
    port = (server.address() as AddressInfo).port
  })

  afterAll(async () => {
    server.closeAllConnections()
    await new Promise((resolve) => server.close(resolve))
  })

  it('closes a connection that never reads its large answer', async () => {
    const before = closed.length
    const socket = await request(port, '/big')
    socket.pause()
    const started = Date.now()
    while (closed.length === before && Date.now() - started < 10_000) await sleep(50)
    expect(closed.length).toBe(before + 1)
    expect(closed.at(-1)).toBeGreaterThanOrEqual(TIMEOUT_MS)
    // The client then finds it closed, with part of the answer: the reset dropped what the
    // server's OS still held (a plain close would have sent it on).
    const received = await readToEnd(socket)
    expect(received.bytes).toBeLessThan(BIG.length / 4)
  })

  it('keeps a slow client that reads (its answer takes several timeouts)', async () => {
    const socket = await request(port, '/big')
    const done = readSlowly(socket)
    const started = Date.now()
    expect(await done).toBe(true)
    expect(Date.now() - started).toBeGreaterThan(TIMEOUT_MS)
    expect(socket.destroyed).toBe(false)
    socket.destroy()
  }, 30_000)

  it('keeps a reading client whose answer waited behind a 1 s block of the event loop', async () => {
    const before = closed.length
    const socket = await request(port, '/big-then-block')
    // The slow reader's pace: the answer is still going out when the loop blocks.
    const done = readSlowly(socket)
    // Before: the first check after the block found no progress for 1 s (the writes completed
    // during it were not yet seen) and reset the connection.
    expect(await done).toBe(true)
    expect(closed.length).toBe(before)
    socket.destroy()
  }, 30_000)

  it('keeps a request whose answer is still being made', async () => {
    const before = closed.length
    const socket = await request(port, '/slow-to-make')
    let text = ''
    // Until the answer comes (3 timeouts on) or the connection closes: was a fixed 4 timeouts,
    // 1.5 s more than the answer takes, and short if a loaded machine runs its timer late.
    const closedFirst = await new Promise<boolean>((resolve) => {
      socket.on('data', (chunk: Buffer) => {
        text += chunk.toString()
        if (/\r\n\r\nmade$/.test(text)) resolve(false)
      })
      socket.once('close', () => resolve(true))
    })
    expect(closedFirst, text).toBe(false)
    expect(text).toMatch(/\r\n\r\nmade$/)
    expect(closed.length).toBe(before)
    socket.destroy()
  })
})

describe('closeStalledSends at its default interval: a block that begins right after a check', () => {
  /**
   * A server watched as `serve` watches (no checkEveryMs) whose event loop, once, right after the
   * second check since `arm()`, is held `blockMs` (another timer due at that moment doing
   * synchronous work): the check after the block runs before the I/O done meanwhile is seen.
   */
  async function blockedServer(timeoutMs: number, blockMs: number) {
    const closed: number[] = []
    const sockets: Socket[] = []
    /** Whether the answer was still going out when the block began (else the test proves nothing). */
    let blockedMidSend: boolean | undefined
    let checks = -1
    const realSetInterval = globalThis.setInterval
    // Only to time the block: each check of the watch below, then (once) the block.
    globalThis.setInterval = ((callback: () => void, ms: number) =>
      realSetInterval(() => {
        callback()
        if (checks >= 0 && ++checks === 2) {
          blockedMidSend = sockets.some((socket) => socket.writableLength > 0)
          const until = performance.now() + blockMs
          while (performance.now() < until);
        }
      }, ms)) as typeof setInterval
    const server = createServer((_request, response) => {
      response.setHeader('content-length', BIG.length)
      response.end(BIG)
    })
    try {
      closeStalledSends(server, timeoutMs, {
        onClose: (_socket, stalledMs) => closed.push(stalledMs),
      })
    } finally {
      globalThis.setInterval = realSetInterval
    }
    server.on('connection', (socket: Socket) => sockets.push(socket))
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve))
    const port = (server.address() as AddressInfo).port
    const stop = async () => {
      server.closeAllConnections()
      await new Promise((resolve) => server.close(resolve))
    }
    return { port, closed, arm: () => (checks = 0), blockedMidSend: () => blockedMidSend, stop }
  }

  // Before: 1 s (a check every timeout): the late check counted one whole interval, the timeout;
  // 1.5 s (a check every 1 s): a 1.8 s block is not past two intervals, so all of it was counted.
  it.each([
    [1000, 2500],
    [1500, 1800],
  ])(
    'keeps a client that reads at full speed (sendTimeoutMs %i, a block of %i ms)',
    async (timeoutMs, blockMs) => {
      const served = await blockedServer(timeoutMs, blockMs)
      try {
        const socket = await request(served.port, '/big')
        const done = readSlowly(socket)
        served.arm()
        expect(await done).toBe(true)
        expect(served.blockedMidSend()).toBe(true)
        expect(served.closed).toEqual([])
        socket.destroy()
      } finally {
        await served.stop()
      }
    },
    30_000,
  )
})

describe('toolsel serve: server.sendTimeoutMs', () => {
  let serve: RunningServe

  beforeAll(async () => {
    const dir = await import('node:fs/promises').then(({ mkdtemp }) =>
      mkdtemp(join(process.env.TMPDIR ?? '/tmp', 'toolsel-send-timeout-')),
    )
    const config = join(dir, 'config.json')
    await writeFile(config, JSON.stringify({ server: { sendTimeoutMs: 500 } }))
    serve = await startServe(['--config', config], { savedDemo: true })
  }, 120_000)

  afterAll(() => serve?.stop())

  it('closes a connection whose pipelined answers are never read', async () => {
    const port = Number(new URL(serve.url).port)
    const socket = connect(port, '127.0.0.1')
    await new Promise<void>((resolve, reject) =>
      socket.once('connect', resolve).once('error', reject),
    )
    socket.pause()
    // 200 KB answers: 100 of them fill loopback's buffers and leave one in the server.
    socket.write('GET /openapi.json HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n'.repeat(100))
    // Past the timeout (0.5 s) and its check (every 0.25 s), with 2 s to spare (was 1 s and
    // 3.5 s), before the idle keep-alive's 5 s could matter.
    await sleep(2500)
    const received = await readToEnd(socket)
    // Before: every answer came (the connection held its answer until it was read).
    expect(received.text.split('HTTP/1.1 200').length - 1).toBeLessThan(100)
  }, 40_000)
})
