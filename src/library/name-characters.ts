/**
 * Characters a tool's id or name should not hold: they make it display as another tool
 * (`rtl\u202etxt.exe` reads `rtlexe.txt`), write terminal escapes or a line break into whatever
 * shows it (`\u001b[2J` clears the screen), or can't be sent back as written (a lone surrogate).
 * @module
 */
import { escapedControls } from '../terminal-text.ts'
import type { IdList } from './id-table.ts'

/**
 * Warned of on import (the tools are imported as they are), skipped by the gateway: control
 * characters (C0, DEL, C1), the bidirectional embeddings, overrides and isolates (U+202A-202E,
 * U+2066-2069) and lone surrogates. Other format characters are taken: real catalogs hold them harmlessly (a ZWJ in an
 * emoji, a U+200B pasted before an API name in ToolBench).
 */
const REFUSED_IN_NAME = /[\p{Cc}\u202a-\u202e\u2066-\u2069\p{Cs}]/u

/**
 * The stricter rule for an MCP upstream's tool names (a tool name is what a model calls, and
 * the MCP specification allows only a short identifier): every format character is refused too.
 */
const REFUSED_IN_UPSTREAM_NAME = /[\p{Cc}\p{Cf}\p{Cs}]/u

/**
 * The longest MCP tool name, in characters: the MCP specification's "1 to 128" (the SDK warns
 * past it). What the gateway takes from an upstream, and what a `tools/call` may name.
 */
export const MAX_TOOL_NAME_LENGTH = 128

export interface RefusedCharacter {
  /** `U+202E`. */
  codePoint: string
  /** Its index in the text, in UTF-16 code units. */
  index: number
}

/**
 * The first character of `text` that a tool id or name may not hold, or undefined when there
 * is none; `anyFormat` refuses every format character (Cf) too, as the gateway does.
 */
export function refusedNameCharacter(
  text: string,
  options: { anyFormat?: boolean } = {},
): RefusedCharacter | undefined {
  const bad = (options.anyFormat ? REFUSED_IN_UPSTREAM_NAME : REFUSED_IN_NAME).exec(text)
  if (!bad) return undefined
  const code = bad[0].codePointAt(0)!.toString(16).toUpperCase().padStart(4, '0')
  return { codePoint: `U+${code}`, index: bad.index }
}

/** A tool's field that holds a character `refusedNameCharacter` finds. */
export interface UnshowableField extends RefusedCharacter {
  field: 'id' | 'name'
}

/**
 * The tools whose id or name holds a character `refusedNameCharacter` finds, in order, each with
 * those fields (name first): what an import warns of and lists in its summary.
 */
export function* unshowableTools<T extends { id: string; name?: unknown }>(
  tools: Iterable<T>,
): Generator<{ tool: T; position: number; fields: UnshowableField[] }> {
  let position = -1
  for (const tool of tools) {
    position += 1
    let fields: UnshowableField[] | undefined
    for (const field of ['name', 'id'] as const) {
      const text = tool[field]
      if (typeof text !== 'string') continue
      const bad = refusedNameCharacter(text)
      if (bad !== undefined) (fields ??= []).push({ field, ...bad })
    }
    if (fields !== undefined) yield { tool, position, fields }
  }
}

/**
 * Positions (ascending) of the ids in `ids` that hold a character `refusedNameCharacter` finds:
 * what an import would have warned of, for an index saved before imports did (a load checks it).
 * A list of an index's bytes (`PackedIds`) names the few ids that may hold one without decoding
 * the others; an array is checked id by id.
 */
export function unshowableIdPositions(ids: IdList & { suspectPositions?(): number[] }): number[] {
  const positions: number[] = []
  const candidates = ids.suspectPositions?.()
  const check = (position: number) => {
    const id = ids.at(position)
    if (id !== undefined && refusedNameCharacter(id) !== undefined) positions.push(position)
  }
  if (candidates !== undefined) candidates.forEach(check)
  else for (let position = 0; position < ids.length; position += 1) check(position)
  return positions
}

/** Longest part of a name a message shows (`shownName`), in UTF-16 code units. */
const SHOWN_NAME_LENGTH = 64

/**
 * A tool's name or id for a warning, log line or error message: cut to 64 characters ("…" after
 * the quotes when cut), as a JSON string (C0 controls escaped) with the C1 controls, every format
 * character (bidi, zero-width) and lone surrogates written as `\u` escapes too: nothing a
 * terminal acts on, nothing invisible, whether it is printed or sent in a JSON body (where
 * JSON.stringify would leave a U+202E as it is). Every message that quotes an id a client or a
 * file gave uses it.
 */
export function shownName(name: unknown): string {
  return shownText(typeof name === 'string' ? name : String(name), SHOWN_NAME_LENGTH)
}

/** `text` cut at `length`, quoted and escaped as `shownName` says. */
function shownText(text: string, length: number): string {
  const shown = escapedControls(JSON.stringify(text.slice(0, length)))
  return text.length > length ? `${shown}…` : shown
}

/**
 * `shownName` without its quotes (`rtl\u202etxt.exe`, "…" at the end when cut): an id in a JSON
 * field (the PUT answer's `import.suspiciousIds`), where the quotes would be doubled.
 */
export function escapedName(name: unknown): string {
  const shown = shownName(name)
  return shown.endsWith('…') ? `${shown.slice(1, -2)}…` : shown.slice(1, -1)
}

/**
 * A request path as an HTTP error message quotes it: escaped as `escapedName` (controls, bidi and
 * zero-width characters, which a client may send percent-encoded, as `\u` text), cut at 1,024
 * characters, so a message shows the path as it is, not as a terminal would reorder it.
 */
export function escapedPath(path: string): string {
  const shown = shownText(path, 1024)
  return shown.endsWith('…') ? `${shown.slice(1, -2)}…` : shown.slice(1, -1)
}

/**
 * Ids for a message, each `shownName`, comma-separated: the first `limit`, then "and N more".
 */
export function shownNames(names: readonly unknown[], limit = 20): string {
  const listed = names.slice(0, limit).map(shownName).join(', ')
  return names.length > limit ? `${listed} and ${names.length - limit} more` : listed
}
