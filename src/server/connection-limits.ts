/**
 * Open connections per client address. `server.maxConnections` bounds them all, so one address
 * holding every slot (idle connections renewed every `headersTimeoutMs`, ~100 new connections a
 * second at the defaults, no key needed) locked every other client out (bench/README round 27).
 * A connection from an address that already holds `perAddress` open ones is answered 429 (or,
 * past a bound, closed at once: `limitConnectionsPerAddress`). IPv6 clients count per /64 (`addressGroup`): one host
 * is given a /64 and picks any address of it, so per address it held every slot all the same.
 * @module
 */
import type { IncomingMessage, Server, ServerResponse } from 'node:http'
import { isIPv4, isIPv6, type Socket } from 'node:net'

/**
 * What the limit counts `address` in: an IPv4 address itself (IPv4-mapped IPv6, `::ffff:1.2.3.4`,
 * included: a dual-stack server sees every IPv4 client so), an IPv6 address its /64
 * (`2001:db8:0:1::/64`), anything else as it is.
 */
export function addressGroup(address: string): string {
  const plain = address.replace(/%.*$/, '')
  if (!isIPv6(plain)) return address
  const groups = ipv6Groups(plain)
  if (groups.slice(0, 5).every((group) => group === 0) && groups[5] === 0xffff) {
    return [groups[6] >> 8, groups[6] & 255, groups[7] >> 8, groups[7] & 255].join('.')
  }
  return `${groups
    .slice(0, 4)
    .map((group) => group.toString(16))
    .join(':')}::/64`
}

/** The eight 16-bit groups of a valid IPv6 address (`::` expanded, a trailing IPv4 as two). */
function ipv6Groups(address: string): number[] {
  const parse = (part: string): number[] => {
    if (part === '') return []
    return part.split(':').flatMap((piece) => {
      if (!isIPv4(piece)) return [Number.parseInt(piece, 16)]
      const [a, b, c, d] = piece.split('.').map(Number)
      return [(a << 8) | b, (c << 8) | d]
    })
  }
  const [head, tail] = address.split('::')
  const first = parse(head)
  if (tail === undefined) return first
  const last = parse(tail)
  return [...first, ...new Array<number>(8 - first.length - last.length).fill(0), ...last]
}

/**
 * How long a connection over the limit is held for its 429 before it is closed: the answer is
 * written once Node has read the request head (answering at once, before the client's request
 * arrived, made the close a reset). 1 s was too short under load: on two cores at load 20, 1,000
 * concurrent POSTs got no 429 at all (each was closed before its head was read); 5 s: 256.
 */
export const OVER_LIMIT_ANSWER_MS = 5000

/**
 * Installs the limit on `server` (0: none). A connection over it gets a 429 RATE_LIMITED with
 * `Retry-After: 1` and `Connection: close` to its first request (`{error:{code,message}}`, not a
 * reset: round 35 saw 745 of 1,000 concurrent POSTs from one address reset), while the address
 * has fewer than `perAddress` of those being answered; each is held at most
 * `answerMs` (OVER_LIMIT_ANSWER_MS), and its request is never served. So one address holds at most twice
 * `perAddress` connections, and over that a connection is closed at once, as Node closes one
 * past `maxConnections`.
 */
export function limitConnectionsPerAddress(
  server: Server,
  perAddress: number,
  answerMs = OVER_LIMIT_ANSWER_MS,
): void {
  if (perAddress === 0) return
  const open = new Map<string, number>()
  const answering = new Map<string, number>()
  const overLimit = new WeakSet<Socket>()
  const count = (counts: Map<string, number>, address: string, socket: Socket) => {
    counts.set(address, (counts.get(address) ?? 0) + 1)
    socket.once('close', () => {
      const left = (counts.get(address) ?? 1) - 1
      if (left === 0) counts.delete(address)
      else counts.set(address, left)
    })
  }
  server.on('connection', (socket: Socket) => {
    const address = addressGroup(socket.remoteAddress ?? '')
    if ((open.get(address) ?? 0) < perAddress) return count(open, address, socket)
    if ((answering.get(address) ?? 0) >= perAddress) {
      socket.destroy()
      return
    }
    count(answering, address, socket)
    overLimit.add(socket)
    const timer = setTimeout(() => socket.destroy(), answerMs)
    timer.unref()
    socket.once('close', () => clearTimeout(timer))
  })
  // The app's listeners serve the requests of connections within the limit only.
  const serve = server.listeners('request') as Array<(...args: unknown[]) => void>
  server.removeAllListeners('request')
  server.on('request', (request: IncomingMessage, response: ServerResponse) => {
    if (!overLimit.has(request.socket)) {
      for (const listener of serve) listener.call(server, request, response)
      return
    }
    // After the listeners added later (serve's own, which may set a header) have run.
    setImmediate(() => {
      if (response.headersSent) return
      const body = JSON.stringify({
        error: {
          code: 'RATE_LIMITED',
          message: `This client address has ${perAddress} connections open (server.maxConnectionsPerAddress); send on one of them, or retry once some have closed.`,
        },
      })
      response.writeHead(429, {
        'content-type': 'application/json',
        'content-length': Buffer.byteLength(body),
        'retry-after': '1',
        connection: 'close',
      })
      response.end(body)
    })
  })
}
