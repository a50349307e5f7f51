/**
 * Reading a request body into one buffer without holding the event loop (`bodyBytes`).
 * @module
 */
import type { IncomingMessage } from 'node:http'
import type { Context } from 'hono'
import { ToolselError } from '../errors.ts'
import { createTimeSlicer } from '../time-slicer.ts'

/**
 * A request's body as bytes in one buffer of their own (an upload's import worker and a large
 * examples body's worker, examples-body.ts, take it without a copy). With a Content-Length (the
 * body limit checked it), each chunk is copied into place as it arrives: reading it whole and
 * then copying it (`arrayBuffer()`: concat, then slice) was two 33 MB copies in one piece on the
 * event loop at the body limit. INVALID_INPUT when the body is not as long as the header says; a
 * client that goes away mid-body fails it with Node's `Error: aborted` (ECONNRESET), which the
 * app's error handler answers ABORTED (error-response.ts).
 *
 * Served by `@hono/node-server`, such a body is read from the Node request (`c.env.incoming`)
 * itself, one `data` event per chunk the socket gave, as bare Node reads it: through hono's web
 * stream (`Readable.toWeb`, a promise and a queue per 64 KiB chunk) the read took ~10-15% more
 * server CPU (256 MiB over loopback; bench/README "Round 50: request bodies read from the Node
 * request (srv55)"). Elsewhere (another runtime, a chunked body, one whose web stream was made
 * before), the web stream is read (`bodyBytesOfRequest`); one that hono read already (its
 * `c.req.json()`, `c.req.text()`) is taken from hono's cache, and one read otherwise before this
 * route is an INTERNAL error that says so (it was a TypeError "locked", or "not the N bytes").
 * hono caches such a body as its decoded text, and gives that text encoded again: not the bytes
 * sent when they were not all UTF-8 (each bad byte is then U+FFFD, where our own read answers
 * INVALID_INPUT naming it) or began with a byte-order mark (dropped).
 */
export async function bodyBytes(c: Context): Promise<Uint8Array> {
  const contentLength = c.req.header('content-length')
  // Read already by hono (`c.req.json()` in a middleware before this route): from its cache, as
  // text encoded again (see above).
  if (Object.keys(c.req.bodyCache).length > 0) return new Uint8Array(await c.req.arrayBuffer())
  const length = contentLength === undefined ? Number.NaN : Number(contentLength)
  const incoming = (c.env as { incoming?: IncomingMessage } | undefined)?.incoming
  if (
    incoming !== undefined &&
    Number.isSafeInteger(length) &&
    length >= 0 &&
    c.req.header('transfer-encoding') === undefined &&
    untouched(incoming)
  )
    return incomingBytes(incoming, length)
  if (c.req.raw.bodyUsed || c.req.raw.body?.locked === true) throw alreadyRead()
  return bodyBytesOfRequest(c.req.raw, contentLength)
}

/**
 * Whether `incoming`'s body can be read here from its start: nothing read it or is reading it,
 * its chunks are bytes, and it was not cut off before (a body that came whole before its client
 * went away is recovered by @hono/node-server's own read, the web stream). A web stream made
 * over it (`c.req.raw.body` looked at, as hono's own `bodyLimit` does before calling the route)
 * paused it and listens to its `data`: read here as well, the chunks went to both and the web
 * stream, never read, paused it for good at its high-water mark (a 4 MiB PUT was never
 * answered); such a body is read from that web stream.
 */
function untouched(incoming: IncomingMessage): boolean {
  return (
    !incoming.readableDidRead &&
    incoming.readableFlowing === null &&
    incoming.listenerCount('data') === 0 &&
    incoming.listenerCount('readable') === 0 &&
    !incoming.destroyed &&
    incoming.readableEncoding === null &&
    typeof incoming.on === 'function'
  )
}

/** The body was read before the route by a middleware, not through hono's cache. */
function alreadyRead(): ToolselError {
  return new ToolselError(
    'INTERNAL',
    'The request body was already read before this route (by a middleware that read c.req.raw.body), so it cannot be read again.',
  )
}

function notItsLength(length: number): ToolselError {
  return new ToolselError(
    'INVALID_INPUT',
    `The request body is not the ${length} bytes its Content-Length says.`,
  )
}

/** Node's error for a body cut off by its client (what the request emits: error-response.ts). */
function clientGone(): Error {
  return Object.assign(new Error('aborted'), { code: 'ECONNRESET' })
}

/**
 * `incoming`'s body of `length` bytes (its Content-Length), each chunk copied into place in its
 * own `data` event: a turn of the event loop per socket read, nothing held. More bytes than
 * `length` (which Node's parser never passes on) fail it at once and the rest is not kept.
 */
function incomingBytes(incoming: IncomingMessage, length: number): Promise<Uint8Array> {
  const bytes = new Uint8Array(length)
  let at = 0
  return new Promise((resolve, reject) => {
    let settled = false
    const finish = (error?: unknown): void => {
      if (settled) return
      settled = true
      incoming.off('data', onData).off('end', onEnd).off('error', onError).off('close', onClose)
      if (error === undefined) resolve(bytes)
      else reject(error)
    }
    const onData = (chunk: Buffer): void => {
      if (at + chunk.length > length) return finish(notItsLength(length))
      bytes.set(chunk, at)
      at += chunk.length
    }
    const onEnd = (): void => finish(at === length ? undefined : notItsLength(length))
    const onError = (error: Error): void => finish(error)
    // Closed before its end without an error event: cut off all the same.
    const onClose = (): void => finish(incoming.readableEnded ? undefined : clientGone())
    incoming.on('data', onData).on('end', onEnd).on('error', onError).on('close', onClose)
    incoming.resume()
    // Already ended (an empty body, or one read whole into the stream's buffer): `end` fires
    // once the buffer is read, which the `data` listener does.
  })
}

/**
 * `bodyBytes` of a web `Request`: its stream read chunk by chunk. Chunks that queued up meanwhile
 * are read without a turn of the event loop between them (each read resolves at once), so the
 * copying yields every few milliseconds (copying megabytes into the buffer's fresh pages took
 * 25-44 ms in one piece here: bench/README round 16).
 */
export async function bodyBytesOfRequest(
  request: Request,
  contentLength: string | undefined,
): Promise<Uint8Array> {
  const length = contentLength === undefined ? Number.NaN : Number(contentLength)
  if (!request.body || !Number.isSafeInteger(length) || length < 0)
    return new Uint8Array(await request.arrayBuffer())
  const bytes = new Uint8Array(length)
  let at = 0
  const reader = request.body.getReader()
  const slicer = createTimeSlicer()
  for (;;) {
    const { done, value } = await reader.read()
    if (done) break
    if (at + value.length > length) {
      at = Number.POSITIVE_INFINITY
      await reader.cancel()
      break
    }
    bytes.set(value, at)
    at += value.length
    await slicer.next()
  }
  if (at !== length) throw notItsLength(length)
  return bytes
}
