/**
 * zod validation at the route, answering in our error shape instead of zod's raw result.
 * @module
 */
import { zValidator } from '@hono/zod-validator'
import type { Context, Next } from 'hono'
import type { z } from 'zod'
import { closestName } from '../config/closest-name.ts'
import { describeIssues, ToolselError } from '../errors.ts'
import { decodeBody, type InvalidUtf8Error } from '../read-text-file.ts'

function invalid(
  prefix: string,
  error: { issues: z.core.$ZodIssue[] },
  schema?: z.ZodType,
): ToolselError {
  return new ToolselError(
    'INVALID_INPUT',
    `${prefix}: ${describeIssues(error)}${didYouMean(error.issues, schema)}.`,
    { details: { issues: error.issues } },
  )
}

/** INVALID_INPUT for a JSON body that `schema` refused with `issues` (jsonBody's answer). */
export function invalidBody(issues: z.core.$ZodIssue[], schema: z.ZodType): ToolselError {
  return invalid('Invalid request body', { issues }, schema)
}

/**
 * ` (did you mean "format"?)` when the last problem `describeIssues` shows is a top-level key the
 * schema does not take and one of its keys is close (`?fromat=openai`, `{"instructions": …}`),
 * else ''.
 */
function didYouMean(issues: readonly z.core.$ZodIssue[], schema?: z.ZodType): string {
  const issue = issues[Math.min(issues.length, 5) - 1]
  if (issue?.code !== 'unrecognized_keys' || issue.path.length > 0) return ''
  const shape = (schema as { shape?: Record<string, unknown> } | undefined)?.shape
  if (shape === undefined || issue.keys.length !== 1) return ''
  const closest = closestName(issue.keys[0], Object.keys(shape))
  return closest === undefined ? '' : ` (did you mean "${closest}"?)`
}

/**
 * The most JSON values a request body of the query routes may hold, counted before it is parsed
 * (`countJsonValues`). The body limit (`server.bodyLimitBytes`, 32 MiB) is sized for library
 * uploads, and `JSON.parse` of 32 MB of small numbers held the event loop 1.3-1.7 s in one piece
 * (`1,1,1…` as an unknown key, an instruction or the ids of a tools batch; bench/README round
 * 21), with any key or none. The largest valid bodies hold far fewer: 1,000 ids, 1,024
 * completions, 100 gold tools; strings' contents are not counted.
 */
export const MAX_BODY_VALUES = 100_000

/**
 * Middleware: rejects bodies that aren't sent as JSON (so the validator doesn't see an empty
 * object), bodies that are not UTF-8 (`bodyText`), and JSON bodies holding more than `maxValues`
 * values (413 PAYLOAD_TOO_LARGE) before they are parsed. The text is read here once; the
 * validator parses the same cached text.
 */
export function jsonRequest(maxValues = MAX_BODY_VALUES) {
  const counted = countedJsonBody(maxValues)
  return (c: Context, next: Next): Promise<void> => {
    assertJsonContentType(c)
    return counted(c, next)
  }
}

/** `jsonRequest` less its content-type check, for a caller that made it (examples-body.ts). */
export function countedJsonBody(maxValues = MAX_BODY_VALUES) {
  return async (c: Context, next: Next): Promise<void> => {
    const text = await bodyText(c)
    await yieldAfterLargeBody(text)
    if (countJsonValues(text, maxValues) > maxValues) throw tooManyValues(maxValues)
    await yieldAfterLargeBody(text)
    await next()
  }
}

/** INVALID_INPUT unless the request says its body is JSON (`jsonRequest`'s first check). */
export function assertJsonContentType(c: Context): void {
  const type = c.req.header('content-type') ?? ''
  if (!/^application\/([\w.-]+\+)?json\b/i.test(type)) {
    throw new ToolselError(
      'INVALID_INPUT',
      'Send the request body as JSON with "content-type: application/json".',
    )
  }
}

/** PAYLOAD_TOO_LARGE for a JSON body of more than `maxValues` values (`jsonRequest`). */
export function tooManyValues(maxValues: number): ToolselError {
  return new ToolselError(
    'PAYLOAD_TOO_LARGE',
    `The request body holds more than ${maxValues.toLocaleString('en-US')} JSON values (array items and object members); send fewer at once.`,
    { details: { maxValues } },
  )
}

/**
 * Bodies of more than this many characters yield to the event loop between being decoded, counted
 * and parsed and validated (the route's own work): in one piece, a 20 MB examples body held the
 * loop 1.1 s at load 11 (round 48, hard52; since round 49 such examples bodies are checked on a
 * worker thread: examples-body.ts). Query bodies (4 MiB at most) don't wait.
 */
const YIELD_ABOVE_CHARS = 4 * 1024 * 1024

async function yieldAfterLargeBody(text: string): Promise<void> {
  if (text.length > YIELD_ABOVE_CHARS) await new Promise((resolve) => setImmediate(resolve))
}

/**
 * The request body as text, cached where `c.req.text()` and `c.req.json()` (the validator) find
 * it, or INVALID_INPUT naming the first byte that is not UTF-8 (`decodeUtf8`, the check of tool
 * files read from disk): `text()` alone would read such bytes as U+FFFD, silently changing an
 * instruction or a tool id. A byte-order mark first is dropped, as `text()` drops it.
 */
async function bodyText(c: Context): Promise<string> {
  const cached = (c.req.bodyCache as { text?: Promise<string> }).text
  return cached ?? cacheBodyText(c, new Uint8Array(await c.req.raw.arrayBuffer()))
}

/** `bytes` decoded as `bodyText` decodes a body, and cached where it caches it. */
export function cacheBodyText(c: Context, bytes: Uint8Array): string {
  const text = decodeBody(bytes, notUtf8Body)
  // hono keeps the promise of each reading there (its types say the value).
  ;(c.req.bodyCache as { text?: Promise<string> }).text = Promise.resolve(text)
  return text
}

/** The answer to a request body that is not UTF-8 (`decodeBody`'s `notUtf8`). */
export function notUtf8Body(error: InvalidUtf8Error): ToolselError {
  return new ToolselError(
    'INVALID_INPUT',
    `The request body is not UTF-8 text at byte ${error.offset}: send JSON as UTF-8.`,
    { cause: error, details: { byte: error.offset } },
  )
}

/** `jsonRequest()` with MAX_BODY_VALUES: the query routes' JSON check. */
export const requireJson = jsonRequest()

/**
 * The JSON values of `text`, counted as the `,` `[` and `{` outside strings (a value other than
 * an array's first item or an object's first member follows a comma; a string's own commas and
 * brackets are skipped), stopping once past `stopAbove`. Linear: strings are skipped with
 * `indexOf`, and an escaped quote looks back only over its own run of backslashes. Text that is
 * not JSON is counted all the same; JSON.parse then says what is wrong with it.
 */
export function countJsonValues(text: string, stopAbove = Infinity): number {
  let count = 0
  let at = 0
  while (at < text.length) {
    const quote = text.indexOf('"', at)
    const end = quote === -1 ? text.length : quote
    for (let index = at; index < end; index += 1) {
      const code = text.charCodeAt(index)
      // ',' '[' '{'
      if ((code === 44 || code === 91 || code === 123) && ++count > stopAbove) return count
    }
    if (quote === -1) break
    let close = quote
    for (;;) {
      close = text.indexOf('"', close + 1)
      if (close === -1) return count
      let backslashes = 0
      while (text.charCodeAt(close - 1 - backslashes) === 92) backslashes += 1
      if (backslashes % 2 === 0) break
    }
    at = close + 1
  }
  return count
}

/**
 * zValidator's hook and options for one target: invalid input is thrown as INVALID_INPUT with
 * `prefix`, and the schema runs zod's synchronous parse. The request schemas have no
 * asynchronous refinements, and zValidator's default `safeParseAsync` costs three times as much
 * (0.70 against 0.23 µs for a `/v1/select-tools` body). The cast bridges zValidator's own copy of
 * zod's types.
 */
function checks<T extends z.ZodType>(
  prefix: string,
  schema: T,
  fast?: (value: unknown) => unknown,
) {
  return [
    (result: { success: boolean; error?: { issues: z.core.$ZodIssue[] } }) => {
      if (!result.success) throw invalid(prefix, result.error!, schema)
    },
    {
      validationFunction: (schema: T, value: unknown) => {
        const data = fast?.(value)
        return (data === undefined ? schema.safeParse(value) : { success: true, data }) as never
      },
    },
  ] as const
}

/**
 * Validates the JSON body against `schema`. Use after `requireJson`. `fast`: a check of the
 * common bodies that returns what `schema` would (e.g. `selectToolsFastPath`) or undefined, when
 * `schema` then parses the body.
 */
export function jsonBody<T extends z.ZodType>(
  schema: T,
  fast?: (value: unknown) => z.output<T> | undefined,
) {
  return zValidator('json', schema, ...checks<T>('Invalid request body', schema, fast))
}

export function queryParams<T extends z.ZodType>(schema: T) {
  return zValidator('query', schema, ...checks<T>('Invalid query parameters', schema))
}

export function pathParams<T extends z.ZodType>(schema: T) {
  return zValidator('param', schema, ...checks<T>('Invalid path', schema))
}
