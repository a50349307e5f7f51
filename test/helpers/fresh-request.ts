/** HTTP requests for tests of `toolsel serve --workers N`. */
import { request } from 'node:http'

/**
 * One request on a fresh connection (no agent, `connection: close`), so that the cluster hands
 * it to the next worker in turn; the status and body text.
 */
export function callFresh(
  url: string,
  method: string,
  path: string,
  body?: string,
  headers: Record<string, string> = {},
): Promise<{ status: number; text: string }> {
  return new Promise((resolve, reject) => {
    const outgoing = request(
      `${url}${path}`,
      {
        method,
        agent: false,
        headers: {
          connection: 'close',
          ...(body && { 'content-type': 'application/json' }),
          ...headers,
        },
      },
      (response) => {
        let text = ''
        response.on('data', (chunk: Buffer) => (text += chunk.toString()))
        response.on('end', () => resolve({ status: response.statusCode!, text }))
      },
    )
    outgoing.on('error', reject)
    outgoing.end(body)
  })
}
