/**
 * `toolsel serve` as an operator runs it (a real child process): SIGTERM under load resets no
 * request and does not wait for idle keep-alive connections; slow clients are cut by the header
 * and request timeouts while others are served.
 */
import { Agent, request as httpRequest } from 'node:http'
import { connect, type Socket } from 'node:net'
import { mkdtemp, rm, writeFile } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { afterEach, describe, expect, it, vi } from 'vitest'
import { OVER_LIMIT_ANSWER_MS } from '../../src/server/connection-limits.ts'
import { startServe, type RunningServe } from '../helpers/start-serve.ts'
import { callMcpTool } from '../helpers/mcp-fetch.ts'

const running: RunningServe[] = []
const dirs: string[] = []
afterEach(async () => {
  for (const serve of running.splice(0)) await serve.stop()
  for (const dir of dirs.splice(0)) await rm(dir, { recursive: true, force: true })
})

async function configFile(config: unknown): Promise<string> {
  const dir = await mkdtemp(join(tmpdir(), 'toolsel-ops-'))
  dirs.push(dir)
  const file = join(dir, 'config.json')
  await writeFile(file, JSON.stringify(config))
  return file
}

interface Outcome {
  id: string
  status?: number
  error?: string
}

let requests = 0

/** One POST over `agent`; resolves with the status or the error code, never rejects. */
function search(url: string, agent: Agent): Promise<Outcome> {
  const id = `load-${(requests += 1)}`
  const { hostname, port } = new URL(url)
  const body = JSON.stringify({ query: 'send an email to a colleague', k: 5 })
  return new Promise((resolve) => {
    const request = httpRequest(
      {
        hostname,
        port,
        method: 'POST',
        path: '/v1/search-tools',
        agent,
        headers: {
          'content-type': 'application/json',
          'content-length': Buffer.byteLength(body),
          'x-request-id': id,
        },
      },
      (response) => {
        response.resume()
        response.on('end', () => resolve({ id, status: response.statusCode }))
        response.on('error', (error: NodeJS.ErrnoException) =>
          resolve({ id, error: error.code ?? error.message }),
        )
      },
    )
    request.on('error', (error: NodeJS.ErrnoException) =>
      resolve({ id, error: error.code ?? error.message }),
    )
    request.end(body)
  })
}

describe('toolsel serve: shutdown and slow clients', () => {
  it('SIGTERM under load answers every request it received and closes idle keep-alive sockets at once', async () => {
    // Keep-alive and grace far longer than the shutdown may take: waiting for either would show.
    const config = await configFile({
      server: { keepAliveTimeoutMs: 60_000, shutdownGraceMs: 30_000 },
    })
    const serve = await startServe(['--config', config], { savedDemo: true })
    running.push(serve)

    // Idle keep-alive connections: one request each, then left open.
    const idleAgent = new Agent({ keepAlive: true, maxSockets: 8 })
    const warmUp = await Promise.all(Array.from({ length: 8 }, () => search(serve.url, idleAgent)))
    expect(warmUp.every((outcome) => outcome.status === 200)).toBe(true)

    // 32 clients sending back to back over keep-alive connections until the server is gone.
    const busyAgent = new Agent({ keepAlive: true, maxSockets: 32 })
    const outcomes: Outcome[] = []
    let stopping = false
    const worker = async () => {
      for (;;) {
        const outcome = await search(serve.url, busyAgent)
        outcomes.push(outcome)
        if (outcome.error === 'ECONNREFUSED') return
        if (outcome.error && stopping) return
      }
    }
    const workers = Array.from({ length: 32 }, worker)
    // Under load until the 50 answers asserted below came back (was a fixed 1.5 s, which a loaded
    // host could end first), every client with a request in flight when SIGTERM lands; an error
    // or other status ends the wait (the asserts below then name it).
    while (
      outcomes.filter((outcome) => outcome.status === 200).length <= 50 &&
      outcomes.every((outcome) => outcome.status === 200)
    )
      await new Promise((resolve) => setTimeout(resolve, 10))
    stopping = true
    const started = performance.now()
    await serve.stop()
    const shutdownMs = performance.now() - started
    await Promise.all(workers)
    idleAgent.destroy()
    busyAgent.destroy()

    const answered = outcomes.filter((outcome) => outcome.status === 200)
    expect(answered.length).toBeGreaterThan(50)
    // What the server received and answered: its access log (one JSON line per request) and the
    // shutdown report (responses that closed unfinished after SIGTERM: none).
    const logged = new Map<string, number>()
    for (const line of serve.logs().split('\n')) {
      if (!line.startsWith('{')) continue
      const record = JSON.parse(line) as { msg?: string; requestId: string; status: number }
      if (record.msg === 'request') logged.set(record.requestId, record.status)
    }
    expect(serve.logs()).toMatch(/Stopped \{"answeredWhileStopping":\d+,"unfinished":0\}/)
    for (const outcome of outcomes) {
      if (outcome.status === 200) continue
      // A connection refused, or reset before the server read the request (still in the listen
      // backlog when it stopped listening): never received, so never answered.
      expect(['ECONNREFUSED', 'ECONNRESET']).toContain(outcome.error)
      expect(logged.has(outcome.id), `${outcome.id} was received but not answered`).toBe(false)
    }
    for (const [id, status] of logged) {
      if (!id.startsWith('load-')) continue
      expect(status).toBe(200)
      const outcome = [...warmUp, ...outcomes].find((candidate) => candidate.id === id)
      expect(outcome?.status, id).toBe(200)
    }
    expect(shutdownMs).toBeLessThan(5000)
    expect(serve.logs()).not.toContain('Grace period over')
  }, 60_000)

  it('cuts clients that send headers or bodies at 1 byte/s, and keeps serving the others', async () => {
    const config = await configFile({
      server: { headersTimeoutMs: 1000, requestReceiveTimeoutMs: 2000 },
    })
    const serve = await startServe(['--config', config], { savedDemo: true })
    running.push(serve)
    const { hostname, port } = new URL(serve.url)
    const sockets: Array<{ socket: Socket; closedAt?: number; received: string }> = []
    const opened = performance.now()
    const trickle = (prefix: string, rest: string) => {
      const socket = connect(Number(port), hostname)
      const entry: { socket: Socket; closedAt?: number; received: string } = {
        socket,
        received: '',
      }
      sockets.push(entry)
      socket.on('data', (chunk) => (entry.received += chunk.toString()))
      socket.on('error', () => undefined)
      socket.on('close', () => (entry.closedAt = performance.now() - opened))
      socket.write(prefix)
      let index = 0
      const timer = setInterval(() => {
        if (socket.destroyed || index >= rest.length) return clearInterval(timer)
        socket.write(rest[index++])
      }, 1000)
      socket.on('close', () => clearInterval(timer))
    }
    // 40 clients trickling their headers, 10 with complete headers trickling a body.
    for (let index = 0; index < 40; index += 1) {
      trickle('G', 'ET /healthz HTTP/1.1\r\nHost: localhost\r\n\r\n')
    }
    const body = JSON.stringify({ query: 'weather in Paris' })
    for (let index = 0; index < 10; index += 1) {
      trickle(
        `POST /v1/search-tools HTTP/1.1\r\nHost: localhost\r\nContent-Type: application/json\r\nContent-Length: ${body.length}\r\n\r\n`,
        body,
      )
    }
    // Meanwhile a normal client is served.
    const health = await fetch(`${serve.url}/healthz`)
    expect(health.status).toBe(200)

    const deadline = performance.now() + 10_000
    while (sockets.some((entry) => entry.closedAt === undefined)) {
      if (performance.now() > deadline) break
      await new Promise((resolve) => setTimeout(resolve, 100))
    }
    const open = sockets.filter((entry) => entry.closedAt === undefined)
    expect(open).toHaveLength(0)
    const headerClients = sockets.slice(0, 40)
    const bodyClients = sockets.slice(40)
    // headersTimeoutMs 1 s (checked every second), requestReceiveTimeoutMs 2 s: all cut by 5 s.
    for (const entry of sockets) expect(entry.closedAt!).toBeLessThan(5000)
    for (const entry of [...headerClients, ...bodyClients]) {
      expect(entry.received === '' || entry.received.startsWith('HTTP/1.1 408')).toBe(true)
    }
    expect(bodyClients.some((entry) => entry.received.startsWith('HTTP/1.1 408'))).toBe(true)
    expect((await fetch(`${serve.url}/healthz`)).status).toBe(200)
  }, 60_000)

  it('keeps one address from holding every connection: past maxConnectionsPerAddress its new idle ones close, other addresses are served', async () => {
    // Round 27 (sec13): idle connections from one address, renewed every headersTimeoutMs, held
    // every one of maxConnections and no other client got an answer.
    const config = await configFile({ server: { maxConnections: 20, maxConnectionsPerAddress: 8 } })
    const serve = await startServe(['--config', config], { savedDemo: true })
    running.push(serve)
    const { hostname, port } = new URL(serve.url)
    const idle: Array<{ socket: Socket; closed: boolean }> = []
    for (let index = 0; index < 20; index += 1) {
      const entry = { socket: connect(Number(port), hostname), closed: false }
      entry.socket.on('error', () => undefined)
      entry.socket.on('close', () => (entry.closed = true))
      idle.push(entry)
    }
    await Promise.all(
      idle.map(
        ({ socket }) =>
          new Promise<void>((resolve) => {
            socket.once('connect', () => resolve())
            socket.once('close', () => resolve())
          }),
      ),
    )
    // Those past the limit that the address may have answered (429) once they send a request are
    // closed after OVER_LIMIT_ANSWER_MS when they send none; the others at once.
    await new Promise((resolve) => setTimeout(resolve, OVER_LIMIT_ANSWER_MS + 300))
    // A client of another loopback address is answered.
    const status = await new Promise<number | string>((resolve) => {
      const request = httpRequest(
        { host: hostname, port, path: '/healthz', localAddress: '127.0.0.2', agent: false },
        (response) => {
          response.resume()
          resolve(response.statusCode ?? 0)
        },
      )
      request.on('error', (error: NodeJS.ErrnoException) => resolve(error.code ?? 'error'))
      request.end()
    })
    expect(status).toBe(200)
    expect(idle.filter((entry) => !entry.closed)).toHaveLength(8)
    for (const { socket } of idle) socket.destroy()
  }, 60_000)

  it('loads the MCP tokenizer off the ready path, and the first MCP call does not stall others', async () => {
    const serve = await startServe([], { savedDemo: true })
    running.push(serve)
    // Ready without the tokenizer: it loads in a worker thread on the first count.
    expect(serve.logs()).toContain('Ready:')
    expect(serve.logs()).not.toContain('Token counting:')

    // The first MCP call that counts tokens, with /healthz polled back to back meanwhile.
    let done = false
    let longest = 0
    const poll = (async () => {
      let last = performance.now()
      while (!done) {
        await (await fetch(`${serve.url}/healthz`)).arrayBuffer()
        const now = performance.now()
        longest = Math.max(longest, now - last)
        last = now
      }
    })()
    const response = await callMcpTool(`${serve.url}/mcp`, 'search_tools', {
      query: 'send an email',
    })
    const answer = (await response.json()) as { result: { structuredContent: { tokens: unknown } } }
    done = true
    await poll
    expect(answer.result.structuredContent.tokens).toBeDefined()
    // Logged before the answer; its stderr line may reach us a moment after it.
    await vi.waitFor(() => expect(serve.logs()).toMatch(/Token counting: .* ms, in a worker/), {
      timeout: 5000,
    })
    // The load's own time, measured in its worker: on the main thread it would have held the
    // event loop that long (the Qwen3 load is synchronous; 1-4 s), so /healthz would have waited
    // at least that long at once (a load timed on the main thread instead: gap 3,681 ms, load
    // 3,603). Compared with it, not with a fixed second: both stretch alike on a loaded machine
    // (< 1,000 ms failed once at load 14, a 1,448 ms gap with the load in its worker).
    const loadMs = Number(
      /Token counting: .* \(loaded in ([\d,]+) ms/.exec(serve.logs())![1].replaceAll(',', ''),
    )
    expect(
      longest,
      `longest /healthz gap ${longest.toFixed(0)} ms, the load ${loadMs} ms`,
    ).toBeLessThan(loadMs / 2)
  }, 60_000)
})
