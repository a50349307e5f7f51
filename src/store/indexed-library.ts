/**
 * A library together with its built retrievers: the unit the service loads, swaps and serves.
 * @module
 */
import { ToolselError } from '../errors.ts'
import type { LibraryExamples } from '../examples/library-examples.ts'
import type { ToolLibrary } from '../library/tool-library.ts'
import type { Retriever } from '../contracts.ts'
import { requireRetrieverKind } from './kinds/index.ts'
import type { IndexManifest } from './manifest.ts'

export interface IndexedLibrary {
  readonly library: ToolLibrary
  readonly manifest: IndexManifest
  /** Retrievers by kind: `bm25`, and `dense`/`hybrid` when the index has embeddings. */
  readonly retrievers: ReadonlyMap<string, Retriever>
  /** The directory it was loaded from, or `undefined` for a library held only in memory. */
  readonly dir?: string
  /**
   * The library's usage examples and their nearest-example memory; absent when it has none.
   * Its BM25 index was built with them (the `examples` expansion field).
   */
  readonly examples?: LibraryExamples
}

/**
 * The retriever of `kind` (the library's default when `kind` is undefined or `auto`), or
 * UNKNOWN_COMPONENT naming what exists.
 */
export function requireRetriever(indexed: IndexedLibrary, kind?: string): Retriever {
  const wanted = kind === undefined || kind === 'auto' ? indexed.manifest.defaultRetriever : kind
  const retriever = indexed.retrievers.get(wanted)
  if (!retriever) {
    const available = [...indexed.retrievers.keys()].join(', ')
    const kind = requireRetrieverKind(wanted)
    const hint = kind.rebuildHint ? ` ${kind.rebuildHint(indexed.library.name)}` : ''
    throw new ToolselError(
      'UNKNOWN_COMPONENT',
      `Library "${indexed.library.name}" has no "${wanted}" retriever (available: ${available}).${hint}`,
      { details: { library: indexed.library.name, retriever: wanted, available } },
    )
  }
  return retriever
}

/**
 * The retriever for a request: the one it names (which must exist), else the configured default
 * when the library has it, else the library's own default.
 */
export function resolveRetriever(
  indexed: IndexedLibrary,
  requested: string | undefined,
  configured: string,
): Retriever {
  if (requested !== undefined) return requireRetriever(indexed, requested)
  return requireRetriever(indexed, indexed.retrievers.has(configured) ? configured : undefined)
}
