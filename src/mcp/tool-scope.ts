/**
 * Which part of a library one MCP client may see: a set of servers (tool namespaces) and a set
 * of tags. Applied to search, select, schema loading and calls alike, so a scoped client can
 * neither find nor call another server's tools.
 * @module
 */
import type { Tool } from '../library/tool.ts'

export interface ToolScope {
  /** Tool namespaces (MCP server names) allowed; empty = every server. */
  servers: readonly string[]
  /** Tags allowed (a tool needs at least one of them); empty = every tag. */
  tags: readonly string[]
}

export const UNSCOPED: ToolScope = Object.freeze({ servers: [], tags: [] })

/** The HTTP headers an MCP client can send instead of the query parameters. */
export const SCOPE_HEADERS = { servers: 'x-toolsel-servers', tags: 'x-toolsel-tags' } as const

/** `"github, slack,,"` → `['github', 'slack']`; `undefined` stays `undefined` (not given). */
export function parseList(value: string | undefined | null): string[] | undefined {
  if (value === undefined || value === null) return undefined
  return value
    .split(',')
    .map((item) => item.trim())
    .filter((item) => item.length > 0)
}

export function isUnscoped(scope: ToolScope): boolean {
  return scope.servers.length === 0 && scope.tags.length === 0
}

/** Whether a tool is visible in `scope`. */
export function inScope(tool: Tool, scope: ToolScope): boolean {
  if (scope.servers.length > 0 && !scope.servers.includes(tool.namespace ?? '')) return false
  if (scope.tags.length > 0 && !(tool.tags ?? []).some((tag) => scope.tags.includes(tag)))
    return false
  return true
}

/** Whether a server (its name and tags) is visible in `scope`, as its tools are. */
export function serverInScope(name: string, tags: readonly string[], scope: ToolScope): boolean {
  return (
    (scope.servers.length === 0 || scope.servers.includes(name)) &&
    (scope.tags.length === 0 || tags.some((tag) => scope.tags.includes(tag)))
  )
}

/**
 * Narrows the configured scope by what a client asked for: a client can only remove servers or
 * tags, never add ones the configuration left out. An empty request list keeps the base list;
 * a request that leaves nothing yields a scope that matches no tool (not an unscoped one).
 */
export function narrowScope(base: ToolScope, request: Partial<ToolScope>): ToolScope {
  return {
    servers: narrowList(base.servers, request.servers),
    tags: narrowList(base.tags, request.tags),
  }
}

function narrowList(base: readonly string[], requested: readonly string[] | undefined): string[] {
  if (requested === undefined || requested.length === 0) return [...base]
  if (base.length === 0) return [...new Set(requested)]
  const allowed = requested.filter((item) => base.includes(item))
  // Nothing left: a sentinel no tool carries, so the client sees an empty library.
  return allowed.length > 0 ? [...new Set(allowed)] : [NO_MATCH]
}

const NO_MATCH = '\u0000none'

/** A stable key for caches: equal scopes give equal keys whatever the list order. */
export function scopeKey(scope: ToolScope): string {
  return `servers=${[...scope.servers].sort().join(',')};tags=${[...scope.tags].sort().join(',')}`
}

/** Readable form for messages: `servers github, slack; tags dev`. */
export function describeScope(scope: ToolScope): string {
  if (isUnscoped(scope)) return 'no scope'
  const parts: string[] = []
  const shown = (list: readonly string[]) => list.filter((item) => item !== NO_MATCH)
  if (scope.servers.length > 0) parts.push(`servers ${shown(scope.servers).join(', ') || '(none)'}`)
  if (scope.tags.length > 0) parts.push(`tags ${shown(scope.tags).join(', ') || '(none)'}`)
  return parts.join('; ')
}
