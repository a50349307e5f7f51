import { request } from 'node:http'
import { afterEach, describe, expect, it } from 'vitest'
import { startServe, workerPids, type RunningServe } from '../helpers/start-serve.ts'

let server: RunningServe | undefined

afterEach(async () => {
  await server?.stop()
  server = undefined
})

/** GET /healthz on a fresh connection: 'ok', 'reset' (an error) or 'hung' (no end in `ms`). */
function probe(url: string, ms: number): Promise<'ok' | 'reset' | 'hung'> {
  return new Promise((resolve) => {
    const outgoing = request(`${url}/healthz`, { agent: false }, (response) => {
      response.resume()
      response.on('end', () => resolve('ok'))
      response.on('error', () => resolve('reset'))
    })
    outgoing.setTimeout(ms, () => {
      resolve('hung')
      outgoing.destroy()
    })
    outgoing.on('error', () => resolve('reset'))
    outgoing.end()
  })
}

describe('toolsel serve --workers: a worker killed under load', () => {
  it('leaves no connection hanging: those handed to it and not taken are closed (reset), not held by the primary', async () => {
    server = await startServe(['--workers', '2'], { savedDemo: true })
    const { url, child, logs } = server
    const counts = { ok: 0, reset: 0, hung: 0 }
    let going = true
    // Steady fresh connections: the primary always has some on their way to a worker.
    const clients = Array.from({ length: 16 }, async () => {
      // 20 s: a machine busy with other tests answers slowly; a connection held open never ends.
      while (going) counts[await probe(url, 20_000)] += 1
    })
    await new Promise((resolve) => setTimeout(resolve, 1000))
    process.kill(workerPids(child.pid!)[0]!, 'SIGKILL')
    await new Promise((resolve) => setTimeout(resolve, 500))
    going = false
    await Promise.all(clients)
    // Before the fix one connection or more per kill waited (for as long as the primary ran).
    expect(counts.hung, JSON.stringify(counts)).toBe(0)
    expect(counts.ok).toBeGreaterThan(0)
    expect(logs()).toMatch(/Worker \d+ exited \(SIGKILL\)/)
  }, 60_000)
})
