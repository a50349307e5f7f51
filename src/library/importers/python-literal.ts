/**
 * The value of a simple Python literal, as found in default arguments and Gorilla's
 * `name=value` strings: `True`/`False` → boolean, `None` → null, numbers, quoted strings.
 * Returns undefined for anything else (expressions, calls, containers), which callers treat as
 * "no known value" rather than guessing.
 */
export function pythonLiteral(text: string): unknown {
  const trimmed = text.trim()
  if (trimmed === 'True' || trimmed === 'False') return trimmed === 'True'
  if (trimmed === 'None') return null
  if (/^-?\d+(\.\d+)?([eE][+-]?\d+)?$/.test(trimmed)) return Number(trimmed)
  const quoted = /^(['"])(.*)\1$/s.exec(trimmed)
  return quoted ? quoted[2] : undefined
}
