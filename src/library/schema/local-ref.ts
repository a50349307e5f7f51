/**
 * Local `$ref`s (`#/$defs/Pet`, `#/components/schemas/Pet`: JSON Pointers, RFC 6901, inside one
 * document), resolved within it: a tool's parameters (what an OpenAPI import writes when it keeps
 * a spec's shared schemas as definitions; MCP servers built with pydantic write the same), an
 * OpenAPI spec, a schema being normalised.
 * @module
 */
/**
 * The value the local reference `ref` (`#` or `#/a/b`, `~0`/`~1` and percent-escapes decoded)
 * points at inside `root`, or undefined. Own members only; `arrays: false` steps through objects
 * only (what the inline form of an OpenAPI import has always resolved).
 */
export function localTarget(
  root: unknown,
  ref: string,
  options: { arrays?: boolean } = {},
): unknown {
  if (ref === '#') return root
  if (!ref.startsWith('#/')) return undefined
  const arrays = options.arrays ?? true
  let current: unknown = root
  for (const raw of ref.slice(2).split('/')) {
    if (typeof current !== 'object' || current === null) return undefined
    if (!arrays && Array.isArray(current)) return undefined
    const key = decodePointerToken(raw)
    if (!Object.hasOwn(current, key)) return undefined
    current = (current as Record<string, unknown>)[key]
  }
  return current
}

/** One reference token: percent-escapes decoded (a lone `%` kept as written), then `~1`, `~0`. */
export function decodePointerToken(raw: string): string {
  let text = raw
  try {
    text = decodeURIComponent(raw)
  } catch {
    // A lone `%`: the token as written.
  }
  return text.replace(/~1/g, '/').replace(/~0/g, '~')
}
