/**
 * A response body read as UTF-8 text up to a byte bound: an endpoint a config names (a user may be
 * tricked into loading one) must not grow memory with an answer that never ends. The caller's
 * fetch signal still bounds the time (a body that drips).
 * @module
 */

export interface ResponseText {
  /** The text of the bytes read (a chunk that crossed the bound is kept whole). */
  text: string
  /** Whether the body was longer than the bound; the rest was cancelled unread. */
  cut: boolean
  /**
   * With `partial`: why the read ended before the body did (the fetch signal's time ran out, the
   * connection broke); `text` is what arrived. Absent when the body was read to its end or cut.
   */
  error?: unknown
}

/**
 * Up to `maxBytes` of `response`'s body: reading stops (and the rest is cancelled) as soon as more
 * arrived. With `partial`, a failed or aborted read gives what arrived before it, and the error
 * as `error`, instead of throwing it.
 */
export async function readResponseText(
  response: Response,
  maxBytes: number,
  options: { partial?: boolean } = {},
): Promise<ResponseText> {
  if (!response.body) return { text: '', cut: false }
  const reader = response.body.getReader()
  const decoder = new TextDecoder()
  let text = ''
  let size = 0
  let cut = false
  let failure: { error: unknown } | undefined
  try {
    for (;;) {
      const { done, value } = await reader.read()
      if (done) break
      size += value.byteLength
      text += decoder.decode(value, { stream: true })
      if (size > maxBytes) {
        cut = true
        break
      }
    }
  } catch (error) {
    if (!options.partial) throw error
    failure = { error }
  } finally {
    // A no-op on a body read to its end; otherwise the rest is not read.
    await reader.cancel().catch(() => {})
  }
  return { text: text + decoder.decode(), cut, ...failure }
}
