/**
 * Whether an API key is one an `Authorization: Bearer <key>` header carries as given: visible
 * ASCII once its surrounding spaces and line breaks are dropped (fetch drops them from a header,
 * and a key read from a file ends in one). Any other character (a space or line break inside, a
 * letter beyond ASCII) fails each call, the header quoted in the error. The client's constructor
 * and the CLI's `--api-key` / TOOLSEL_API_KEY check it (round 55, round 56).
 * @module
 */

/**
 * A character a key may not hold: anything but visible ASCII. Whitespace ends the header's key,
 * Node's HTTP parser refuses control characters, a header's bytes are read as Latin-1 (so nothing
 * past U+00FF reads back), and a Latin-1 letter matches only from clients that send Latin-1
 * bytes (the TS and Python clients), not from curl in a UTF-8 terminal. RFC 6750's token is ASCII.
 * The server's configured keys are checked with it too (config/schema.ts), untrimmed.
 */
export const UNSENDABLE_KEY_CHARACTER = /[^\x21-\x7e]/

export function isSendableApiKey(key: string): boolean {
  return !UNSENDABLE_KEY_CHARACTER.test(key.replace(/^[ \t\r\n]+|[ \t\r\n]+$/g, ''))
}
