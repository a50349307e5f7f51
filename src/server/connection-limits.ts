/**
 * Open connections per client address. `server.maxConnections` bounds them all, so one address
 * holding every slot (idle connections renewed every `headersTimeoutMs`, ~100 new connections a
 * second at the defaults, no key needed) locked every other client out (bench/README round 27).
 * A connection from an address that already holds `perAddress` open ones is closed at once, as
 * Node closes one past `maxConnections`. IPv6 clients count per /64 (`addressGroup`): one host
 * is given a /64 and picks any address of it, so per address it held every slot all the same.
 * @module
 */
import type { Server } from 'node:http'
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

/** Installs the limit on `server` (0: none). */
export function limitConnectionsPerAddress(server: Server, perAddress: number): void {
  if (perAddress === 0) return
  const open = new Map<string, number>()
  server.on('connection', (socket: Socket) => {
    const address = addressGroup(socket.remoteAddress ?? '')
    const count = open.get(address) ?? 0
    if (count >= perAddress) {
      socket.destroy()
      return
    }
    open.set(address, count + 1)
    socket.once('close', () => {
      const left = (open.get(address) ?? 1) - 1
      if (left === 0) open.delete(address)
      else open.set(address, left)
    })
  })
}
