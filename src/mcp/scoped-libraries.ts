/**
 * Scoped views of a library, each with its own index. A scoped client searches only its tools,
 * so its results can't be crowded out by (or leak) other servers' tools, and BM25 statistics are
 * those of what it can see. Views are cached by library version and scope, least recently used
 * first out. A view holds the library version it reads its tools from, so `forget` drops a
 * library's views as soon as that version is replaced or deleted (the MCP context calls it on
 * every registry change), instead of keeping the old version until the cache pushes them out.
 *
 * A view materialises only what it needs: building it reads the tools in scope one at a time
 * and keeps them just long enough to index them; the view then holds their positions and ids and
 * reads a tool from the library when asked for it.
 *
 * A client chooses its scope (`/mcp?servers=…&tags=…`). Which tools a scope holds is found from
 * the positions of each server's and each tag's tools (`ScopePositions`), read once per library
 * version in slices, and a view is cached by the positions it holds: scopes naming servers or
 * tags the library lacks (`?servers=nosuch1`, `nosuch2`, …) share one view and read nothing.
 * Each of them used to read the whole library in one synchronous piece (360-380 ms at 100,000
 * tools, bench/README round 26) and push a real scope's view out of the cache. A union of real
 * servers or tags that is new builds an index, which each client's `ViewBudget` bounds (round 27).
 * @module
 */
import { createHash } from 'node:crypto'
import type { Config } from '../config/schema.ts'
import type { Tool } from '../library/tool.ts'
import { ToolLibrary } from '../library/tool-library.ts'
import { scopedView, type IndexedLibrary } from '../store/library-lifecycle.ts'
import { runStepsSliced, type Steps } from '../time-slicer.ts'
import { isUnscoped, scopeKey, type ToolScope } from './tool-scope.ts'
import { ViewBudget, type BudgetClient } from './view-budget.ts'

/** A scope's view key when it keeps every tool of the library (no view: the library itself). */
const WHOLE_LIBRARY = ''

/** Positions of a library version's tools by server (namespace, `''` for none) and by tag. */
interface ScopePositions {
  servers: Map<string, number[]>
  tags: Map<string, number[]>
}

interface CachedView {
  /** The library version the view reads its tools from. */
  library: ToolLibrary
  view: Promise<IndexedLibrary>
}

export class ScopedLibraries {
  readonly #config: Config
  readonly #capacity: number
  readonly #views = new Map<string, CachedView>()
  readonly #budget: ViewBudget
  /** Per library version, made on its first scoped view. */
  readonly #positions = new WeakMap<ToolLibrary, Promise<ScopePositions>>()
  /**
   * Per library version, the view key of each scope asked for lately (`scopeKey` → the key of
   * the tools it holds, or WHOLE_LIBRARY), so that a scope asked for again finds its view without
   * marking and hashing its tools' positions (~0.27 ms a request at 100,000 tools). At most
   * `4 × capacity` scopes (the first asked goes first): one dropped is worked out anew.
   */
  readonly #keys = new WeakMap<ToolLibrary, Map<string, string>>()

  /** `capacity`: views kept (`mcp.scopeCacheSize`). */
  constructor(config: Config, capacity = config.mcp.scopeCacheSize) {
    this.#config = config
    this.#capacity = capacity
    this.#budget = new ViewBudget(config.mcp.scopeViewToolsPerMinute)
  }

  /**
   * The library itself when the scope keeps every tool, else an indexed view of the tools in
   * scope. `client` (the API key's principal; none over stdio): a view not cached is built only
   * within its budget, else RATE_LIMITED.
   */
  async view(
    indexed: IndexedLibrary,
    scope: ToolScope,
    client?: BudgetClient,
  ): Promise<IndexedLibrary> {
    if (isUnscoped(scope)) return indexed
    const { library } = indexed
    let positions: Int32Array | undefined
    const inScope = async () =>
      (positions ??= positionsInScope(await this.#positionsOf(library), scope, library.size))
    const key = await this.#keyOf(library, scope, inScope)
    if (key === WHOLE_LIBRARY) return indexed
    // A request that took a version before it was replaced or deleted gets a view that is not
    // kept: nothing asks for that version again.
    if (library.released) {
      const held = await inScope()
      if (client !== undefined) this.#budget.take(client, held.length)
      return this.#build(indexed, held)
    }
    const current = () => {
      const entry = this.#views.get(key)
      return entry && entry.library === library ? entry : undefined
    }
    let cached = current()
    if (cached === undefined) {
      const held = await inScope()
      // Another request may have asked for the same tools meanwhile: its view is building.
      cached = current()
      if (cached === undefined) {
        if (client !== undefined) this.#budget.take(client, held.length)
        // A new version of the library: its older versions' views (any scope) go, so that they
        // don't keep the replaced version (which they read their tools from) in memory. (The
        // registry's change report does this at the swap; this covers a cache it doesn't feed.)
        this.forget(library.name, library)
        const view = this.#build(indexed, held)
        const entry = (cached = { library, view })
        view.catch(() => {
          if (this.#views.get(key) === entry) this.#views.delete(key)
        })
      }
    }
    this.#views.delete(key)
    this.#views.set(key, cached)
    while (this.#views.size > this.#capacity) {
      this.#views.delete(this.#views.keys().next().value as string)
    }
    return cached.view
  }

  /**
   * Drops the views of library `name` that don't read from `current` (all of them when the
   * library was deleted). Returns how many were dropped.
   */
  forget(name: string, current?: ToolLibrary): number {
    let dropped = 0
    for (const [key, entry] of this.#views) {
      if (entry.library.name !== name || entry.library === current) continue
      this.#views.delete(key)
      dropped += 1
    }
    return dropped
  }

  /** Drops every view (the MCP context's `close`). */
  clear(): void {
    this.#views.clear()
  }

  /** Views held for library `name` (any version and scope). */
  viewsOf(name: string): number {
    let count = 0
    for (const entry of this.#views.values()) if (entry.library.name === name) count += 1
    return count
  }

  /**
   * The view key of `scope` over `library`: the library's name and a hash of the positions of
   * the tools in scope (scopes that hold the same tools share a view), or WHOLE_LIBRARY.
   */
  async #keyOf(
    library: ToolLibrary,
    scope: ToolScope,
    inScope: () => Promise<Int32Array>,
  ): Promise<string> {
    let keys = this.#keys.get(library)
    if (keys === undefined) this.#keys.set(library, (keys = new Map()))
    const asked = scopeKey(scope)
    let key = keys.get(asked)
    if (key === undefined) {
      const positions = await inScope()
      key =
        positions.length === library.size
          ? WHOLE_LIBRARY
          : `${library.name}\u0000${createHash('sha256').update(positions).digest('base64')}`
      keys.set(asked, key)
      if (keys.size > 4 * this.#capacity) keys.delete(keys.keys().next().value as string)
    }
    return key
  }

  /** The positions of `library`'s tools by server and tag: one read of it, in slices. */
  #positionsOf(library: ToolLibrary): Promise<ScopePositions> {
    let positions = this.#positions.get(library)
    if (positions === undefined) {
      positions = runStepsSliced(scopePositionSteps(library))
      this.#positions.set(library, positions)
      const made = positions
      positions.catch(() => {
        if (this.#positions.get(library) === made) this.#positions.delete(library)
      })
    }
    return positions
  }

  async #build(indexed: IndexedLibrary, positions: Int32Array): Promise<IndexedLibrary> {
    const { library } = indexed
    const tools = await runStepsSliced(toolsAtSteps(library, positions))
    const built = await scopedView(indexed, tools, this.#config)
    // The index is built; the view reads its tools from the library from now on.
    const view = ToolLibrary.subset(library, positions, built.library.contentHash)
    return { ...built, library: view }
  }
}

function* scopePositionSteps(library: ToolLibrary): Steps<ScopePositions> {
  const servers = new Map<string, number[]>()
  const tags = new Map<string, number[]>()
  const add = (map: Map<string, number[]>, key: string, position: number) => {
    const list = map.get(key)
    if (list === undefined) map.set(key, [position])
    else if (list[list.length - 1] !== position) list.push(position)
  }
  const { walk } = library
  for (let position = 0; position < walk.length; position += 1) {
    const tool = walk.at(position)!
    add(servers, tool.namespace ?? '', position)
    for (const tag of tool.tags ?? []) add(tags, tag, position)
    yield
  }
  return { servers, tags }
}

function* toolsAtSteps(library: ToolLibrary, positions: Int32Array): Steps<Tool[]> {
  const { walk } = library
  const tools: Tool[] = []
  for (const position of positions) {
    tools.push(walk.at(position)!)
    yield
  }
  return tools
}

/**
 * The positions (ascending) of the tools in `scope`, as `inScope` decides: a tool of one of its
 * servers (when it lists any) with one of its tags (when it lists any).
 */
function positionsInScope(known: ScopePositions, scope: ToolScope, size: number): Int32Array {
  const wanted = (scope.servers.length > 0 ? 1 : 0) | (scope.tags.length > 0 ? 2 : 0)
  const marks = new Uint8Array(size)
  const mark = (map: Map<string, number[]>, names: readonly string[], bit: number) => {
    for (const name of new Set(names))
      for (const position of map.get(name) ?? []) marks[position] |= bit
  }
  mark(known.servers, scope.servers, 1)
  mark(known.tags, scope.tags, 2)
  let count = 0
  for (let position = 0; position < size; position += 1) if (marks[position] === wanted) count += 1
  const positions = new Int32Array(count)
  let at = 0
  for (let position = 0; position < size; position += 1)
    if (marks[position] === wanted) positions[at++] = position
  return positions
}
