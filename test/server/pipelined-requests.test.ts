/**
 * Pipelined requests are answered one at a time (pipelined-requests.ts): a client that sends
 * many requests on one connection and reads no answer makes the server hold one answer, not one
 * per request (before: 75 KB of `GET /openapi.json` held 1.2 GB), and one that reads gets every
 * answer, whole and in order.
 */
import { connect, type Socket } from 'node:net'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { listenApp, type ListeningApp } from '../helpers/listen-app.ts'
import { createTestApp } from './test-service.ts'

/** Requests sent at once; each answer (the OpenAPI document) is about 200 KB. */
const PIPELINED = 240

let listening: ListeningApp
/** Answers the app produced with status 200 (a route ran), and all it produced. */
const produced = { ok: 0, all: 0 }

beforeAll(async () => {
  const { app } = await createTestApp()
  listening = await listenApp(async (request, env) => {
    const response = await app.fetch(request, env)
    produced.all += 1
    if (response.status === 200) produced.ok += 1
    return response
  })
  // The document is made on the first request: not in the counts below.
  await fetch(`${listening.url}/openapi.json`).then((response) => response.arrayBuffer())
}, 60_000)

afterAll(() => listening?.close())

async function openPaused(): Promise<Socket> {
  const socket = connect(Number(new URL(listening.url).port), '127.0.0.1')
  await new Promise<void>((resolve, reject) =>
    socket.once('connect', resolve).once('error', reject),
  )
  socket.pause()
  return socket
}

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms))

/** Waits until `read()` has not changed for `quietMs` (at most `maxMs`); its last value. */
async function settled(read: () => number, quietMs = 1000, maxMs = 30_000): Promise<number> {
  const end = Date.now() + maxMs
  let last = read()
  let since = Date.now()
  while (Date.now() < end) {
    await sleep(100)
    const now = read()
    if (now !== last) {
      last = now
      since = Date.now()
    } else if (Date.now() - since >= quietMs) break
  }
  return last
}

/**
 * Reads HTTP/1.1 answers (each with a Content-Length) off `socket` until `count` came or it
 * closed: their statuses and bodies.
 */
function readAnswers(
  socket: Socket,
  count: number,
): Promise<Array<{ status: number; body: Buffer }>> {
  const list: Array<{ status: number; body: Buffer }> = []
  let pending = Buffer.alloc(0)
  return new Promise((resolve, reject) => {
    socket.on('data', (chunk: Buffer) => {
      pending = Buffer.concat([pending, chunk])
      for (;;) {
        const end = pending.indexOf('\r\n\r\n')
        if (end < 0) break
        const head = pending.subarray(0, end).toString('latin1')
        const length = Number(/\r\ncontent-length:\s*(\d+)/i.exec(head)?.[1])
        if (end + 4 + length > pending.length) break
        const body = Buffer.from(pending.subarray(end + 4, end + 4 + length))
        list.push({ status: Number(head.split(' ')[1]), body })
        pending = pending.subarray(end + 4 + length)
      }
      if (list.length >= count) resolve(list)
    })
    socket.once('error', reject).once('close', () => resolve(list))
    socket.resume()
  })
}

const request = 'GET /openapi.json HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n'

describe('pipelined requests', () => {
  it('are answered one at a time: unread answers do not pile up; read, all come in order', async () => {
    const before = { ...produced }
    const socket = await openPaused()
    socket.write(request.repeat(PIPELINED))
    // Unread: the OS's socket buffers (a few MB on loopback) hold some answers, the server one.
    const unread = (await settled(() => produced.ok)) - before.ok
    expect(unread).toBeGreaterThan(0)
    expect(unread).toBeLessThan(PIPELINED / 2)
    // Read: every answer, whole, in order.
    const received = await readAnswers(socket, PIPELINED)
    socket.destroy()
    expect(received).toHaveLength(PIPELINED)
    expect(received.every(({ status }) => status === 200)).toBe(true)
    expect(JSON.parse(received[0]!.body.toString('utf8'))).toHaveProperty('openapi')
    expect(received.every(({ body }) => body.equals(received[0]!.body))).toBe(true)
  }, 90_000)

  it('that wait when their client goes away reach no route', async () => {
    const socket = await openPaused()
    const before = { ...produced }
    socket.write(request.repeat(PIPELINED))
    const unread = (await settled(() => produced.ok)) - before.ok
    expect(unread).toBeLessThan(PIPELINED / 2)
    socket.destroy()
    // Every request is settled (the waiting ones ABORTED), none more through the route.
    const all = await settled(() => produced.all)
    expect(all - before.all).toBe(PIPELINED)
    expect(produced.ok - before.ok).toBeLessThanOrEqual(unread + 1)
  }, 90_000)
})
