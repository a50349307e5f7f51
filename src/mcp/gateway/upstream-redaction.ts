/**
 * What the gateway shows of a configured upstream (its kind, a short target, the config and its
 * messages with credentials redacted). Apart from the transport, which loads the MCP SDK's
 * client, so that `--print-config` and the CLI's start need no SDK.
 * @module
 */
import type { UpstreamConfig } from '../../config/schema.ts'

export type UpstreamKind = 'stdio' | 'http'

export function upstreamKind(config: UpstreamConfig): UpstreamKind {
  return 'url' in config ? 'http' : 'stdio'
}

/** A flag whose value is a credential: `--api-key`, `--token`, `--header`, `--password`… */
const SECRET_FLAG = /key|token|secret|passw|auth|cred|header|bearer|cookie/i

/**
 * Where the upstream is, for `list_servers` and `/readyz` (which needs no key): never headers or
 * env, and no credential a URL or command line carries. A URL loses its user info, and its query
 * and fragment show as `?***`; in a command line the value of a flag that names a credential
 * (`--api-key sk-…`, `--token=…`, `--header "Authorization: Bearer …"`) and any argument holding
 * `Bearer ` show as `***`, and an argument or flag value that is a URL is shown as one.
 */
export function upstreamTarget(config: UpstreamConfig): string {
  if ('url' in config) return shortUrl(config.url) ?? '***'
  return [config.command, ...shownArgs(config.args)].join(' ')
}

/**
 * `config` as `--print-config` shows it: env and header values as `***` (their names stay), the
 * URL and the command line's arguments as `upstreamTarget` shows them.
 */
export function redactedUpstreamConfig(config: UpstreamConfig): UpstreamConfig {
  const hidden = (values: Record<string, string>) =>
    Object.fromEntries(Object.keys(values).map((key) => [key, '***']))
  if ('url' in config)
    return { ...config, url: shortUrl(config.url) ?? '***', headers: hidden(config.headers) }
  return { ...config, args: shownArgs(config.args), env: hidden(config.env) }
}

/** A URL without user info, its query and fragment as `?***`; undefined for what is no URL. */
function shortUrl(text: string): string | undefined {
  try {
    const url = new URL(text)
    return `${url.origin}${url.pathname}${url.search || url.hash ? '?***' : ''}`
  } catch {
    return undefined
  }
}

/** An argument that is a URL (`mcp-remote https://host/mcp?key=…`), or a flag's value that is. */
const URL_ARGUMENT = /^[a-z][a-z0-9+.-]*:\/\//i

/** The command line's arguments as `upstreamTarget` shows them, one for one. */
function shownArgs(args: readonly string[]): string[] {
  const shown: string[] = []
  let hideNext = false
  for (const arg of args) {
    const flag = /^(--?[^=\s]+)(=.*)?$/s.exec(arg)
    if (hideNext && flag === null) shown.push('***')
    else if (flag !== null && SECRET_FLAG.test(flag[1]))
      shown.push(flag[2] === undefined ? arg : `${flag[1]}=***`)
    else if (/bearer\s/i.test(arg)) shown.push('***')
    else if (URL_ARGUMENT.test(arg)) shown.push(shortUrl(arg) ?? arg)
    else if (flag?.[2] !== undefined && URL_ARGUMENT.test(flag[2].slice(1)))
      shown.push(`${flag[1]}=${shortUrl(flag[2].slice(1)) ?? flag[2].slice(1)}`)
    else shown.push(arg)
    hideNext = flag !== null && flag[2] === undefined && SECRET_FLAG.test(flag[1])
  }
  return shown
}

/**
 * `message` (an upstream's error, as `lastError`, `list_servers`, `/readyz`, call errors and the
 * log show it) without the credentials its configuration holds: the SDK's and fetch's errors quote
 * the URL whole (`Request cannot be constructed from a URL that includes credentials:
 * http://user:pass@host/mcp?token=…`), which any read key saw (bench/README round 27). The URL
 * as configured and as parsed shows as `upstreamTarget`; its user info, query and fragment values,
 * header and env values, and the command line's hidden values show as `***`.
 */
export function redactUpstream(message: string, config: UpstreamConfig): string {
  // [what is replaced (the text, or where it stands whole), by what, the text's length]
  const replacements: Array<[string | RegExp, string, number]> = []
  const secret = (value: string | undefined) => {
    // Short values (`1`, `on`) would cut ordinary words out of the message.
    if (value === undefined || value.length < 4) return
    replacements.push([wholeOnly(value) ?? value, '***', value.length])
  }
  const decoded = (part: string) => {
    try {
      return decodeURIComponent(part)
    } catch {
      return part
    }
  }
  // A URL: shown as `shortUrl`, its parts that hold credentials as `***`.
  const url = (raw: string) => {
    const shown = shortUrl(raw)
    if (shown === undefined) return false
    const parsed = new URL(raw)
    replacements.push([raw, shown, raw.length], [parsed.href, shown, parsed.href.length])
    for (const part of [parsed.username, parsed.password]) {
      secret(part)
      secret(decoded(part))
    }
    secret(parsed.search.slice(1))
    secret(parsed.hash.slice(1))
    for (const value of parsed.searchParams.values()) secret(value)
    return true
  }
  if ('url' in config) {
    if (!url(config.url)) replacements.push([config.url, '***', config.url.length])
    for (const value of Object.values(config.headers)) {
      secret(value)
      secret(/^\S+\s+(.+)$/.exec(value)?.[1])
    }
  } else {
    for (const value of Object.values(config.env)) secret(value)
    const shown = shownArgs(config.args)
    config.args.forEach((arg, index) => {
      if (shown[index] === arg) return
      const value = /^[^=]*=(.*)$/s.exec(arg)?.[1]
      const hidden = shown[index] === '***' || shown[index].endsWith('=***')
      if (!hidden && (url(arg) || (value !== undefined && url(value)))) return
      secret(arg)
      secret(value)
    })
  }
  // Longest first: a URL before the query it holds.
  replacements.sort((a, b) => b[2] - a[2])
  let redacted = message
  for (const [value, shown] of replacements)
    redacted =
      typeof value === 'string' ? redacted.split(value).join(shown) : redacted.replace(value, shown)
  return redacted
}

/** A decimal number (`1000`, `-2.5`): masked only where it is not part of a longer number. */
const NUMBER_VALUE = /^[+-]?\d+(?:\.\d+)?$/

/**
 * Values of settings that are words no secret is made of: masked only where they are not part of
 * a longer word. Any other word (a password of letters) is masked wherever it appears.
 */
const PLAIN_WORDS = new Set(
  'true false yes no on off null none debug info warn warning error trace verbose silent production development staging test stdio http https json text'.split(
    ' ',
  ),
)

/**
 * Where a value that is no secret (`TIMEOUT_MS=1000`, `DEBUG=true`, `NODE_ENV=production`) is
 * masked in a message: as a whole number or word only, so that `1000` no longer turns "within
 * 10000 ms" into "within ***0 ms" (until round 43 every value of 4 characters or more was masked
 * wherever it appeared). A number is still masked wherever it stands as one (a PIN in "pin 4242",
 * "pin4242" or "4242." is), not inside a longer number. Undefined for any other value (letters
 * and digits mixed, punctuation, a word not in PLAIN_WORDS: what keys, tokens and passwords are
 * made of), which is masked wherever it appears, inside words too.
 */
function wholeOnly(value: string): RegExp | undefined {
  const escaped = value.replace(/[.+\-]/g, '\\$&')
  if (NUMBER_VALUE.test(value)) return new RegExp(`(?<!\\d|\\d\\.)${escaped}(?!\\d|\\.\\d)`, 'g')
  if (PLAIN_WORDS.has(value.toLowerCase()))
    return new RegExp(`(?<![A-Za-z])${escaped}(?![A-Za-z])`, 'g')
  return undefined
}
