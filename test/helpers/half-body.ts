/**
 * Sends a JSON body over node:http in two halves, with its Content-Length: the second half only
 * once `readied()` lists one thread (a worker started while the body is read, idle, waiting for
 * it). For the tests that a body's worker thread starts during the read (body-bytes, examples
 * routes).
 */
import { request } from 'node:http'
import { expect } from 'vitest'

/** The answer, and the threads `readied` listed when the second half was sent. */
export async function sendInHalves(
  url: string,
  method: string,
  body: Buffer,
  readied: () => number[],
): Promise<{ status: number; text: string; readied: number[] }> {
  const half = body.length >> 1
  const seen: number[] = []
  const answer = await new Promise<{ status: number; text: string }>((resolve, reject) => {
    const req = request(
      url,
      {
        method,
        headers: { 'content-type': 'application/json', 'content-length': String(body.length) },
      },
      (response) => {
        const parts: Buffer[] = []
        response.on('data', (part: Buffer) => parts.push(part))
        response.on('end', () =>
          resolve({ status: response.statusCode!, text: Buffer.concat(parts).toString() }),
        )
      },
    )
    req.on('error', reject)
    req.write(body.subarray(0, half))
    // Half the body sent: the thread is started (idle, waiting for the body), then the rest.
    void expect
      .poll(() => readied().length, { timeout: 10_000 })
      .toBe(1)
      .then(() => {
        seen.push(...readied())
        req.end(body.subarray(half))
      }, reject)
  })
  return { ...answer, readied: seen }
}
