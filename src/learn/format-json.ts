/**
 * JSON text laid out as the repository's prettier (3.x, `parser: json`, `printWidth: 100`)
 * prints it, so that a file a command writes (`toolsel train`'s model) is byte for byte the
 * committed one without a prettier pass. The rules, for text whose objects are all written
 * expanded (as `JSON.stringify(value, null, 2)` writes them, which prettier keeps):
 *
 * - an object: one property per line, two spaces deeper; `{}` when empty;
 * - an array that fits on its line (from where it starts, with the comma after it) is written
 *   flat, `[a, b]`, unless it holds non-empty objects (expanded) or is a list of two or more
 *   arrays, or objects, that each have two or more entries;
 * - otherwise an array of numbers is filled: as many per line as fit in 100 columns; any other
 *   array has one element per line;
 * - numbers as `JSON.stringify` writes them, without an exponent's `+` (`1e21`).
 *
 * Widths count UTF-16 code units of printable ASCII and code points of anything else (prettier
 * counts East Asian wide characters twice; model files hold none). The tests check the output
 * is a fixed point of prettier itself.
 * @module
 */

const PRINT_WIDTH = 100

type Json = null | boolean | number | string | Json[] | { [key: string]: Json }

/** `value` (anything `JSON.stringify` takes) as prettier-formatted JSON text, ending in a newline. */
export function formatJson(value: unknown): string {
  return `${print(JSON.parse(JSON.stringify(value)) as Json, '', 0, 0)}\n`
}

/**
 * `value` starting at `column` of a line indented by `indent`, followed there by `after`
 * characters (its comma, if any) before the line ends.
 */
function print(value: Json, indent: string, column: number, after: number): string {
  if (value === null || typeof value !== 'object') return scalar(value)
  if (Array.isArray(value)) return printArray(value, indent, column, after)
  const keys = Object.keys(value)
  if (keys.length === 0) return '{}'
  const inner = `${indent}  `
  const lines = keys.map((key, at) => {
    const head = `${inner}${JSON.stringify(key)}: `
    const comma = at < keys.length - 1 ? ',' : ''
    return `${head}${print(value[key], inner, width(head), comma.length)}${comma}`
  })
  return `{\n${lines.join('\n')}\n${indent}}`
}

function printArray(items: Json[], indent: string, column: number, after: number): string {
  if (items.length === 0) return '[]'
  if (!breaksAlways(items)) {
    const text = flat(items)
    if (text !== undefined && column + width(text) + after <= PRINT_WIDTH) return text
  }
  const inner = `${indent}  `
  if (items.every((item) => typeof item === 'number'))
    return `[\n${fill(items.map(scalar), inner)}\n${indent}]`
  const lines = items.map((item, at) => {
    const comma = at < items.length - 1 ? ',' : ''
    return `${inner}${print(item, inner, inner.length, comma.length)}${comma}`
  })
  return `[\n${lines.join('\n')}\n${indent}]`
}

/** Two or more arrays, or objects, in a row, each with two or more entries: one per line. */
function breaksAlways(items: Json[]): boolean {
  const kind = (item: Json) =>
    item === null || typeof item !== 'object' ? 'scalar' : Array.isArray(item) ? 'array' : 'object'
  const entries = (item: Json) =>
    Array.isArray(item) ? item.length : Object.keys(item as Record<string, Json>).length
  return (
    items.length > 1 &&
    items.every(
      (item, at) =>
        kind(item) !== 'scalar' &&
        (at === items.length - 1 || kind(items[at + 1]) === kind(item)) &&
        entries(item) > 1,
    )
  )
}

/** The value on one line, or undefined when it holds an object with properties (always expanded). */
function flat(value: Json): string | undefined {
  if (value === null || typeof value !== 'object') return scalar(value)
  if (!Array.isArray(value)) return Object.keys(value).length === 0 ? '{}' : undefined
  const parts: string[] = []
  for (const item of value) {
    const text = flat(item)
    if (text === undefined) return undefined
    parts.push(text)
  }
  return `[${parts.join(', ')}]`
}

/** Numbers (with their commas) packed into lines of at most PRINT_WIDTH columns. */
function fill(numbers: string[], indent: string): string {
  const last = numbers.length - 1
  const lines: string[] = []
  let line = `${indent}${numbers[0]}${last > 0 ? ',' : ''}`
  for (let at = 1; at <= last; at += 1) {
    const item = `${numbers[at]}${at < last ? ',' : ''}`
    if (line.length + 1 + item.length <= PRINT_WIDTH) {
      line += ` ${item}`
    } else {
      lines.push(line)
      line = `${indent}${item}`
    }
  }
  lines.push(line)
  return lines.join('\n')
}

function scalar(value: null | boolean | number | string): string {
  const text = JSON.stringify(value)
  return typeof value === 'number' ? text.replace('e+', 'e') : text
}

function width(text: string): number {
  return /^[\x20-\x7e]*$/.test(text) ? text.length : [...text].length
}
