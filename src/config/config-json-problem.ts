/**
 * What `JSON.parse` lets through in a config file that the file's reader should not: a key given
 * twice in one object (`JSON.parse` keeps the last, while a person reading the file, or a review
 * of a config copied from the internet, sees the first: `{"mcpServers": {"files": {…}, "files":
 * {…}}}` would start a server nobody looked at). Runs on text `JSON.parse` accepted, without
 * recursion (the merge refuses deep nesting).
 * @module
 */
import { lineAndColumn } from '../library/importers/find-json-syntax-error.ts'

interface Level {
  /** The keys seen so far; undefined for an array. */
  keys: Set<string> | undefined
  /** The key the next value is under (objects), for the path in messages. */
  key: string | undefined
  expectKey: boolean
}

/** A key as a path shows it: as it is when plain, quoted JSON-style otherwise (control characters escaped). */
function shownKey(key: string): string {
  const short = key.length > 64 ? `${key.slice(0, 64)}…` : key
  return /^[\w-]+$/.test(short) ? short : JSON.stringify(short)
}

/**
 * The first key given twice in valid JSON `text`, as the end of a sentence (`has "mcpServers.a" twice
 * (line 4, column 5) …`), or undefined.
 */
export function configJsonProblem(text: string): string | undefined {
  const stack: Level[] = []
  const path = () =>
    stack
      .map((level) => level.key)
      .filter((key) => key !== undefined)
      .map(shownKey)
      .join('.')
  const at = (offset: number) => {
    const { line, column } = lineAndColumn(text, offset)
    return `line ${line}, column ${column}`
  }
  for (let offset = 0; offset < text.length; offset += 1) {
    const char = text[offset]
    const top = stack.at(-1)
    if (char === '"') {
      let end = offset + 1
      while (text[end] !== '"') end += text[end] === '\\' ? 2 : 1
      if (top?.keys !== undefined && top.expectKey) {
        const key = JSON.parse(text.slice(offset, end + 1)) as string
        top.key = key
        top.expectKey = false
        if (top.keys.has(key)) {
          return `has ${JSON.stringify(path())} twice (the second at ${at(offset)}): JSON keeps only the last, so the first would be ignored; remove or rename one`
        }
        top.keys.add(key)
      }
      offset = end
    } else if (char === '{' || char === '[') {
      stack.push({ keys: char === '{' ? new Set() : undefined, key: undefined, expectKey: true })
    } else if (char === '}' || char === ']') {
      stack.pop()
    } else if (char === ',' && top?.keys !== undefined) {
      top.expectKey = true
    }
  }
  return undefined
}
