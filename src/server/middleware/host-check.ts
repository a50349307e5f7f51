/**
 * DNS-rebinding and cross-site protection. A web page can make a browser send requests to
 * 127.0.0.1 under its own host name (DNS rebinding) or with its own Origin. Requests whose Host
 * is not an allowed name, or whose Origin is neither an allowed one nor the server's own host,
 * get 403 FORBIDDEN. Allowed hosts default to the loopback names when the server listens on a
 * loopback address.
 * @module
 */
import { isIPv4 } from 'node:net'
import type { MiddlewareHandler } from 'hono'
import { ToolselError } from '../../errors.ts'

const LOOPBACK_ADDRESSES = new Set(['127.0.0.1', '::1', 'localhost', '[::1]'])
const LOOPBACK_NAMES = ['localhost', '127.0.0.1', '[::1]']

/**
 * Whether `host` (`server.host`) is this machine only: `localhost`, `::1` or an IPv4 address in
 * 127.0.0.0/8. Exact: `127.0.0.256` (an octet over 255, no IPv4 address) was taken as one.
 */
export function isLoopbackAddress(host: string): boolean {
  return LOOPBACK_ADDRESSES.has(host) || (isIPv4(host) && host.startsWith('127.'))
}

/** The host names answered for `server.allowedHosts` and `server.host`; undefined = any. */
export function effectiveAllowedHosts(
  allowedHosts: readonly string[],
  bindHost: string,
): Set<string> | undefined {
  if (allowedHosts.includes('*')) return undefined
  if (allowedHosts.length > 0) return new Set(allowedHosts.map((host) => host.toLowerCase()))
  return isLoopbackAddress(bindHost) ? new Set(LOOPBACK_NAMES) : undefined
}

/** `example.com:8080` → `example.com`; `[::1]:8080` → `[::1]`. */
export function hostName(header: string): string {
  const host = header.trim().toLowerCase()
  if (host.startsWith('[')) return host.slice(0, host.indexOf(']') + 1)
  const colon = host.lastIndexOf(':')
  return colon >= 0 ? host.slice(0, colon) : host
}

export interface HostCheckOptions {
  allowedHosts?: Set<string>
  corsOrigins: readonly string[]
}

export function hostCheck(options: HostCheckOptions): MiddlewareHandler {
  const anyOrigin = options.corsOrigins.includes('*')
  const origins = new Set(options.corsOrigins)
  return async (c, next) => {
    // In-process requests (tests, app.request) carry no Host header: their URL names the host.
    const host = c.req.header('host') ?? new URL(c.req.url).host
    if (options.allowedHosts && !options.allowedHosts.has(hostName(host))) {
      throw new ToolselError(
        'FORBIDDEN',
        `Host "${host.slice(0, 200)}" is not served here (allowed: ${[...options.allowedHosts].join(', ')}); add it to server.allowedHosts.`,
      )
    }
    const origin = c.req.header('origin')
    if (origin !== undefined && !anyOrigin && !origins.has(origin)) {
      let sameHost = false
      try {
        sameHost = new URL(origin).host.toLowerCase() === host.toLowerCase()
      } catch {
        sameHost = false
      }
      if (!sameHost) {
        throw new ToolselError(
          'FORBIDDEN',
          `Origin "${origin.slice(0, 200)}" may not call this server; add it to server.corsOrigins.`,
        )
      }
    }
    await next()
  }
}
