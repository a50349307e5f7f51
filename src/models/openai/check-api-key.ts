/**
 * The start-up check of `toolsel serve` when a configured planner or selector is an `openai:`
 * model: one `GET <baseUrl>/models` with the configured key. A 401 or 403 means every call of
 * the model would fail and fall back (the request still answers 200, `components.fallbacks`
 * says so), so the server refuses to start with the status and the endpoint instead. Anything
 * else the check can't confirm (unreachable, no answer in time, another status: some servers
 * have no `/models`) is a warning only: the endpoint may come up later, and the fallbacks cover
 * it meanwhile.
 * @module
 */
import { ToolselError } from '../../errors.ts'
import type { Logger } from '../../log.ts'
import { readResponseText } from './read-response-text.ts'

/** The check waits at most this long (or `timeoutMs`, if shorter) before warning and starting. */
export const API_KEY_CHECK_MAX_MS = 5_000
/** Characters of the endpoint's answer kept in the message. */
const MAX_BODY_CHARS = 200

export interface ApiKeyCheckOptions {
  baseUrl: string
  apiKey: string
  timeoutMs: number
  /** The configured ids that call the endpoint, named in the message. */
  users: string[]
  logger: Logger
  fetch?: typeof fetch
}

/** The planner/selector ids (configured and fallbacks) that are `openai:` models. */
export function openAiModelUsers(ids: Array<string | undefined>): string[] {
  const users = ids.filter(
    (id): id is string => id !== undefined && /^(llm:)?openai:/.test(id.trim()),
  )
  return [...new Set(users)]
}

/**
 * Throws INVALID_CONFIG when the endpoint answers 401 or 403; warns when it can't tell.
 * Returns the HTTP status it got (0 when none).
 */
export async function checkOpenAiApiKey(options: ApiKeyCheckOptions): Promise<number> {
  const url = `${options.baseUrl.replace(/\/+$/, '')}/models`
  const shown = shownMessage(url, options.apiKey)
  const limitMs = Math.min(options.timeoutMs, API_KEY_CHECK_MAX_MS)
  const users = options.users.join(', ')
  let status = 0
  let body = ''
  try {
    const response = await (options.fetch ?? globalThis.fetch)(url, {
      headers: options.apiKey ? { authorization: `Bearer ${options.apiKey}` } : {},
      signal: AbortSignal.timeout(limitMs),
    })
    status = response.status
    // Only a refusal's answer is quoted, and only its start: a body that never ends (or ends
    // after gigabytes) must neither fill the memory nor hide the status it came with.
    if (status === 401 || status === 403) body = await leadingText(response, MAX_BODY_CHARS)
    else await response.body?.cancel().catch(() => {})
  } catch (error) {
    const reason =
      error instanceof Error && error.name === 'TimeoutError'
        ? `no answer within ${limitMs} ms`
        : error instanceof Error && error.cause instanceof Error
          ? error.cause.message
          : String(error)
    options.logger.warn(
      shown(
        `Could not check the OpenAI-compatible endpoint of ${users}: GET ${url}: ${reason}. Starting anyway; its calls fall back while it fails.`,
      ),
    )
    return 0
  }
  if (status === 401 || status === 403) {
    const key = options.apiKey ? 'refuses the API key' : 'wants an API key and none is set'
    throw new ToolselError(
      'INVALID_CONFIG',
      shown(
        `The OpenAI-compatible endpoint of ${users} ${key}: GET ${url} answered HTTP ${status}${body ? ` (${body.replace(/\s+/g, ' ').trim()})` : ''}. Set models.openai.apiKey or TOOLSEL_OPENAI_API_KEY to a key it accepts; every call would fail and fall back.`,
      ),
      { details: { url: shown(url), status, users: options.users } },
    )
  }
  if (status < 200 || status >= 300) {
    options.logger.warn(
      shown(
        `Could not check the API key of the OpenAI-compatible endpoint of ${users}: GET ${url} answered HTTP ${status}. Starting anyway.`,
      ),
    )
  }
  return status
}

/**
 * The first `maxChars` characters of `response`'s body (at most 4 bytes each are read), then the
 * rest is cancelled; what arrived before a failed or timed-out read, never an error.
 */
async function leadingText(response: Response, maxChars: number): Promise<string> {
  const { text } = await readResponseText(response, maxChars * 4, { partial: true })
  return text.slice(0, maxChars)
}

/**
 * What rewrites a message of the check for the log and the error: the endpoint's user info (a
 * `https://user:password@host` base URL; fetch refuses it and quotes the URL whole) and its query
 * as `***`, and the API key as `***` wherever it is (an endpoint's answer may echo it).
 */
function shownMessage(url: string, apiKey: string): (message: string) => string {
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
