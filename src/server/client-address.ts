/**
 * Who sent a request, behind a reverse proxy (`server.trustedProxies`, `server.forwardedHeader`).
 * Behind a proxy every request comes from the proxy's address, so the request-rate limit
 * (rate-limit.ts) counted every client in one bucket. Only when the connection's peer is a
 * configured proxy is its `X-Forwarded-For` (or RFC 7239 `Forwarded`) read: walking it from the
 * right, the client is the first address that is not itself a trusted proxy. Anything odd (no
 * such header, an entry that is no address, `unknown`, a header over MAX_FORWARDED_HEADER_CHARS,
 * more than MAX_FORWARDED_HOPS trusted hops) leaves the peer's address: never an error, and the
 * work is bounded. With no trusted proxies (the default) the header is never read.
 *
 * Only one header is read, the one the proxy writes: a proxy that appends to `X-Forwarded-For`
 * passes a client's own `Forwarded` on untouched (and the other way round), so reading both
 * would let a client name any address it likes.
 *
 * Proxy-addr (express's) was looked at: it reads `X-Forwarded-For` only, returns an entry that
 * is no address as the client, and walks the whole header; the part that fits, matching
 * addresses against CIDRs (IPv4-mapped IPv6 included), is Node's `net.BlockList`.
 * @module
 */
import type { IncomingMessage } from 'node:http'
import { BlockList, isIP } from 'node:net'

/** The most entries `server.trustedProxies` may have (each is one rule checked per request). */
export const MAX_TRUSTED_PROXIES = 256

/** The most hops of the header walked from the right; more trusted ones: the peer's address. */
export const MAX_FORWARDED_HOPS = 16

/** A longer forwarding header is not read (the peer's address is taken). */
export const MAX_FORWARDED_HEADER_CHARS = 4096

/** Addresses whose trust is remembered (client-address.ts: `isTrustedProxy`). */
const TRUSTED_CACHE_SIZE = 4096

/** A longer entry of it is no address. */
const MAX_ENTRY_CHARS = 128

export type ForwardedHeader = 'x-forwarded-for' | 'forwarded'

/**
 * Why `entry` (of `server.trustedProxies`) is not an address or CIDR (`10.0.0.0/8`,
 * `fd00::/8`, `192.0.2.7`), or undefined when it is one.
 */
export function trustedProxyError(entry: string): string | undefined {
  const parsed = parseTrustedProxy(entry)
  return typeof parsed === 'string' ? parsed : undefined
}

function parseTrustedProxy(
  entry: string,
): { address: string; prefix: number; family: 'ipv4' | 'ipv6' } | string {
  const slash = entry.indexOf('/')
  const address = slash < 0 ? entry : entry.slice(0, slash)
  const version = isIP(address)
  if (version === 0) return `"${entry.slice(0, 64)}" is not an IP address or CIDR (e.g. 10.0.0.0/8)`
  const bits = version === 4 ? 32 : 128
  const prefixText = slash < 0 ? String(bits) : entry.slice(slash + 1)
  const prefix = /^\d{1,3}$/.test(prefixText) ? Number(prefixText) : Number.NaN
  if (!(prefix >= 0 && prefix <= bits)) {
    return `"${entry.slice(0, 64)}" has no prefix length of 0-${bits} after its "/"`
  }
  const family = version === 4 ? 'ipv4' : 'ipv6'
  const everyOf = everyAddressOf(address, prefix, family)
  if (everyOf !== undefined) {
    return `"${entry.slice(0, 64)}" trusts every ${everyOf} address: any client could then write any address in the forwarding header (past the request rate and the connection limit). List the proxies' own addresses or subnets (e.g. 10.0.0.0/8)`
  }
  return { address, prefix, family }
}

/**
 * `IPv4`, `IPv6` or `IPv4 and IPv6` when the subnet holds every address of that family (a
 * subnet is contiguous: it holds all of one when it holds its first and last), else undefined.
 * `0.0.0.0/0`, `::/0` and `::ffff:0:0/96` (every IPv4 client, as a dual-stack server sees it)
 * made every client a trusted proxy, whose header names whatever address it likes (round 42).
 */
function everyAddressOf(
  address: string,
  prefix: number,
  family: 'ipv4' | 'ipv6',
): string | undefined {
  const list = new BlockList()
  list.addSubnet(address, prefix, family)
  const ipv4 = list.check('0.0.0.0', 'ipv4') && list.check('255.255.255.255', 'ipv4')
  const ipv6 =
    list.check('::', 'ipv6') && list.check('ffff:ffff:ffff:ffff:ffff:ffff:ffff:ffff', 'ipv6')
  if (ipv4 && ipv6) return 'IPv4 and IPv6'
  return ipv4 ? 'IPv4' : ipv6 ? 'IPv6' : undefined
}

/**
 * Why the entries of `server.trustedProxies` together trust every IPv4 or every IPv6 address
 * (`0.0.0.0/1` and `128.0.0.0/1`: no one of them trusts everything, the two do), or undefined
 * when they don't. Entries trustedProxyError refuses (no address or CIDR, or one that trusts
 * every address alone) are skipped: it names them. The coverage is computed from the ranges
 * (sorted, merged: at most MAX_TRUSTED_PROXIES of them), with IPv4 counted also through
 * `::ffff:0:0/96` (every IPv4 client, as a dual-stack server sees it) and the other way round, as
 * the proxy check matches them.
 */
export function trustedProxiesError(entries: readonly string[]): string | undefined {
  const { ipv4, ipv6 } = trustedShares(entries)
  const everyIpv4 = ipv4 === IPV4_SIZE
  const everyIpv6 = ipv6 === IPV6_SIZE
  if (!everyIpv4 && !everyIpv6) return undefined
  const family = everyIpv4 && everyIpv6 ? 'IPv4 and IPv6' : everyIpv4 ? 'IPv4' : 'IPv6'
  return `its ${entries.length} entries together trust every ${family} address: any client could then write any address in the forwarding header (past the request rate and the connection limit). List the proxies' own addresses or subnets (e.g. 10.0.0.0/8)`
}

/**
 * What `toolsel serve` warns of at start-up when the entries together trust more than half of
 * the IPv4 or the IPv6 addresses, but not all (trustedProxiesError refuses that): the share of
 * each family covered, counted as trustedProxiesError counts. Undefined when neither passes
 * half. Such a list is taken (round 43: a CDN's many ranges are legitimate, and no union rule
 * stops a determined admin), but a client at any address it trusts can name any address in the
 * forwarding header: likely a mistyped prefix (`/1` for `/16`).
 */
export function trustedProxiesWarning(entries: readonly string[]): string | undefined {
  const { ipv4, ipv6 } = trustedShares(entries)
  const wide = [
    ...(2n * ipv4 > IPV4_SIZE && ipv4 < IPV4_SIZE ? [`${share(ipv4, IPV4_SIZE)} of IPv4`] : []),
    ...(2n * ipv6 > IPV6_SIZE && ipv6 < IPV6_SIZE ? [`${share(ipv6, IPV6_SIZE)} of IPv6`] : []),
  ]
  if (wide.length === 0) return undefined
  return `its ${entries.length} ${entries.length === 1 ? 'entry trusts' : 'entries together trust'} ${wide.join(' and ')} as proxies: a client at any of those addresses can write any address in the forwarding header (past the request rate and the connection limit). Is a prefix mistyped (/1 for /16)? List the proxies' own addresses or subnets (e.g. 10.0.0.0/8)`
}

/** `part` of `whole` as a percentage, cut (not rounded) to 2 decimals: 99.99%, never 100%. */
function share(part: bigint, whole: bigint): string {
  const hundredths = (part * 10_000n) / whole
  return `${hundredths / 100n}.${String(hundredths % 100n).padStart(2, '0')}%`
}

/** How many IPv4 and IPv6 addresses the entries trust together (see trustedProxiesError). */
function trustedShares(entries: readonly string[]): { ipv4: bigint; ipv6: bigint } {
  const ipv4: Range[] = []
  const ipv6: Range[] = []
  for (const entry of entries.slice(0, MAX_TRUSTED_PROXIES)) {
    const parsed = parseTrustedProxy(entry)
    if (typeof parsed === 'string') continue
    const bits = parsed.family === 'ipv4' ? 32 : 128
    const value = addressValue(parsed.address)
    if (value === undefined) continue
    const size = 1n << BigInt(bits - parsed.prefix)
    const first = value - (value % size)
    const range: Range = [first, first + size - 1n]
    if (parsed.family === 'ipv4') {
      ipv4.push(range)
      ipv6.push([MAPPED_IPV4 + range[0], MAPPED_IPV4 + range[1]])
    } else {
      ipv6.push(range)
      const mapped = intersection(range, [MAPPED_IPV4, MAPPED_IPV4 + IPV4_LAST])
      if (mapped !== undefined) ipv4.push([mapped[0] - MAPPED_IPV4, mapped[1] - MAPPED_IPV4])
    }
  }
  return { ipv4: unionSize(ipv4), ipv6: unionSize(ipv6) }
}

type Range = [first: bigint, last: bigint]

const IPV4_SIZE = 1n << 32n
const IPV4_LAST = IPV4_SIZE - 1n
const IPV6_SIZE = 1n << 128n
/** `::ffff:0.0.0.0`: where IPv4 addresses lie as IPv6 ones (RFC 4291 section 2.5.5.2). */
const MAPPED_IPV4 = 0xffffn << 32n

function intersection(a: Range, b: Range): Range | undefined {
  const first = a[0] > b[0] ? a[0] : b[0]
  const last = a[1] < b[1] ? a[1] : b[1]
  return first <= last ? [first, last] : undefined
}

/** How many numbers the union of `ranges` holds (each counted once). */
function unionSize(ranges: Range[]): bigint {
  ranges.sort((a, b) => (a[0] < b[0] ? -1 : a[0] > b[0] ? 1 : 0))
  let size = 0n
  // The first number not yet counted.
  let next = 0n
  for (const [first, end] of ranges) {
    const from = first > next ? first : next
    if (end >= from) size += end - from + 1n
    if (end + 1n > next) next = end + 1n
  }
  return size
}

/** The number an IPv4 or IPv6 address (as isIP takes it, a zone after `%` ignored) stands for. */
function addressValue(text: string): bigint | undefined {
  const address = text.replace(/%.*$/, '')
  if (isIP(address) === 4) return ipv4Value(address)
  if (isIP(address) !== 6) return undefined
  const groups: number[][] = address.split('::').map((half) => {
    if (half === '') return []
    const parts = half.split(':')
    const words: number[] = []
    for (const part of parts) {
      if (part.includes('.')) {
        const value = Number(ipv4Value(part))
        words.push(Math.floor(value / 65536), value % 65536)
      } else words.push(Number.parseInt(part, 16))
    }
    return words
  })
  const [head, tail = []] = groups
  const words =
    groups.length === 1 ? head : [...head, ...Array(8 - head.length - tail.length).fill(0), ...tail]
  let value = 0n
  for (const word of words) value = (value << 16n) | BigInt(word)
  return value
}

function ipv4Value(address: string): bigint {
  let value = 0n
  for (const part of address.split('.')) value = (value << 8n) | BigInt(Number(part))
  return value
}

export interface ClientAddresses {
  /** Whether `address` (a connection's peer) is a trusted proxy. */
  isTrustedProxy(address: string): boolean
  /** The address a request comes from (see the module); undefined when its socket has none. */
  of(incoming: IncomingMessage): string | undefined
}

/** The peer's address: no proxy trusted, no header read. */
const PEER_ONLY: ClientAddresses = {
  isTrustedProxy: () => false,
  of: (incoming) => incoming.socket.remoteAddress,
}

/**
 * Client addresses with `trusted` proxies (addresses and CIDRs, checked by the config schema:
 * one that is neither throws) and the `header` they write.
 */
export function clientAddresses(
  trusted: readonly string[],
  header: ForwardedHeader = 'x-forwarded-for',
): ClientAddresses {
  if (trusted.length === 0) return PEER_ONLY
  const list = new BlockList()
  for (const entry of trusted) {
    const parsed = parseTrustedProxy(entry)
    if (typeof parsed === 'string') throw new Error(`server.trustedProxies: ${parsed}`)
    list.addSubnet(parsed.address, parsed.prefix, parsed.family)
  }
  const together = trustedProxiesError(trusted)
  if (together !== undefined) throw new Error(`server.trustedProxies: ${together}`)
  // BlockList.check costs ~7 µs a call (it makes a SocketAddress each time; Map.get: ~10 ns),
  // and a proxy's own address is checked on every request: the answers are remembered, for at
  // most TRUSTED_CACHE_SIZE addresses (then forgotten all at once).
  const known = new Map<string, boolean>()
  const isTrustedProxy = (address: string) => {
    let trusted = known.get(address)
    if (trusted !== undefined) return trusted
    const plain = address.replace(/%.*$/, '')
    const version = isIP(plain)
    trusted = version !== 0 && list.check(plain, version === 4 ? 'ipv4' : 'ipv6')
    if (known.size >= TRUSTED_CACHE_SIZE) known.clear()
    known.set(address, trusted)
    return trusted
  }
  const entryAddress = header === 'forwarded' ? forwardedFor : nodeAddress
  return {
    isTrustedProxy,
    of(incoming) {
      const peer = incoming.socket.remoteAddress
      if (peer === undefined || !isTrustedProxy(peer)) return peer
      const value = incoming.headers[header]
      if (typeof value !== 'string' || value.length > MAX_FORWARDED_HEADER_CHARS) return peer
      let end = value.length
      for (let hop = 0; hop < MAX_FORWARDED_HOPS; hop += 1) {
        const comma = end > 0 ? value.lastIndexOf(',', end - 1) : -1
        const address = entryAddress(value.slice(comma + 1, end))
        if (address === undefined) return peer
        // The first untrusted address from the right; all trusted: the left-most.
        if (!isTrustedProxy(address) || comma < 0) return address
        end = comma
      }
      return peer
    },
  }
}

/**
 * The address of an `X-Forwarded-For` entry: `192.0.2.7`, `2001:db8::1`, `[2001:db8::1]`,
 * with a `:port` after an IPv4 address or a bracketed IPv6 one; undefined for anything else
 * (`unknown`, a name, an empty entry).
 */
function nodeAddress(entry: string): string | undefined {
  let text = entry.trim()
  if (text.length === 0 || text.length > MAX_ENTRY_CHARS) return undefined
  if (text.startsWith('[')) {
    const close = text.indexOf(']')
    if (close < 0 || !/^(?::\d{1,5})?$/.test(text.slice(close + 1))) return undefined
    text = text.slice(1, close)
    return isIP(text) === 6 ? text : undefined
  }
  const colon = text.indexOf(':')
  if (colon >= 0 && colon === text.lastIndexOf(':')) {
    if (!/^\d{1,5}$/.test(text.slice(colon + 1))) return undefined
    text = text.slice(0, colon)
    return isIP(text) === 4 ? text : undefined
  }
  return isIP(text) === 0 ? undefined : text
}

/**
 * The address of a `Forwarded` element's `for=` (`for=192.0.2.7;proto=https`,
 * `for="[2001:db8::1]:4711"`); undefined when it has none, or an obfuscated one (`_hidden`,
 * `unknown`).
 */
function forwardedFor(element: string): string | undefined {
  if (element.length > MAX_ENTRY_CHARS * 2) return undefined
  for (const pair of element.split(';')) {
    const equals = pair.indexOf('=')
    if (equals < 0 || pair.slice(0, equals).trim().toLowerCase() !== 'for') continue
    let value = pair.slice(equals + 1).trim()
    if (value.startsWith('"')) {
      if (value.length < 2 || !value.endsWith('"') || value.includes('\\')) return undefined
      value = value.slice(1, -1)
    }
    return nodeAddress(value)
  }
  return undefined
}
