/**
 * Scoped views of a library, each with its own index. A scoped client searches only its tools,
 * so its results can't be crowded out by (or leak) other servers' tools, and BM25 statistics are
 * those of what it can see. Views are cached by library content hash and scope, least recently
 * used first out; a library swap (new content hash) simply stops hitting the old entries.
 * @module
 */
import type { Config } from '../config/schema.ts'
import { scopedView, type IndexedLibrary } from '../store/library-lifecycle.ts'
import { inScope, isUnscoped, scopeKey, type ToolScope } from './tool-scope.ts'

export class ScopedLibraries {
  readonly #config: Config
  readonly #capacity: number
  readonly #views = new Map<string, Promise<IndexedLibrary>>()

  /** `capacity`: views kept (`mcp.scopeCacheSize`). */
  constructor(config: Config, capacity = config.mcp.scopeCacheSize) {
    this.#config = config
    this.#capacity = capacity
  }

  /** The library itself when the scope keeps every tool, else an indexed view of the tools in scope. */
  async view(indexed: IndexedLibrary, scope: ToolScope): Promise<IndexedLibrary> {
    if (isUnscoped(scope)) return indexed
    const { library } = indexed
    const key = `${library.name}\u0000${library.contentHash}\u0000${scopeKey(scope)}`
    let view = this.#views.get(key)
    if (view) {
      this.#views.delete(key)
    } else {
      view = this.#build(indexed, scope)
      view.catch(() => this.#views.delete(key))
    }
    this.#views.set(key, view)
    while (this.#views.size > this.#capacity) {
      this.#views.delete(this.#views.keys().next().value as string)
    }
    return view
  }

  async #build(indexed: IndexedLibrary, scope: ToolScope): Promise<IndexedLibrary> {
    const tools = indexed.library.tools.filter((tool) => inScope(tool, scope))
    if (tools.length === indexed.library.size) return indexed
    return scopedView(indexed, tools, this.#config)
  }
}
