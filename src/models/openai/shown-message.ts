/**
 * Hides an OpenAI-compatible endpoint's secrets in the messages that name it: the start-up key
 * check's (check-api-key.ts) and every chat call's (chat-completions-client.ts), whose messages
 * reach the log, `components.fallbacks` and `/readyz` `degraded`.
 * @module
 */

/**
 * What rewrites a message about an OpenAI-compatible endpoint for the log, an error or `/readyz`: the endpoint's user info (a
 * `https://user:password@host` base URL; fetch refuses it and quotes the URL whole) and its query
 * as `***`, and the API key as `***` wherever it is (an endpoint's answer may echo it).
 */
export function shownMessage(url: string, apiKey: string): (message: string) => string {
  const secrets: string[] = []
  const secret = (value: string) => {
    // Short values (`1`, `a`) would cut ordinary words out of the message.
    if (value.length >= 4) secrets.push(value)
  }
  secret(apiKey)
  let replaced: Array<[string, string]> = []
  try {
    const parsed = new URL(url)
    const short = `${parsed.protocol}//${parsed.username || parsed.password ? '***@' : ''}${parsed.host}${parsed.pathname}${parsed.search || parsed.hash ? '?***' : ''}`
    replaced = [
      [url, short],
      [parsed.href, short],
    ]
    for (const part of [parsed.username, parsed.password, parsed.search.slice(1)]) {
      secret(part)
      try {
        secret(decodeURIComponent(part))
      } catch {
        // Not %-encoded text: the part as written is enough.
      }
    }
  } catch {
    // Not a URL: fetch's error says so, nothing in it to hide but the key.
  }
  const all = [...replaced, ...secrets.map((value): [string, string] => [value, '***'])].sort(
    (a, b) => b[0].length - a[0].length,
  )
  return (message) => all.reduce((text, [value, by]) => text.split(value).join(by), message)
}
