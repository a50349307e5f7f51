/**
 * `hybrid`: a fusion of other parts of the library, a retriever over retrievers (see
 * `LibraryHybridRetriever`). `hybrid` fuses the parts `retrieve.hybrid.inputs` lists (default
 * `bm25` and `dense`); `hybrid:<part>+<part>…` fuses the named ones, e.g.
 * `hybrid:bm25+dense:static:glove-100d`. No files of its own: the manifest entry names its inputs,
 * which are built and loaded first. A request may name a fusion the library was not built with:
 * it is composed on the spot from the parts the library holds.
 * @module
 */
import type { Config } from '../../config/schema.ts'
import { HybridManifestSchema, type HybridManifest } from '../dense-manifest.ts'
import { LibraryHybridRetriever } from '../library-hybrid-retriever.ts'
import { parseEntry, type RetrieverKind } from './retriever-kind.ts'

/** The parts a `hybrid` or `hybrid:<a>+<b>` part fuses. */
export function hybridInputs(arg: string | undefined, config: Config): string[] {
  if (arg === undefined) return config.retrieve.hybrid.inputs.map((input) => input.retriever)
  return arg
    .split('+')
    .map((part) => part.trim())
    .filter((part) => part.length > 0)
}

export const HYBRID_KIND: RetrieverKind = {
  name: 'hybrid',
  requires: [],
  takesArgument: true,
  inputs: hybridInputs,

  async build({ arg, config, retrievers }) {
    const entry: HybridManifest = { inputs: hybridInputs(arg, config) }
    return { retriever: new LibraryHybridRetriever(config, retrievers, entry.inputs), entry }
  },

  async load({ part, arg, manifest, entry, config, retrievers }) {
    parseEntry(manifest, part, HybridManifestSchema, entry)
    return new LibraryHybridRetriever(config, retrievers, hybridInputs(arg, config))
  },

  compose: (arg, config, retrievers) =>
    new LibraryHybridRetriever(config, retrievers, hybridInputs(arg, config)),
}
