/**
 * The request-rate limit (`server.readsPerMinute`, `server.writesPerMinute`): one keep-alive
 * connection could send requests as fast as the process answers them, writes that rebuild an
 * index included, and so starve every other client. Each client has a token bucket per route
 * class (TokenBuckets); a request past it is answered 429 RATE_LIMITED with `Retry-After`, before
 * its body is read. A client is the caller's API key (its principal object: never the key, and
 * keys given one name are still two clients) when keys are configured, else its address as the
 * connection limit groups it (`addressGroup`: an IPv6 client's /64); behind a trusted proxy
 * (`server.trustedProxies`), the address its forwarding header names (client-address.ts). The
 * public routes (probes, the API description, static pages) and CORS preflights are not limited.
 * Each `--workers` worker keeps its own buckets: a client may get N times the limit across the
 * workers.
 *
 * Every answer of a limited class says where its client stands, in the fields of the IETF draft
 * (draft-ietf-httpapi-ratelimit-headers-11): `RateLimit-Policy: "write";q=120;w=60` (the class,
 * its requests a minute) and `RateLimit: "write";r=<left>;t=<s>`, `r` the whole requests left
 * after this one, `t` the seconds until the next is added (within them no more than `r` pass;
 * on a 429, `Retry-After`).
 * @module
 */
import type { IncomingMessage } from 'node:http'
import type { MiddlewareHandler } from 'hono'
import { ToolselError } from '../errors.ts'
import { TokenBuckets } from '../token-buckets.ts'
import { OPEN_PRINCIPAL, type Principal } from './auth/api-keys.ts'
import { accessFor, routeTemplate } from './auth/route-access.ts'
import type { ClientAddresses } from './client-address.ts'
import { addressGroup } from './connection-limits.ts'
import { principalOf } from './middleware/auth.ts'

/** The route classes counted apart (and the metric's `class` label). */
export type RateClass = 'read' | 'write'

/**
 * Clients with a bucket, per class: past it the one seen least recently is forgotten, so a
 * flood from a million addresses holds 10,000 buckets (about 1 MB), not a million.
 */
export const MAX_RATE_CLIENTS = 10_000

export interface RateLimitOptions {
  readsPerMinute: number
  writesPerMinute: number
  /** Clients kept per class (default MAX_RATE_CLIENTS). */
  maxClients?: number
  /** A request's address (default: its connection's peer). */
  clientAddresses?: ClientAddresses
  /** Called for every request refused, with its class (the metric). */
  onLimited?: (routeClass: RateClass) => void
}

/** The class a request counts in: admin routes are writes; public ones are not counted. */
export function rateClassOf(method: string, path: string): RateClass | undefined {
  const access = accessFor(method, path)
  if (access === 'public') return undefined
  // A path of no route needs "admin" in the route table, but costs no more than a read.
  if (access === 'admin' && routeTemplate(method, path) !== 'unmatched') return 'write'
  return 'read'
}

/**
 * The middleware, after authentication (it reads the principal). Nothing when both limits are 0.
 * Requests not served by `@hono/node-server` (no socket in `c.env`) without keys have no address:
 * they pass.
 */
export function limitRequestRate(options: RateLimitOptions): MiddlewareHandler | undefined {
  const { readsPerMinute, writesPerMinute, maxClients = MAX_RATE_CLIENTS, onLimited } = options
  if (readsPerMinute === 0 && writesPerMinute === 0) return undefined
  const addresses = options.clientAddresses
  const perMinute = { read: readsPerMinute, write: writesPerMinute }
  const buckets = {
    read: new TokenBuckets<Principal | string>(readsPerMinute, { maxClients }),
    write: new TokenBuckets<Principal | string>(writesPerMinute, { maxClients }),
  }
  const policy = {
    read: `"read";q=${readsPerMinute};w=60`,
    write: `"write";q=${writesPerMinute};w=60`,
  }
  return async (c, next) => {
    const routeClass = rateClassOf(c.req.method, c.req.path)
    if (routeClass === undefined || perMinute[routeClass] === 0) return next()
    const principal = principalOf(c)
    let client: Principal | string
    if (principal === OPEN_PRINCIPAL) {
      const incoming = (c.env as { incoming?: IncomingMessage } | undefined)?.incoming
      if (incoming === undefined) return next()
      const address = addresses ? addresses.of(incoming) : incoming.socket.remoteAddress
      if (address === undefined) return next()
      client = addressGroup(address)
    } else client = principal
    const now = performance.now()
    const seconds = buckets[routeClass].take(client, 1, now)
    if (seconds === 0) {
      const tokens = buckets[routeClass].tokens(client, now)
      await next()
      c.header('ratelimit-policy', policy[routeClass])
      c.header('ratelimit', serviceLimit(routeClass, perMinute[routeClass], tokens))
      return
    }
    onLimited?.(routeClass)
    c.header('ratelimit-policy', policy[routeClass])
    c.header('ratelimit', `"${routeClass}";r=0;t=${seconds}`)
    const who = typeof client === 'string' ? 'This client address' : `The API key "${client.name}"`
    const setting = routeClass === 'read' ? 'server.readsPerMinute' : 'server.writesPerMinute'
    throw new ToolselError(
      'RATE_LIMITED',
      `${who} has no ${routeClass} requests left of its ${perMinute[routeClass].toLocaleString('en-US')} a minute (${setting}); retry in ${seconds} s.`,
      { details: { retryAfterSeconds: seconds } },
    )
  }
}

/**
 * The `RateLimit` field of a client holding `tokens` of `perMinute` after its request: `r` the
 * whole requests left, `t` the whole seconds (at least 1) until it holds one more, within which
 * no more than `r` pass.
 */
export function serviceLimit(routeClass: RateClass, perMinute: number, tokens: number): string {
  const left = Math.max(0, Math.floor(tokens))
  const next = Math.max(1, Math.floor(tokens) + 1)
  const seconds = Math.max(1, Math.ceil(((next - tokens) * 60) / perMinute))
  return `"${routeClass}";r=${left};t=${seconds}`
}
