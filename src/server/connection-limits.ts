/**
 * Open connections per client address. `server.maxConnections` bounds them all, so one address
 * holding every slot (idle connections renewed every `headersTimeoutMs`, ~100 new connections a
 * second at the defaults, no key needed) locked every other client out (bench/README round 27).
 * A connection from an address that already holds `perAddress` open ones has its requests
 * answered 429 by the app (`refuseOverLimit`), or, past a bound, is closed at once
 * (`createConnectionLimit`). IPv6 clients count per /64 (`addressGroup`): one host
 * is given a /64 and picks any address of it, so per address it held every slot all the same.
 * A trusted proxy (`server.trustedProxies`) is not counted: every client behind it comes from its
 * address, and a connection is counted when it opens, before a request's forwarding header could
 * name its client (`server.maxConnections` still bounds them all).
 * @module
 */
import type { IncomingMessage } from 'node:http'
import { isIPv4, isIPv6, type Socket } from 'node:net'
import type { MiddlewareHandler } from 'hono'
import { ToolselError } from '../errors.ts'

/**
 * What the limit counts `address` in: an IPv4 address itself (IPv4-mapped IPv6, `::ffff:1.2.3.4`,
 * included: a dual-stack server sees every IPv4 client so), an IPv6 address its /64
 * (`2001:db8:0:1::/64`), anything else as it is.
 */
export function addressGroup(address: string): string {
  // No IPv6 address is written without a colon: IPv4 (and anything else) is its own group.
  if (!address.includes(':')) return address
  if (address.length > MAX_KEPT_ADDRESS) return groupOf(address)
  let group = GROUPS.get(address)
  if (group === undefined) {
    group = groupOf(address)
    if (GROUPS.size >= GROUPS_KEPT) GROUPS.clear()
    GROUPS.set(address, group)
  }
  return group
}

/**
 * The groups of recent addresses with a colon (`addressGroup`): the rate limit groups every
 * request's address, and working out an IPv6 one (mapped IPv4 included: every IPv4 client of a
 * dual-stack server) took 9-13 µs (bench/README.md, "Round 56 … (perf20)"). Bounded (cleared
 * when full): a flood of new addresses costs what it did without it.
 */
const GROUPS = new Map<string, string>()
const GROUPS_KEPT = 1024
/** Longer than any IPv6 address with a zone a host names (the key stays small). */
const MAX_KEPT_ADDRESS = 64

/** Addresses `addressGroup` keeps the group of (for tests). */
export function addressGroupsKept(): number {
  return GROUPS.size
}

function groupOf(address: string): string {
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
 * How much of an over-limit request's body is read (and dropped) before its 429, so that a client
 * uploading it sees the answer: closing a connection with unread bytes resets it (RST), and the
 * reset can overtake the 429. Round 37 read 64 KiB: Python's urllib (sends the whole body, then
 * reads) got a reset for every 8 MiB upload (0 of 8 answered); reading on while the body comes,
 * within half the hold: 8 of 8 (bench/README, round 38).
 */
export const OVER_LIMIT_DISCARD_BYTES = 16 * 1024 * 1024

/**
 * How long that reading may wait for the body's next bytes (and it reads for at most half the
 * connection's hold, `answerMs`, in all): a body that comes slowly, or not at all
 * (`Expect: 100-continue` with none sent), is answered 429 then, not closed unanswered when the
 * hold ends.
 */
export const OVER_LIMIT_DISCARD_MS = 1000

/**
 * The fewest connections past the limit an address may have answered at once, whatever the limit:
 * with 1 (a quarter of a limit under 8), a client's next request past the limit was reset while
 * the previous 429's connection was still closing, and of two at once one was reset.
 */
export const MIN_ANSWERING = 4

/** The connections over the limit: their requests are answered 429 (`refuseOverLimit`). */
export interface ConnectionLimit {
  /** The connection's per-address limit, as configured. */
  readonly perAddress: number
  /** How many connections past it one address may have answered at once. */
  readonly answering: number
  /** How long a connection past it is held for its answer, at most (ms). */
  readonly answerMs: number
  /** The server's 'connection' listener: counts `socket`, marks or closes it past the limit. */
  admit(socket: Socket): void
  /** Whether `socket` came past the limit: its requests get 429, never the app's routes. */
  isOverLimit(socket: Socket): boolean
}

/**
 * The per-address limit (0: none, undefined returned). A connection from an address that holds
 * `perAddress` open ones is marked over the limit (its requests are answered 429 RATE_LIMITED by
 * `refuseOverLimit`, in the app) while the address has fewer than `answering` of those (default
 * a quarter of `perAddress`, at least MIN_ANSWERING); each is held at most `answerMs`
 * (OVER_LIMIT_ANSWER_MS). Past them a connection is closed at once, as Node closes one past
 * `maxConnections`. So one address holds at most `perAddress + answering` connections (320 at the
 * default 256, 5 at 1). Not a setting: the quarter bounds what one address holds past its limit,
 * and tests pass `answering` here.
 */
export function createConnectionLimit(
  perAddress: number,
  {
    answerMs = OVER_LIMIT_ANSWER_MS,
    answering = Math.max(MIN_ANSWERING, Math.floor(perAddress / 4)),
    exempt,
  }: {
    answerMs?: number
    answering?: number
    /** Peers not counted (`server.trustedProxies`: one carries every client behind it). */
    exempt?: (address: string) => boolean
  } = {},
): ConnectionLimit | undefined {
  if (perAddress === 0) return undefined
  const open = new Map<string, number>()
  const answered = new Map<string, number>()
  const overLimit = new WeakSet<Socket>()
  const count = (counts: Map<string, number>, address: string, socket: Socket) => {
    counts.set(address, (counts.get(address) ?? 0) + 1)
    socket.once('close', () => {
      const left = (counts.get(address) ?? 1) - 1
      if (left === 0) counts.delete(address)
      else counts.set(address, left)
    })
  }
  return {
    perAddress,
    answering,
    answerMs,
    admit(socket) {
      if (exempt !== undefined && exempt(socket.remoteAddress ?? '')) return
      const address = addressGroup(socket.remoteAddress ?? '')
      if ((open.get(address) ?? 0) < perAddress) return count(open, address, socket)
      if ((answered.get(address) ?? 0) >= answering) {
        socket.destroy()
        return
      }
      count(answered, address, socket)
      overLimit.add(socket)
      const timer = setTimeout(() => socket.destroy(), answerMs)
      timer.unref()
      socket.once('close', () => clearTimeout(timer))
    },
    isOverLimit: (socket) => overLimit.has(socket),
  }
}

/**
 * The app's first check after the request id and access log: a request on a connection over
 * `limit` is answered 429 RATE_LIMITED (`{error:{code,message}}` through the app's error handler,
 * `Retry-After: 1`, `Connection: close`) and goes no further. Up to OVER_LIMIT_DISCARD_BYTES of
 * its body are read and dropped first, while they come (a pause of OVER_LIMIT_DISCARD_MS ends it),
 * for at most half the hold.
 * Requests not served by `@hono/node-server` (no socket in
 * `c.env`) pass.
 */
export function refuseOverLimit(limit: ConnectionLimit): MiddlewareHandler {
  return async (c, next) => {
    const incoming = (c.env as { incoming?: IncomingMessage } | undefined)?.incoming
    if (incoming === undefined || !limit.isOverLimit(incoming.socket)) return next()
    await discardBody(
      incoming,
      OVER_LIMIT_DISCARD_BYTES,
      Math.min(OVER_LIMIT_DISCARD_MS, limit.answerMs / 2),
      limit.answerMs / 2,
    )
    c.header('connection', 'close')
    throw new ToolselError(
      'RATE_LIMITED',
      `This client address has ${limit.perAddress} connections open (server.maxConnectionsPerAddress); send on one of them, or retry once some have closed.`,
      { details: { retryAfterSeconds: 1 } },
    )
  }
}

/**
 * Reads `incoming`'s body until it ends, `bytes` of it were read, the request closes, none came
 * for `idleMs`, or `ms` passed.
 */
async function discardBody(
  incoming: IncomingMessage,
  bytes: number,
  idleMs: number,
  ms: number,
): Promise<void> {
  if (incoming.readableEnded || incoming.destroyed) return
  await new Promise<void>((resolve) => {
    let read = 0
    let timer = setTimeout(() => done(), idleMs)
    const overall = setTimeout(() => done(), ms)
    const done = () => {
      clearTimeout(timer)
      clearTimeout(overall)
      incoming.off('data', onData).off('end', done).off('close', done).off('error', done)
      incoming.pause()
      resolve()
    }
    const onData = (chunk: Buffer) => {
      read += chunk.length
      if (read >= bytes) return done()
      clearTimeout(timer)
      timer = setTimeout(() => done(), idleMs)
    }
    incoming.on('data', onData).on('end', done).on('close', done).on('error', done)
    incoming.resume()
  })
}
