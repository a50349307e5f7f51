/**
 * Retriever kinds by name: the lookup table that index builds, saves, loads and requests go
 * through. Adding a kind is one file in this folder, one line here and its name in kind-names.ts
 * (which help texts read without loading the kinds; TypeScript holds the two to the same names).
 *
 * A library holds retriever *parts*, each named `<kind>` or `<kind>:<argument>`: `bm25`,
 * `dense` (the configured embedder), `dense:use-lite` and `dense:static:glove-100d` side by side,
 * `hybrid` (the configured fusion) or `hybrid:bm25+dense:static:glove-100d` (a fusion over the
 * named parts). The kind is the text before the first `:`; the argument is the kind's to read.
 *
 * @example
 * ```ts
 * // src/store/kinds/regex-kind.ts exports REGEX_KIND: RetrieverKind, registered below with
 * //   regex: REGEX_KIND,
 * // after which `toolsel index tools.json --name mytools --retriever regex` builds it and a
 * // request names it: POST /v1/search-tools {"query": "^send_(sms|email)$", "retriever": "regex"}
 *
 * // Several parts side by side, each named by requests:
 * const indexed = await indexTools('mytools', tools, config, {
 *   retriever: 'bm25,dense:use-lite,dense:static:glove-100d',
 * })
 * requireRetriever(indexed, 'dense:static:glove-100d') // GloVe vectors
 * requireRetriever(indexed, 'hybrid:bm25+dense:use-lite', config) // a fusion, composed on the spot
 * ```
 * @module
 */
import type { Config } from '../../config/schema.ts'
import { ToolselError } from '../../errors.ts'
import { BM25_KIND } from './bm25-kind.ts'
import { DENSE_KIND } from './dense-kind.ts'
import { HYBRID_KIND } from './hybrid-kind.ts'
import { REGEX_KIND } from './regex-kind.ts'
import type { RetrieverKind } from './retriever-kind.ts'
import type { RetrieverKindName } from './kind-names.ts'
import { splitPartName } from './part-name.ts'
import { sameJson } from './same-json.ts'
import { BUILD_SETTINGS_VERSION, type BuildSettings } from '../manifest.ts'

export { splitPartList, splitPartName } from './part-name.ts'

export type { RetrieverKind } from './retriever-kind.ts'

export const RETRIEVER_KINDS: Readonly<Record<string, RetrieverKind>> = {
  bm25: BM25_KIND,
  dense: DENSE_KIND,
  hybrid: HYBRID_KIND,
  regex: REGEX_KIND,
} satisfies Record<RetrieverKindName, RetrieverKind>

/** Longest part name accepted (an `onnx:<model directory>` embedder is a path). */
export const MAX_PART_NAME_CHARS = 300

/** A part of a library: its name, its kind, and the text after `<kind>:` (if any). */
export interface RetrieverPart {
  name: string
  kind: RetrieverKind
  arg: string | undefined
}

/** Why `name` is not a part name of a registered kind, or undefined when it is one. */
export function partNameProblem(name: string): string | undefined {
  const { kind, arg } = splitPartName(name)
  const available = Object.keys(RETRIEVER_KINDS).join(', ')
  if (name.length > MAX_PART_NAME_CHARS)
    return `retriever "${name.slice(0, 40)}…" is ${name.length} characters long (at most ${MAX_PART_NAME_CHARS})`
  if (!Object.hasOwn(RETRIEVER_KINDS, kind))
    return `no retriever kind "${kind}" (available: ${available})`
  if (arg !== undefined && !RETRIEVER_KINDS[kind].takesArgument)
    return `retriever kind "${kind}" takes no ":<argument>" (got "${name}")`
  if (arg === '') return `retriever "${name}" has an empty argument after "${kind}:"`
  return undefined
}

/** The part of that name, or UNKNOWN_COMPONENT saying what is wrong with it. */
export function requirePart(name: string): RetrieverPart {
  const problem = partNameProblem(name)
  if (problem !== undefined) {
    const available = Object.keys(RETRIEVER_KINDS)
    throw new ToolselError('UNKNOWN_COMPONENT', `No such retriever: ${problem}.`, {
      details: { kind: 'retriever', id: name.slice(0, MAX_PART_NAME_CHARS), available },
    })
  }
  const { kind, arg } = splitPartName(name)
  return { name, kind: RETRIEVER_KINDS[kind], arg }
}

/** The parts `part` is built over (a fusion's inputs), built and loaded before it. */
export function partInputs(part: RetrieverPart, config: Config): readonly string[] {
  return part.kind.inputs?.(part.arg, config) ?? part.kind.requires
}

/**
 * `names` and every part they require, each after its requirements (the order they are built
 * in). `bm25` comes first: every index has it.
 */
export function withRequirements(names: Iterable<string>, config: Config): RetrieverPart[] {
  const ordered: RetrieverPart[] = []
  const visit = (name: string, path: readonly string[]) => {
    if (ordered.some((part) => part.name === name)) return
    if (path.includes(name)) {
      throw new ToolselError(
        'INVALID_CONFIG',
        `Retriever parts require each other: ${[...path, name].join(' → ')}.`,
      )
    }
    const part = requirePart(name)
    for (const required of partInputs(part, config)) visit(required, [...path, name])
    ordered.push(part)
  }
  for (const name of ['bm25', ...names]) visit(name, [])
  return ordered
}

/**
 * What `parts` are built with (each kind's `buildSettings`), as the manifest records it: the
 * same value for the same config, whatever order the config's keys came in. With `entries` (the
 * built parts' manifest entries), as each kind's `builtSettings` records them.
 */
export function buildSettingsOf(
  parts: readonly RetrieverPart[],
  config: Config,
  entries?: Readonly<Record<string, Record<string, unknown>>>,
): BuildSettings {
  return {
    version: BUILD_SETTINGS_VERSION,
    parts: Object.fromEntries(
      parts.map((part) => {
        const settings = part.kind.buildSettings?.(part.arg, config) ?? {}
        const entry =
          entries !== undefined && Object.hasOwn(entries, part.name)
            ? entries[part.name]
            : undefined
        return [
          part.name,
          entry && part.kind.builtSettings ? part.kind.builtSettings(settings, entry) : settings,
        ]
      }),
    ),
  }
}

/**
 * Whether `saved` (a manifest's `build`, absent in older indexes) records `wanted`; a key a kind
 * added later (`settingsAddedLater`) that the saved part lacks is not compared.
 */
export function sameBuildSettings(
  saved: BuildSettings | undefined,
  wanted: BuildSettings,
): boolean {
  if (saved === undefined) return false
  const wantedParts: BuildSettings['parts'] = {}
  for (const [name, settings] of Object.entries(wanted.parts)) {
    const savedPart = Object.hasOwn(saved.parts, name) ? saved.parts[name] : undefined
    const kind = partNameProblem(name) === undefined ? requirePart(name).kind : undefined
    if (savedPart === undefined || kind === undefined) {
      wantedParts[name] = settings
      continue
    }
    const added = kind.settingsAddedLater ?? []
    wantedParts[name] = Object.fromEntries(
      Object.entries(settings).filter(
        ([key]) => !added.includes(key) || Object.hasOwn(savedPart, key),
      ),
    )
  }
  return sameJson(saved, { ...wanted, parts: wantedParts })
}
