/**
 * Scoped views of a library, each with its own index. A scoped client searches only its tools,
 * so its results can't be crowded out by (or leak) other servers' tools, and BM25 statistics are
 * those of what it can see. Views are cached by library version and scope, least recently used
 * first out. A view holds the library version it reads its tools from, so `forget` drops a
 * library's views as soon as that version is replaced or deleted (the MCP context calls it on
 * every registry change), instead of keeping the old version until the cache pushes them out.
 *
 * A view materialises only what it needs: building it reads the library's tools one at a time
 * (never all of them at once) and keeps those in scope just long enough to index them; the view
 * then holds their positions and ids and reads a tool from the library when asked for it.
 * @module
 */
import type { Config } from '../config/schema.ts'
import type { Tool } from '../library/tool.ts'
import { ToolLibrary } from '../library/tool-library.ts'
import { scopedView, type IndexedLibrary } from '../store/library-lifecycle.ts'
import { inScope, isUnscoped, scopeKey, type ToolScope } from './tool-scope.ts'

interface CachedView {
  /** The library version the view reads its tools from. */
  library: ToolLibrary
  view: Promise<IndexedLibrary>
}

export class ScopedLibraries {
  readonly #config: Config
  readonly #capacity: number
  readonly #views = new Map<string, CachedView>()

  /** `capacity`: views kept (`mcp.scopeCacheSize`). */
  constructor(config: Config, capacity = config.mcp.scopeCacheSize) {
    this.#config = config
    this.#capacity = capacity
  }

  /** The library itself when the scope keeps every tool, else an indexed view of the tools in scope. */
  async view(indexed: IndexedLibrary, scope: ToolScope): Promise<IndexedLibrary> {
    if (isUnscoped(scope)) return indexed
    const { library } = indexed
    const key = `${library.name}\u0000${scopeKey(scope)}`
    // A request that took a version before it was replaced or deleted gets a view that is not
    // kept: nothing asks for that version again.
    if (library.released) return this.#build(indexed, scope)
    let cached = this.#views.get(key)
    if (cached && cached.library === library) {
      this.#views.delete(key)
    } else {
      // A new version of the library: its older versions' views (any scope) go, so that they
      // don't keep the replaced version (which they read their tools from) in memory. (The
      // registry's change report does this at the swap; this covers a cache it doesn't feed.)
      this.forget(library.name, library)
      const view = this.#build(indexed, scope)
      cached = { library, view }
      const entry = cached
      view.catch(() => {
        if (this.#views.get(key) === entry) this.#views.delete(key)
      })
    }
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

  async #build(indexed: IndexedLibrary, scope: ToolScope): Promise<IndexedLibrary> {
    const { library } = indexed
    const positions: number[] = []
    const tools: Tool[] = []
    library.scan((tool, position) => {
      if (!inScope(tool, scope)) return
      positions.push(position)
      tools.push(tool)
    })
    if (tools.length === library.size) return indexed
    const built = await scopedView(indexed, tools, this.#config)
    // The index is built; the view reads its tools from the library from now on.
    const view = ToolLibrary.subset(library, Int32Array.from(positions), built.library.contentHash)
    return { ...built, library: view }
  }
}
