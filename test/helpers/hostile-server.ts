/**
 * A hostile "toolsel service" over real HTTP, for the clients' attacker tests: the first path
 * segment picks the attack (`<url>/redirect-302/v1/libraries` → a 302 to `redirectTo`). Counts
 * what it wrote, so a test can tell the client stopped reading.
 */
import { createServer, type IncomingMessage, type ServerResponse } from 'node:http'
import type { AddressInfo } from 'node:net'

export interface HostileServer {
  url: string
  /** Bytes of body written by the last endless answer before the client hung up. */
  written(): number
  close(): Promise<void>
}

const CHUNK = Buffer.alloc(64 * 1024, 'a')

export async function startHostileServer(redirectTo: string): Promise<HostileServer> {
  let written = 0
  const timers = new Set<NodeJS.Timeout>()
  const endless = (response: ServerResponse) => {
    written = 0
    const pump = () => {
      // Writes until the socket's buffer is full, then again when it drains: as fast as the
      // client reads, for as long as it reads.
      while (!response.destroyed && response.write(CHUNK)) written += CHUNK.length
      if (!response.destroyed) written += CHUNK.length
    }
    response.on('drain', pump)
    pump()
  }
  const server = createServer((request: IncomingMessage, response: ServerResponse) => {
    const attack = request.url!.split('/')[1]
    request.resume()
    switch (attack) {
      case 'redirect-302':
      case 'redirect-307':
      case 'redirect-308':
        response.writeHead(Number(attack.slice(-3)), { location: `${redirectTo}/v1/libraries` })
        return response.end()
      case 'redirect-same-origin':
        response.writeHead(302, { location: '/elsewhere/v1/libraries' })
        return response.end()
      case 'huge-length':
        // Says 10 GB up front, then sends as long as the client reads.
        response.writeHead(200, {
          'content-type': 'application/json',
          'content-length': String(10 * 1024 ** 3),
        })
        return endless(response)
      case 'endless':
        response.writeHead(200, { 'content-type': 'application/json' }) // chunked
        return endless(response)
      case 'endless-error':
        response.writeHead(500, { 'content-type': 'application/json' })
        response.write('{"error":{"code":"INTERNAL","message":"')
        return endless(response)
      case 'drip': {
        // Headers at once, then one byte of a never-ending JSON string every 50 ms.
        response.writeHead(200, { 'content-type': 'application/json' })
        response.write('{"libraries":"')
        const timer = setInterval(() => response.write('a'), 50)
        timers.add(timer)
        response.on('close', () => (clearInterval(timer), timers.delete(timer)))
        return
      }
      default:
        response.writeHead(404, { 'content-type': 'application/json' })
        return response.end('{"error":{"code":"NOT_FOUND","message":"no such attack"}}')
    }
  })
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve))
  return {
    url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`,
    written: () => written,
    async close() {
      for (const timer of timers) clearInterval(timer)
      server.closeAllConnections()
      await new Promise((resolve) => server.close(resolve))
    },
  }
}

/** A plain server that records the headers of every request it gets (the redirect's target). */
export async function startRecordingServer(): Promise<{
  url: string
  requests: Array<{ method: string; url: string; headers: Record<string, unknown> }>
  close(): Promise<void>
}> {
  const requests: Array<{ method: string; url: string; headers: Record<string, unknown> }> = []
  const server = createServer((request, response) => {
    requests.push({ method: request.method!, url: request.url!, headers: { ...request.headers } })
    request.resume()
    response.writeHead(200, { 'content-type': 'application/json' })
    response.end('{"libraries":[]}')
  })
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve))
  return {
    url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`,
    requests,
    async close() {
      server.closeAllConnections()
      await new Promise((resolve) => server.close(resolve))
    },
  }
}
