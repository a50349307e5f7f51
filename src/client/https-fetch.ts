/**
 * The fetch of a client given `ca` (ToolselClientOptions): undici's own fetch (the one Node's
 * global fetch is built from) with an Agent whose connections trust those CAs and are kept alive.
 * Node's global fetch takes no CA of its own (only NODE_EXTRA_CA_CERTS, read once at start-up for
 * the whole process), and a dispatcher of the undici package given to it is another copy's
 * (Node refuses one from a different version), so both come from the package. Loaded only when
 * `ca` is given, so the client imports nothing of Node's or undici's otherwise.
 * @module
 */
import { Agent, fetch as undiciFetch } from 'undici'

/** What `ca` takes: PEM text or bytes, one or several (as `tls.connect`'s `ca`). */
export type CaCertificates = string | Uint8Array | ReadonlyArray<string | Uint8Array>

/**
 * A fetch over https with `ca` as the trusted CAs: Node's own roots are not, as with
 * `tls.connect({ca})`.
 */
export function httpsFetch(ca: CaCertificates): typeof fetch {
  const dispatcher = new Agent({
    connect: {
      ca: (Array.isArray(ca) ? ca : [ca]).map((pem: string | Uint8Array) =>
        typeof pem === 'string' ? pem : Buffer.from(pem),
      ),
    },
  })
  return ((input: string | URL, init: RequestInit = {}) =>
    undiciFetch(input, {
      ...(init as Parameters<typeof undiciFetch>[1]),
      dispatcher,
    })) as unknown as typeof fetch
}
