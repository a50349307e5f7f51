/**
 * Who may call each route: the one table the auth middleware reads. Every route is listed here
 * explicitly; a route missing from the table needs the admin key, so a new route is safe before
 * anyone classifies it.
 *
 * - `public`: no key (probes, the API description, static pages);
 * - `read`: a read key or the admin key (queries: nothing changes state);
 * - `admin`: the admin key only (anything that writes: uploads, deletes, feedback, snapshots).
 * @module
 */

export type Access = 'public' | 'read' | 'admin'

export interface RouteAccess {
  /** HTTP method; `GET` covers `HEAD`. */
  method: string
  /** hono-style path: `:name` is one segment, a final `*` any rest (one segment or more). */
  path: string
  access: Access
}

export const ROUTE_ACCESS: readonly RouteAccess[] = [
  { method: 'GET', path: '/healthz', access: 'public' },
  { method: 'GET', path: '/readyz', access: 'public' },
  { method: 'GET', path: '/openapi.json', access: 'public' },
  { method: 'GET', path: '/metrics', access: 'read' },
  { method: 'POST', path: '/v1/select-tools', access: 'read' },
  { method: 'POST', path: '/v1/search-tools', access: 'read' },
  { method: 'GET', path: '/v1/libraries', access: 'read' },
  { method: 'GET', path: '/v1/libraries/:library', access: 'read' },
  { method: 'PUT', path: '/v1/libraries/:library', access: 'admin' },
  { method: 'DELETE', path: '/v1/libraries/:library', access: 'admin' },
  { method: 'POST', path: '/v1/libraries/:library/tools/batch', access: 'read' },
  { method: 'POST', path: '/v1/libraries/:library/examples', access: 'admin' },
  { method: 'POST', path: '/v1/feedback', access: 'admin' },
  { method: 'GET', path: '/v1/libraries/:library/tools/*', access: 'read' },
  { method: 'POST', path: '/v1/rewards/planner', access: 'read' },
  { method: 'POST', path: '/v1/rewards/selector', access: 'read' },
  { method: 'GET', path: '/v1/components', access: 'read' },
  { method: 'POST', path: '/v1/snapshots', access: 'admin' },
  // The playground page and the bench report: static HTML; the page's API calls need a key.
  { method: 'GET', path: '/', access: 'public' },
  { method: 'GET', path: '/ui', access: 'public' },
  { method: 'GET', path: '/ui/report', access: 'public' },
  { method: 'POST', path: '/mcp', access: 'read' },
  { method: 'GET', path: '/mcp', access: 'read' },
  { method: 'DELETE', path: '/mcp', access: 'read' },
]

/** Route patterns split into segments once, not on every request. */
const SEGMENTS = new Map<string, string[]>()

function segmentsOf(pattern: string): string[] {
  let segments = SEGMENTS.get(pattern)
  if (segments === undefined) SEGMENTS.set(pattern, (segments = pattern.split('/')))
  return segments
}

function matches(pattern: string, got: readonly string[]): boolean {
  const want = segmentsOf(pattern)
  for (let index = 0; index < want.length; index += 1) {
    const segment = want[index]
    if (segment === '*') return index === want.length - 1 && got.length > index && got[index] !== ''
    if (index >= got.length) return false
    if (segment.startsWith(':')) {
      if (got[index] === '') return false
    } else if (segment !== got[index]) return false
  }
  return want.length === got.length
}

/**
 * Rows of recent (method, path) pairs in ROUTE_ACCESS: the auth middleware and the access log
 * both look every request up, and most requests go to a few paths. Bounded (cleared when full):
 * paths are the client's.
 */
const ROWS = new Map<string, RouteAccess | null>()
const ROWS_LIMIT = 256
const MAX_CACHED_PATH = 256

function rowFor(method: string, path: string, table: readonly RouteAccess[]) {
  const cacheable = table === ROUTE_ACCESS && path.length <= MAX_CACHED_PATH
  const key = cacheable ? `${method} ${path}` : ''
  if (cacheable) {
    const cached = ROWS.get(key)
    if (cached !== undefined) return cached ?? undefined
  }
  const wanted = method === 'HEAD' ? 'GET' : method
  const trimmed = path.length > 1 && path.endsWith('/') ? path.slice(0, -1) : path
  const got = trimmed.split('/')
  const row = table.find((row) => row.method === wanted && matches(row.path, got))
  if (cacheable) {
    if (ROWS.size >= ROWS_LIMIT) ROWS.clear()
    ROWS.set(key, row ?? null)
  }
  return row
}

/** The access a request needs: its row in ROUTE_ACCESS, else `admin`. CORS preflights are public. */
export function accessFor(method: string, path: string, table = ROUTE_ACCESS): Access {
  if (method === 'OPTIONS') return 'public'
  return rowFor(method, path, table)?.access ?? 'admin'
}

/**
 * The methods ROUTE_ACCESS serves `path` with, as written (a trailing slash is not trimmed, as
 * the router does not trim it): for the 404 of a method or a slash no route serves.
 */
export function methodsOf(path: string): string[] {
  const got = path.split('/')
  return ROUTE_ACCESS.filter((row) => matches(row.path, got)).map((row) => row.method)
}

/**
 * The paths one segment below `path` that ROUTE_ACCESS serves with `method`, the last segment as
 * the route writes it (`batch`) or a placeholder (`<id>`, `<library>`): for the 404 of a path
 * that stops short (`GET /v1/libraries/demo/tools`).
 */
export function childPathsOf(method: string, path: string): string[] {
  const wanted = method === 'HEAD' ? 'GET' : method
  const got = path.split('/')
  const children: string[] = []
  for (const row of ROUTE_ACCESS) {
    const want = segmentsOf(row.path)
    if (row.method !== wanted || want.length !== got.length + 1) continue
    if (!matches(want.slice(0, -1).join('/'), got)) continue
    const last = want[want.length - 1]
    const shown = last === '*' ? '<id>' : last.startsWith(':') ? `<${last.slice(1)}>` : last
    children.push(`${path}/${shown}`)
  }
  return children
}

/**
 * The route template of a request (`/v1/libraries/:library`), for metrics labels and the access
 * log: never the raw path, so label values stay bounded. `unmatched` for paths of no route.
 */
export function routeTemplate(method: string, path: string): string {
  if (method === 'OPTIONS') return rowFor('GET', path, ROUTE_ACCESS)?.path ?? 'unmatched'
  return rowFor(method, path, ROUTE_ACCESS)?.path ?? 'unmatched'
}
