/**
 * API-key authentication: each request needs the access its route has in ROUTE_ACCESS (admin for
 * unlisted routes). Missing or unknown key: 401 UNAUTHORIZED; a read key on an admin route: 403
 * FORBIDDEN. With no key configured every request passes as the `open` principal (the server
 * then listens on loopback only, see `checkBindSafety`). The principal is `c.get('principal')`.
 * @module
 */
import type { Context, MiddlewareHandler } from 'hono'
import { ToolselError } from '../../errors.ts'
import { escapedPath } from '../../library/name-characters.ts'
import {
  OPEN_PRINCIPAL,
  PUBLIC_PRINCIPAL,
  assertKeyLibrary,
  keyDefaultLibrary,
  bearerKey,
  type LoadedLibraries,
  type ApiKeys,
  type Principal,
} from '../auth/api-keys.ts'
import { accessFor, childPathsOf, methodsOf, routeTemplate } from '../auth/route-access.ts'

export type AuthEnv = { Variables: { principal: Principal } }

export function authenticate(keys: ApiKeys): MiddlewareHandler<AuthEnv> {
  return async (c, next) => {
    const access = accessFor(c.req.method, c.req.path)
    if (!keys.enabled) {
      c.set('principal', OPEN_PRINCIPAL)
      return next()
    }
    const key = bearerKey(c.req.header('authorization'))
    const principal = key === undefined ? undefined : keys.lookup(key)
    if (principal) c.set('principal', principal)
    if (access === 'public') {
      if (!principal) c.set('principal', PUBLIC_PRINCIPAL)
      return next()
    }
    if (!principal) {
      c.header('WWW-Authenticate', 'Bearer realm="toolsel"')
      throw new ToolselError(
        'UNAUTHORIZED',
        key === undefined
          ? `${c.req.method} ${escapedPath(c.req.path)} needs an API key: send "Authorization: Bearer <key>".`
          : 'The API key is not valid.',
      )
    }
    if (access === 'admin' && principal.role !== 'admin') {
      // No route at all (a typo, a wrong method): the 404 or 405 the admin key gets, not a 403
      // that sends a reader after the admin key. Still refused: the route table's safety net holds.
      if (routeTemplate(c.req.method, c.req.path) === 'unmatched') {
        throw noRouteError(c.req.method, c.req.path)
      }
      throw new ToolselError(
        'FORBIDDEN',
        `${c.req.method} ${escapedPath(c.req.path)} needs the admin key; the key "${principal.name}" can only read.`,
      )
    }
    return next()
  }
}

/**
 * The app's answer for a method and path no route serves. A path served with other methods:
 * METHOD_NOT_ALLOWED (405) naming them, with an `Allow` header (`GET /v1/select-tools`: it takes
 * POST). Otherwise NOT_FOUND, naming the path without its trailing slash when that one is served,
 * or the routes one segment below a path that stops short (`GET /v1/libraries/demo/tools`:
 * `…/tools/<id>`).
 */
export function noRouteError(method: string, path: string): ToolselError {
  const shown = escapedPath(path)
  const methods = [...new Set(methodsOf(path))]
  if (methods.length > 0) {
    const allow =
      methods.includes('GET') && !methods.includes('HEAD') ? [...methods, 'HEAD'] : methods
    return new ToolselError(
      'METHOD_NOT_ALLOWED',
      `No route for ${method} ${shown}. ${shown} takes ${methods.join(', ')}, not ${method}. See /openapi.json.`,
      { details: { allow } },
    )
  }
  const slashless = path.length > 1 && path.endsWith('/') ? path.slice(0, -1) : undefined
  const wanted = method === 'HEAD' ? 'GET' : method
  const children = slashless === undefined ? childPathsOf(method, path) : []
  const hint =
    slashless !== undefined && methodsOf(slashless).includes(wanted)
      ? ` Did you mean ${method} ${escapedPath(slashless)} (no trailing slash)?`
      : children.length > 0
        ? ` Did you mean ${children.map((child) => `${method} ${escapedPath(child)}`).join(' or ')}?`
        : ''
  return new ToolselError('NOT_FOUND', `No route for ${method} ${shown}.${hint} See /openapi.json.`)
}

/** The caller, as the auth middleware found it (open when the app runs without it). */
export function principalOf(c: Context): Principal {
  return (c.get('principal') as Principal | undefined) ?? OPEN_PRINCIPAL
}

/**
 * Throws FORBIDDEN when the caller's key is limited to other libraries; with `loaded`, also
 * UNKNOWN_LIBRARY for one of its libraries that is not loaded, naming only the key's own
 * (`assertKeyLibrary`).
 */
export function assertLibraryAccess(
  principal: Principal,
  name: string,
  loaded?: LoadedLibraries,
): void {
  assertKeyLibrary(principal, name, loaded)
}

/**
 * The library a request works on: the one it names, else the server's default when the caller's
 * key may use it, else the key's first library (`keyDefaultLibrary`).
 */
export function libraryFor(
  principal: Principal,
  named: string | undefined,
  serverDefault: string,
): string {
  return named ?? keyDefaultLibrary(principal, serverDefault)
}

/** Throws FORBIDDEN for keys limited to MCP servers or tags on routes that can't apply the scope. */
export function assertUnscoped(principal: Principal, what: string): void {
  if (principal.servers.length > 0 || principal.tags.length > 0) {
    throw new ToolselError(
      'FORBIDDEN',
      `The API key "${principal.name}" is limited to some MCP servers or tags; ${what} is not available to it. Use /mcp, which applies the scope.`,
    )
  }
}
