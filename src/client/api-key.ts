/**
 * Whether an API key is one an `Authorization: Bearer <key>` header carries as given: visible
 * ASCII once its surrounding spaces and line breaks are dropped (fetch drops them from a header,
 * and a key read from a file ends in one). Any other character (a space or line break inside, a
 * letter beyond ASCII) fails each call, the header quoted in the error. The client's constructor
 * and the CLI's `--api-key` / TOOLSEL_API_KEY check it (round 55, round 56).
 * @module
 */
export function isSendableApiKey(key: string): boolean {
  return !/[^\x21-\x7e]/.test(key.replace(/^[ \t\r\n]+|[ \t\r\n]+$/g, ''))
}
