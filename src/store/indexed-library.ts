/**
 * A library together with its built retrievers: the unit the service loads, swaps and serves.
 * @module
 */
import { resolve } from 'node:path'
import { ToolselError } from '../errors.ts'
import type { LibraryExamples } from '../examples/library-examples.ts'
import type { ToolLibrary } from '../library/tool-library.ts'
import type { Retriever } from '../contracts.ts'
import type { Config } from '../config/schema.ts'
import { partInputs, requirePart, type RetrieverPart } from './kinds/index.ts'
import type { IndexManifest } from './manifest.ts'
import { libraryNameFromPath } from './library-name.ts'

export interface IndexedLibrary {
  readonly library: ToolLibrary
  readonly manifest: IndexManifest
  /**
   * Retriever parts by name: `bm25` always; `dense`, `dense:static:glove-100d`, `hybrid`, `regex`…
   * as the library was built.
   */
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
 * The retriever part `name` (the library's default when `name` is undefined or `auto`), or
 * UNKNOWN_COMPONENT naming the parts the library has. With `config`, a part the library was not
 * built with but can compose from the parts it has (`hybrid:bm25+dense:static:glove-100d`) is
 * made on the spot.
 */
export function requireRetriever(
  indexed: IndexedLibrary,
  name?: string,
  config?: Config,
): Retriever {
  const wanted = name === undefined || name === 'auto' ? indexed.manifest.defaultRetriever : name
  const retriever = indexed.retrievers.get(wanted)
  if (retriever) return retriever
  const part = requirePart(wanted)
  // `dense` and `dense:<the configured embedder>` are one part under two names (the same
  // settings, the same vectors): a library holding one serves a request for the other.
  const parts = config ? withDenseAliases(indexed.retrievers, config) : indexed.retrievers
  const same = parts.get(wanted)
  if (same) return same
  if (config && part.kind.compose && partInputs(part, config).every((input) => parts.has(input)))
    return part.kind.compose(part.arg, config, parts)
  const available = [...indexed.retrievers.keys()].join(', ')
  // Both keep the parts it has, its default first: `--retriever <part>` alone would make the
  // new part the library's default (other answers) and drop the others.
  const wantedParts = `${builtParts(indexed)},${wanted}`
  const hint = builtAtStart(indexed, config)
    ? ` It is built from its tool files when the service starts: start it with TOOLSEL_BUILD_RETRIEVER=${wantedParts} (retrieve.build) to build that part too.`
    : ` Rebuild it with: toolsel index <file> --name ${indexed.library.name} --retriever ${wantedParts}.`
  throw new ToolselError(
    'UNKNOWN_COMPONENT',
    `Library "${indexed.library.name}" has no "${wanted}" retriever (available: ${available}).${otherDenseHint(indexed, part, parts, config)}${hint}`,
    { details: { library: indexed.library.name, retriever: wanted, available } },
  )
}

/**
 * `retrievers` with `dense` and `dense:<retrieve.dense.embedder>` each under the other's name
 * too, when the library holds one of them: the same part (`dense` is a dense part of the
 * configured embedder, built with `retrieve.dense`'s settings, as `dense:<embedder>` is).
 */
function withDenseAliases(
  retrievers: ReadonlyMap<string, Retriever>,
  config: Config,
): ReadonlyMap<string, Retriever> {
  const named = `dense:${config.retrieve.dense.embedder}`
  const dense = retrievers.get('dense')
  const other = retrievers.get(named)
  if ((dense === undefined) === (other === undefined)) return retrievers
  const aliased = new Map(retrievers)
  aliased.set(dense === undefined ? 'dense' : named, (dense ?? other)!)
  return aliased
}

/**
 * For a request naming a dense part the library lacks (`dense`, `dense:<embedder>`, or one a
 * fusion is over) while it has dense parts of other embedders: which to ask for instead, with
 * no rebuild. Empty otherwise.
 */
function otherDenseHint(
  indexed: IndexedLibrary,
  wanted: RetrieverPart,
  parts: ReadonlyMap<string, Retriever>,
  config?: Config,
): string {
  const isDense = (name: string) => name === 'dense' || name.startsWith('dense:')
  const inputs = config && wanted.kind.compose ? partInputs(wanted, config) : []
  const missing = [wanted.name, ...inputs].filter((name) => isDense(name) && !parts.has(name))
  const had = [...indexed.retrievers.keys()].filter(isDense)
  if (missing.length === 0 || had.length === 0) return ''
  const configured =
    missing.includes('dense') && config
      ? ` ("dense" is the dense part of the configured embedder, retrieve.dense.embedder: ${config.retrieve.dense.embedder})`
      : ''
  const instead = isDense(wanted.name)
    ? had.map((part) => `"${part}"`).join(' or ')
    : had.map((part) => `"hybrid:bm25+${part}"`).join(' or ')
  return ` It has no ${missing.map((name) => `"${name}"`).join(', ')}${configured}; to use the dense part it has, ask for ${instead} instead.`
}

/**
 * What a rebuild of `indexed` builds: the parts it holds, its default first (a comma list for
 * `retrieve.build`); parts a kept part requires come again by themselves.
 */
export function builtParts(indexed: IndexedLibrary): string {
  const first = indexed.manifest.defaultRetriever
  const others = Object.keys(indexed.manifest.retrievers).filter((part) => part !== first)
  return [first, ...others].join(',')
}

/**
 * Whether `indexed` is imported from tool files at every start, with `retrieve.build` (the
 * embedded demo, a `--library` tool file): no saved index that `toolsel index` could replace, and
 * its files' path is this host's, not one to send a client.
 */
function builtAtStart(indexed: IndexedLibrary, config?: Config): boolean {
  const source = indexed.manifest.source.path
  if (source === undefined) return false
  if (indexed.dir === undefined) return true
  // The tool file given to --library (library.default) once an example write saved it under its
  // name: the next start imports the file again, with retrieve.build, and reads the saved index
  // for its usage examples only, so `toolsel index` would not give it the part (was that hint).
  // Not the demo: started by name, it then loads the saved index.
  const reference = config?.library.default
  return (
    reference !== undefined &&
    indexed.library.name === libraryNameFromPath(reference) &&
    resolve(reference) === resolve(source)
  )
}

/**
 * The retriever for a request: the part it names (which must exist or be composable), else the
 * configured default (`retrieve.retriever`) when the library has it, else the library's own.
 */
export function resolveRetriever(
  indexed: IndexedLibrary,
  requested: string | undefined,
  config: Config,
): Retriever {
  if (requested !== undefined) return requireRetriever(indexed, requested, config)
  const configured = config.retrieve.retriever
  return requireRetriever(indexed, indexed.retrievers.has(configured) ? configured : undefined)
}
