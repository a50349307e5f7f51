/**
 * Names of retriever parts: `<kind>` or `<kind>:<argument>` (`dense:static:glove-100d`). No
 * imports, so kinds and the retrievers they build can read part names without a cycle.
 * @module
 */

/** `dense:static:glove-100d` → `{ kind: 'dense', arg: 'static:glove-100d' }`. */
export function splitPartName(name: string): { kind: string; arg: string | undefined } {
  const colon = name.indexOf(':')
  return colon < 0
    ? { kind: name, arg: undefined }
    : { kind: name.slice(0, colon), arg: name.slice(colon + 1) }
}

/** `bm25,dense:use-lite` → `['bm25', 'dense:use-lite']` (a build's comma list of parts). */
export function splitPartList(list: string): string[] {
  return list
    .split(',')
    .map((part) => part.trim())
    .filter((part) => part.length > 0)
}
