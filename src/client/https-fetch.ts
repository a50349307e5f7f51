/**
 * The fetch of a client given `ca` (ToolselClientOptions): node:https with an agent that trusts
 * those CAs and keeps connections alive. Node's global fetch takes no CA of its own (only
 * NODE_EXTRA_CA_CERTS, read once at start-up for the whole process) without the undici package.
 * Loaded only when `ca` is given, so the client imports nothing of Node's otherwise.
 * @module
 */
import { Agent, request } from 'node:https'
import { Readable } from 'node:stream'

/** What `ca` takes: PEM text or bytes, one or several (as `tls.connect`'s `ca`). */
export type CaCertificates = string | Uint8Array | ReadonlyArray<string | Uint8Array>

/** Answers with no body, whatever the server sends (the Response constructor refuses one). */
const NO_BODY = new Set([204, 205, 304])

/**
 * A fetch for what ToolselClient sends (a string body, a header record, a signal; redirects
 * are answered, never followed) over https with `ca` as the trusted CAs: Node's own roots are
 * not, as with `tls.connect({ca})`.
 */
export function httpsFetch(ca: CaCertificates): typeof fetch {
  const agent = new Agent({
    ca: (Array.isArray(ca) ? ca : [ca]).map((pem: string | Uint8Array) =>
      typeof pem === 'string' ? pem : Buffer.from(pem),
    ),
    keepAlive: true,
  })
  return (input, init = {}) =>
    new Promise<Response>((resolve, reject) => {
      const method = init.method ?? 'GET'
      const outgoing = request(
        String(input),
        {
          method,
          headers: init.headers as Record<string, string> | undefined,
          agent,
          signal: init.signal ?? undefined,
        },
        (incoming) => {
          const headers = new Headers()
          for (let index = 0; index + 1 < incoming.rawHeaders.length; index += 2) {
            headers.append(incoming.rawHeaders[index], incoming.rawHeaders[index + 1])
          }
          const status = incoming.statusCode ?? 0
          const empty = method === 'HEAD' || NO_BODY.has(status)
          try {
            const body = empty ? null : (Readable.toWeb(incoming) as ReadableStream<Uint8Array>)
            if (empty) incoming.resume()
            resolve(new Response(body, { status, statusText: incoming.statusMessage, headers }))
          } catch (error) {
            // A status fetch does not take (under 200 or over 599), a header it refuses.
            incoming.destroy()
            reject(error)
          }
        },
      )
      outgoing.once('error', reject)
      outgoing.end(init.body as string | undefined)
    })
}
