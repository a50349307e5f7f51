/**
 * Transfer codings other than `chunked` are refused before anything reads the body: Node's parser
 * takes a request whose `Transfer-Encoding` ends in `chunked` (`gzip, chunked`) as chunked and
 * hands on the bytes inside the chunks, which are still gzip (or whatever the client applied
 * first): they were read, counted and parsed as if they were the body. Nothing here decodes a
 * transfer coding, so, as RFC 9112 section 6.1 has it ("A server that receives a request message
 * with a transfer coding it does not understand SHOULD respond with 501 (Not Implemented)"), such
 * a request is answered 501 NOT_IMPLEMENTED with `Connection: close` (its body is left unread)
 * on every route, `/mcp` included. A `Transfer-Encoding` Node's parser refuses itself (one that
 * does not end in `chunked`) is its 400 (client-error.ts).
 * @module
 */
import type { MiddlewareHandler } from 'hono'
import { ToolselError } from '../../errors.ts'

/** Whether `header` (every `Transfer-Encoding` field, joined by commas) is exactly `chunked`. */
export function isPlainChunked(header: string): boolean {
  const codings = header.split(',').filter((coding) => coding.trim() !== '')
  return codings.length === 1 && codings[0].trim().toLowerCase() === 'chunked'
}

/** Answers 501 NOT_IMPLEMENTED to a request sent with any transfer coding but plain `chunked`. */
export function refuseTransferCodings(): MiddlewareHandler {
  return async (c, next) => {
    const header = c.req.header('transfer-encoding')
    if (header === undefined || isPlainChunked(header)) return next()
    c.header('connection', 'close')
    throw new ToolselError(
      'NOT_IMPLEMENTED',
      `Transfer-Encoding "${header.slice(0, 64)}" is not supported: send the body with Content-Length or "Transfer-Encoding: chunked" alone (no other transfer coding).`,
    )
  }
}
