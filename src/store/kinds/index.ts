/**
 * Retriever kinds by name: the lookup table that index builds, saves, loads and requests go
 * through. Adding a kind is one file in this folder and one line here.
 *
 * @example
 * ```ts
 * // src/store/kinds/regex-kind.ts exports REGEX_KIND: RetrieverKind, registered below with
 * //   regex: REGEX_KIND,
 * // after which `toolsel index tools.json --name mytools --retriever regex` builds it and a
 * // request names it: POST /v1/search-tools {"query": "^send_(sms|email)$", "retriever": "regex"}
 * ```
 * @module
 */
import { ToolselError } from '../../errors.ts'
import { BM25_KIND } from './bm25-kind.ts'
import { DENSE_KIND } from './dense-kind.ts'
import { HYBRID_KIND } from './hybrid-kind.ts'
import { REGEX_KIND } from './regex-kind.ts'
import type { RetrieverKind } from './retriever-kind.ts'

export type { RetrieverKind } from './retriever-kind.ts'

export const RETRIEVER_KINDS: Readonly<Record<string, RetrieverKind>> = {
  bm25: BM25_KIND,
  dense: DENSE_KIND,
  hybrid: HYBRID_KIND,
  regex: REGEX_KIND,
}

/** The kind of that name, or UNKNOWN_COMPONENT listing the kinds there are. */
export function requireRetrieverKind(name: string): RetrieverKind {
  const kind = Object.hasOwn(RETRIEVER_KINDS, name) ? RETRIEVER_KINDS[name] : undefined
  if (!kind) {
    const available = Object.keys(RETRIEVER_KINDS)
    throw new ToolselError(
      'UNKNOWN_COMPONENT',
      `No such retriever: "${name}" (available: ${available.join(', ')}).`,
      { details: { kind: 'retriever', id: name, available } },
    )
  }
  return kind
}

/**
 * `names` and every kind they require, each after its requirements (the order they are built
 * and loaded in). `bm25` comes first: every index has it.
 */
export function withRequirements(names: Iterable<string>): RetrieverKind[] {
  const ordered: RetrieverKind[] = []
  const visit = (name: string, path: readonly string[]) => {
    if (ordered.some((kind) => kind.name === name)) return
    if (path.includes(name)) {
      throw new ToolselError(
        'INTERNAL',
        `Retriever kinds require each other: ${[...path, name].join(' → ')}.`,
      )
    }
    const kind = requireRetrieverKind(name)
    for (const required of kind.requires) visit(required, [...path, name])
    ordered.push(kind)
  }
  for (const name of ['bm25', ...names]) visit(name, [])
  return ordered
}
