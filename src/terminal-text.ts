/**
 * Text that came from elsewhere (a tool library, an imported OpenAPI spec, a server's answer or
 * error message) made safe to print on a terminal: escape sequences and control characters could
 * otherwise clear the screen (`ESC[2J`), overwrite a line (`\r`), retitle the window or write the
 * clipboard (OSC 52), or reorder what is shown (bidi overrides). Each such character is printed
 * as a visible escape (`\x1b`, `\u202e`) instead. For human output only: `--json` stays exact
 * (JSON.stringify already escapes C0 controls).
 * @module
 */

/** DEL, the C1 controls and the bidi embeddings/overrides/isolates (JSON.stringify keeps them). */
const BEYOND_C0 = '\\u007f-\\u009f\\u202a-\\u202e\\u2066-\\u2069'
/** C0 controls but tab and newline, and BEYOND_C0. */
const UNSAFE = new RegExp(`[\\u0000-\\u0008\\u000b-\\u001f${BEYOND_C0}]`, 'g')
/** The same and tab and newline too, for a value printed on one line (a table cell). */
const UNSAFE_ON_ONE_LINE = new RegExp(`[\\u0000-\\u001f${BEYOND_C0}]`, 'g')
const UNSAFE_IN_JSON = new RegExp(`[${BEYOND_C0}]`, 'g')

function visible(character: string): string {
  const code = character.charCodeAt(0)
  return code <= 0xff
    ? `\\x${code.toString(16).padStart(2, '0')}`
    : `\\u${code.toString(16).padStart(4, '0')}`
}

/** `text` with every control character but `\n` and `\t` written as a visible escape. */
export function terminalText(text: string): string {
  return text.replace(UNSAFE, visible)
}

/**
 * JSON text with the C1 controls and bidi characters JSON.stringify leaves as they are written
 * as `\u` escapes: the same JSON value, nothing a terminal acts on (they can only be in strings).
 */
export function jsonText(json: string): string {
  return json.replace(UNSAFE_IN_JSON, unicodeEscapes)
}

/** `character` as `\u` escapes, one per UTF-16 code unit (a lone surrogate is one, a pair two). */
function unicodeEscapes(character: string): string {
  let escaped = ''
  for (let index = 0; index < character.length; index += 1)
    escaped += `\\u${character.charCodeAt(index).toString(16).padStart(4, '0')}`
  return escaped
}

/** `text` with every control character, `\n` and `\t` too, written as a visible escape. */
export function terminalLine(text: string): string {
  return text.replace(UNSAFE_ON_ONE_LINE, visible)
}

/**
 * C0 controls but tab and newline, DEL, C1 controls, every format character (bidi, zero-width) and
 * lone surrogates: what `escapedControls` writes as `\u` text.
 */
const UNSAFE_IN_MESSAGE = /[\u0000-\u0008\u000b-\u001f\u007f-\u009f\p{Cf}\p{Cs}]/gu

/**
 * `text` with the characters `shownName` escapes in a quoted id (controls but `\n` and `\t`,
 * bidi and zero-width characters, lone surrogates) written as `\u` text: an error message that
 * quotes a header, a path or a key a client sent, answered in a JSON body (JSON.stringify keeps a
 * U+202E or a C1 control raw) or printed, shows it as sent, not as a terminal would act on it.
 */
export function escapedControls(text: string): string {
  return text.replace(UNSAFE_IN_MESSAGE, unicodeEscapes)
}

/** Line and paragraph separators, which some viewers break a line at. */
const SEPARATORS = /[\u2028\u2029]/g

/**
 * A text-format log line (`<time> <LEVEL> <message>`): `terminalText`, then `escapedControls` (the
 * zero-width and other format characters and lone surrogates), and every further line of the
 * message (a stack's frames, a line break a client put in a path as `%0A` or an upstream in its
 * error) indented two spaces: only an event's own first line starts with a time, so no text a
 * client or upstream sends can forge a log line.
 */
export function logLineText(text: string): string {
  return escapedControls(terminalText(text))
    .replace(SEPARATORS, unicodeEscapes)
    .replaceAll('\n', '\n  ')
}
