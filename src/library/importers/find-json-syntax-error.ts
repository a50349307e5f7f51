/**
 * Locates the first syntax error in invalid JSON. V8's `JSON.parse` messages only sometimes
 * include a position ("Unexpected token 'x', "…" is not valid JSON" has none), and users need a
 * line and column to fix a hand-edited tool file. Runs only after `JSON.parse` has failed.
 * @module
 */

export interface JsonSyntaxError {
  /** 0-based offset of the offending character in the text. */
  offset: number
  /** 1-based line and column of that character. */
  line: number
  /** 1-based column: the offset from the start of the line, plus one. */
  column: number
  /** What is wrong there, e.g. `unexpected character "}", expected a value`. */
  reason: string
}

class SyntaxErrorAt extends Error {
  constructor(
    readonly offset: number,
    readonly reason: string,
  ) {
    super(reason)
  }
}

const WHITESPACE = new Set([' ', '\t', '\n', '\r'])
const NUMBER = /-?(?:0|[1-9]\d*)(?:\.\d+)?(?:[eE][+-]?\d+)?/y
const SIMPLE_ESCAPES = new Set(['"', '\\', '/', 'b', 'f', 'n', 'r', 't'])

/**
 * Where and why `text` (which JSON.parse refused with `error`) is not JSON, for a message: `line
 * 3, column 29: unexpected "}"`, or V8's own message on one line when no error is found (V8's
 * message has an offset at most).
 */
export function describeJsonSyntaxError(text: string, error: unknown): string {
  const at = findJsonSyntaxError(text)
  return at
    ? `line ${at.line}, column ${at.column}: ${at.reason}`
    : (error as Error).message.replace(/\s+/g, ' ')
}

/** Returns the first syntax error of `text`, or undefined when it is valid JSON. */
export function findJsonSyntaxError(text: string): JsonSyntaxError | undefined {
  let position = 0
  const found = () =>
    position >= text.length
      ? 'unexpected end of input'
      : `unexpected ${JSON.stringify(text[position])}`
  const fail = (reason: string): never => {
    throw new SyntaxErrorAt(position, reason)
  }
  const skipWhitespace = () => {
    while (position < text.length && WHITESPACE.has(text[position])) position++
  }
  const expect = (char: string, what: string) => {
    skipWhitespace()
    if (text[position] !== char) fail(`${found()}, expected ${what}`)
    position++
  }

  function value(): void {
    skipWhitespace()
    const char = text[position]
    if (char === '{') return members('}', property)
    if (char === '[') return members(']', value)
    if (char === '"') return string()
    NUMBER.lastIndex = position
    if (NUMBER.test(text)) {
      position = NUMBER.lastIndex
      return
    }
    for (const literal of ['true', 'false', 'null']) {
      if (text.startsWith(literal, position)) {
        position += literal.length
        return
      }
    }
    fail(`${found()}, expected a value`)
  }

  function property(): void {
    string()
    expect(':', "':'")
    value()
  }

  function members(close: string, member: () => void): void {
    position++
    skipWhitespace()
    if (text[position] === close) {
      position++
      return
    }
    for (;;) {
      skipWhitespace()
      if (close === '}' && text[position] !== '"') fail(`${found()}, expected a property name`)
      member()
      skipWhitespace()
      if (text[position] === close) {
        position++
        return
      }
      expect(',', `',' or '${close}'`)
    }
  }

  function string(): void {
    position++
    for (;;) {
      const char = text[position]
      if (char === undefined) fail('unterminated string')
      if (char === '"') {
        position++
        return
      }
      if (char === '\\') {
        const next = text[position + 1]
        if (SIMPLE_ESCAPES.has(next)) position += 2
        else if (next === 'u' && /^[\da-fA-F]{4}$/.test(text.slice(position + 2, position + 6))) {
          position += 6
        } else fail('invalid escape sequence in string')
        continue
      }
      if (char < ' ') fail('unescaped control character (such as a newline) in string')
      position++
    }
  }

  try {
    value()
    skipWhitespace()
    if (position < text.length) fail(`${found()} after the end of the JSON value`)
    return undefined
  } catch (error) {
    // RangeError: nesting too deep for this recursive scanner; JSON.parse's message will do.
    if (!(error instanceof SyntaxErrorAt)) return undefined
    return { offset: error.offset, reason: error.reason, ...lineAndColumn(text, error.offset) }
  }
}

/** 1-based line and column of a 0-based offset. */
export function lineAndColumn(text: string, offset: number): { line: number; column: number } {
  let line = 1
  let lineStart = 0
  for (let index = text.indexOf('\n'); index !== -1 && index < offset;) {
    line++
    lineStart = index + 1
    index = text.indexOf('\n', lineStart)
  }
  return { line, column: offset - lineStart + 1 }
}
