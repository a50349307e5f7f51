/**
 * `hybrid`: the fusion of the library's `bm25` and `dense` retrievers as `retrieve.hybrid`
 * configures (see `LibraryHybridRetriever`). No files of its own: the manifest entry names its
 * inputs, which are loaded first.
 * @module
 */
import { HybridManifestSchema, type HybridManifest } from '../dense-manifest.ts'
import { LibraryHybridRetriever } from '../library-hybrid-retriever.ts'
import { parseEntry, type RetrieverKind } from './retriever-kind.ts'

export const HYBRID_KIND: RetrieverKind = {
  name: 'hybrid',
  requires: ['bm25', 'dense'],

  async build({ config, retrievers }) {
    const entry: HybridManifest = { inputs: ['bm25', 'dense'] }
    return { retriever: new LibraryHybridRetriever(config, retrievers), entry }
  },

  async load({ manifest, entry, config, retrievers }) {
    parseEntry(manifest, 'hybrid', HybridManifestSchema, entry)
    return new LibraryHybridRetriever(config, retrievers)
  },

  rebuildHint: (library) =>
    `Rebuild it with: toolsel index <file> --name ${library} --retriever hybrid.`,
}
