/**
 * Just enough of Python to describe a CRAFT tool: the `def` lines of a source text, their
 * parameters and their docstrings. Not a Python parser: it relies on the tools being ordinary
 * generated functions (checked over all 987 CRAFT tools).
 * @module
 */

export interface PythonParameter {
  /** The name without `*` / `**`. */
  name: string
  /** The annotation text, e.g. `str` or `Tuple[int, int]`. */
  annotation?: string
  /** The default value's source text, e.g. `True` or `None`. */
  defaultText?: string
  /** `*args` is `positional`, `**kwargs` is `keyword`. */
  variadic?: 'positional' | 'keyword'
}

export interface PythonFunction {
  /** The name after `def`. */
  name: string
  /** In signature order, without the bare `*` and `/` markers. */
  parameters: PythonParameter[]
  /** The docstring, cleaned like Python's `inspect.cleandoc`; absent when there is none. */
  docstring?: string
}

const OPENERS: Readonly<Record<string, string>> = { '(': ')', '[': ']', '{': '}' }
const DOCSTRING_START = /^(?:\s|#[^\n]*)*[rRuU]{0,2}("""|'''|"|')/

/**
 * The top-level functions (`def` at column 0), in source order; when there are none, the
 * functions at any indentation (a tool pasted inside another block).
 */
export function parsePythonFunctions(source: string): PythonFunction[] {
  const text = source.replace(/\r\n?/g, '\n')
  let starts = [...text.matchAll(/^def[ \t]+([A-Za-z_]\w*)[ \t]*\(/gm)]
  if (starts.length === 0) starts = [...text.matchAll(/^[ \t]*def[ \t]+([A-Za-z_]\w*)[ \t]*\(/gm)]
  const functions: PythonFunction[] = []
  for (const match of starts) {
    const open = (match.index ?? 0) + match[0].length - 1
    const close = findTopLevel(text, open + 1, ')')
    if (close === -1) continue
    const colon = findTopLevel(text, close + 1, ':')
    const parameters = splitTopLevel(text.slice(open + 1, close)).flatMap(parseParameter)
    const docstring = colon === -1 ? undefined : readDocstring(text.slice(colon + 1))
    functions.push({
      name: match[1],
      parameters,
      ...(docstring === undefined ? {} : { docstring }),
    })
  }
  return functions
}

function parseParameter(text: string): PythonParameter[] {
  const trimmed = text.trim()
  if (trimmed === '' || trimmed === '/' || trimmed === '*') return []
  const equals = findTopLevel(trimmed, 0, '=')
  const head = equals === -1 ? trimmed : trimmed.slice(0, equals)
  const colon = head.indexOf(':')
  const rawName = (colon === -1 ? head : head.slice(0, colon)).trim()
  const parameter: PythonParameter = { name: rawName.replace(/^\*{1,2}/, '') }
  if (rawName.startsWith('**')) parameter.variadic = 'keyword'
  else if (rawName.startsWith('*')) parameter.variadic = 'positional'
  if (colon !== -1) parameter.annotation = head.slice(colon + 1).trim()
  if (equals !== -1) parameter.defaultText = trimmed.slice(equals + 1).trim()
  return [parameter]
}

function readDocstring(body: string): string | undefined {
  const start = DOCSTRING_START.exec(body)
  if (!start) return undefined
  const quote = start[1]
  const contentStart = start[0].length
  const end =
    quote.length === 3 ? body.indexOf(quote, contentStart) : body.indexOf('\n', contentStart)
  const raw = body.slice(contentStart, end === -1 ? undefined : end)
  return cleanDocstring(quote.length === 3 ? raw : raw.replace(new RegExp(`${quote}\\s*$`), ''))
}

/** Python's `inspect.cleandoc`: strip the first line, dedent the rest, drop blank edges. */
export function cleanDocstring(raw: string): string {
  const lines = raw.replace(/\t/g, '        ').split('\n')
  // A loop, not Math.min(...): a docstring of 200,000 lines passed what one call's arguments
  // may hold (RangeError, round 47).
  let indent = Infinity
  for (const line of lines.slice(1)) {
    if (line.trim() !== '') indent = Math.min(indent, line.length - line.trimStart().length)
  }
  if (indent === Infinity) indent = 0
  const cleaned = [lines[0].trim(), ...lines.slice(1).map((line) => line.slice(indent).trimEnd())]
  return cleaned.join('\n').trim()
}

/** Index of the first `char` at bracket depth 0 from `from`, skipping strings; -1 if none. */
function findTopLevel(text: string, from: number, char: string): number {
  const closers: string[] = []
  for (let index = from; index < text.length; index++) {
    const current = text[index]
    if (current === '"' || current === "'") {
      index = skipString(text, index)
      continue
    }
    if (closers.length === 0 && current === char) return index
    if (Object.hasOwn(OPENERS, current)) closers.push(OPENERS[current])
    else if (current === closers.at(-1)) closers.pop()
  }
  return -1
}

function splitTopLevel(text: string): string[] {
  const pieces: string[] = []
  let start = 0
  for (
    let comma = findTopLevel(text, 0, ',');
    comma !== -1;
    comma = findTopLevel(text, start, ',')
  ) {
    pieces.push(text.slice(start, comma))
    start = comma + 1
  }
  pieces.push(text.slice(start))
  return pieces
}

/** Index of the closing quote of the string literal opening at `start`. */
function skipString(text: string, start: number): number {
  const quote = text[start]
  const triple = text.startsWith(quote.repeat(3), start)
  const delimiter = triple ? quote.repeat(3) : quote
  for (let index = start + delimiter.length; index < text.length; index++) {
    if (text[index] === '\\') index++
    else if (text.startsWith(delimiter, index)) return index + delimiter.length - 1
  }
  return text.length
}
