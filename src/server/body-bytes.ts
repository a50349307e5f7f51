/**
 * Reading a request body into one buffer without holding the event loop (`bodyBytes`).
 * @module
 */
import { ToolselError } from '../errors.ts'
import { createTimeSlicer } from '../time-slicer.ts'

/**
 * A request's body as bytes in one buffer of their own (an upload's import worker and a large
 * examples body's worker, examples-body.ts, take it without a copy). With a Content-Length (the
 * body limit checked it), each chunk is copied into place as it arrives: reading it whole and
 * then copying it (`arrayBuffer()`: concat, then slice) was two 33 MB copies in one piece on the
 * event loop at the body limit. Chunks that queued up meanwhile are read without a turn of the
 * event loop between them (each read resolves at once), so the copying yields every few
 * milliseconds (copying megabytes into the buffer's fresh pages took 25-44 ms in one piece here:
 * bench/README round 16). INVALID_INPUT when the body is not as long as the header says.
 */
export async function bodyBytes(
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
  if (at !== length) {
    throw new ToolselError(
      'INVALID_INPUT',
      `The request body is not the ${length} bytes its Content-Length says.`,
    )
  }
  return bytes
}
