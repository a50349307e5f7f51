/**
 * Local `$ref`s of one tool's parameters (`#/$defs/Pet`, what an OpenAPI import writes when it
 * keeps a spec's shared schemas as definitions; MCP servers built with pydantic write the same),
 * resolved within the parameters themselves.
 * @module
 */
/**
 * The value the local reference `ref` (`#` or `#/a/b`, a JSON pointer, `~0`/`~1` and
 * percent-escapes decoded) points at inside `root`, or undefined.
 */
export function localTarget(root: unknown, ref: string): unknown {
  if (ref === '#') return root
  if (!ref.startsWith('#/')) return undefined
  let current: unknown = root
  for (const raw of ref.slice(2).split('/')) {
    if (typeof current !== 'object' || current === null) return undefined
    let key = raw
    try {
      key = decodeURIComponent(raw)
    } catch {
      // A lone `%`: the token as written.
    }
    key = key.replace(/~1/g, '/').replace(/~0/g, '~')
    if (!Object.hasOwn(current, key)) return undefined
    current = (current as Record<string, unknown>)[key]
  }
  return current
}
