/**
 * Body size limit that keeps @hono/node-server's fast body path. hono's `bodyLimit` reads
 * `c.req.raw.body` first, which turns the node request into a full web `Request` with a
 * ReadableStream: a third of the per-request cost at 10k tools. Requests with a
 * `content-length` (all of them, in practice: Node's parser enforces it) are judged by the header;
 * only chunked uploads go through hono's streaming check. A body with a `content-encoding` other
 * than `identity`, or a UTF-16/UTF-32 charset, is refused (400): nothing here decompresses or
 * transcodes it.
 * @module
 */
import type { Context, MiddlewareHandler } from 'hono'
import { bodyLimit as streamingBodyLimit } from 'hono/body-limit'
import { ToolselError } from '../../errors.ts'

const IDENTITY = /^\s*(identity)?\s*$/i
const CHARSET = /;\s*charset\s*=\s*"?([^";\s]*)/i
/** Charsets that are not ASCII-compatible: their bytes read as UTF-8 are garbage. */
const WIDE_CHARSET = /^(utf-?(16|32)|ucs-?[24])/i

export interface BodyLimitOptions {
  /** Largest accepted body in bytes. */
  maxSize: number
  /** Builds the response for a body over the limit. */
  onError: (c: Context) => Response | Promise<Response>
}

export function bodyLimit(options: BodyLimitOptions): MiddlewareHandler {
  const streaming = streamingBodyLimit(options)
  return async (c, next) => {
    // Bodies are read as sent: a compressed one would be parsed as garbage ("Malformed JSON").
    const encoding = c.req.header('content-encoding')
    if (encoding !== undefined && !IDENTITY.test(encoding)) {
      throw new ToolselError(
        'INVALID_INPUT',
        `Content-Encoding "${encoding.slice(0, 64)}" is not supported: send the request body uncompressed (no content-encoding header).`,
      )
    }
    // Bodies are decoded as UTF-8: a UTF-16 or UTF-32 body would be read as garbage.
    const charset = CHARSET.exec(c.req.header('content-type') ?? '')?.[1]
    if (charset !== undefined && WIDE_CHARSET.test(charset)) {
      throw new ToolselError(
        'INVALID_INPUT',
        `charset "${charset.slice(0, 64)}" is not supported: send the request body as UTF-8.`,
      )
    }
    const length = c.req.header('content-length')
    if (length === undefined || c.req.header('transfer-encoding') !== undefined) {
      return streaming(c, next)
    }
    if (Number.parseInt(length, 10) > options.maxSize) return options.onError(c)
    await next()
  }
}
