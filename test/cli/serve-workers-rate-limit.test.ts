/**
 * `toolsel serve --workers 2` with server.writesPerMinute: each worker keeps its own buckets, so
 * one client gets the limit from each worker (README "Request rate"). A real server, real
 * requests on fresh connections (the workers take them in turn).
 */
import { afterEach, describe, expect, it } from 'vitest'
import { callFresh } from '../helpers/fresh-request.ts'
import { startServe, type RunningServe } from '../helpers/start-serve.ts'

let server: RunningServe | undefined
afterEach(async () => {
  await server?.stop()
  server = undefined
})

describe('toolsel serve --workers 2 with a request-rate limit', () => {
  it('enforces TOOLSEL_WRITES_PER_MINUTE in each worker: twice the limit in all', async () => {
    server = await startServe(['--workers', '2'], {
      savedDemo: true,
      env: { TOOLSEL_WRITES_PER_MINUTE: '2' },
    })
    const statuses: number[] = []
    for (let index = 0; index < 12; index += 1) {
      statuses.push((await callFresh(server.url, 'DELETE', '/v1/libraries/nowhere')).status)
    }
    expect(statuses.filter((status) => status === 404)).toHaveLength(4)
    expect(statuses.filter((status) => status === 429)).toHaveLength(8)
    // The metric sums the workers' counts (cluster-metrics.ts).
    const { text } = await callFresh(server.url, 'GET', '/metrics')
    expect(text).toMatch(/^toolsel_rate_limited_total\{class="write"\} 8$/m)
  })
})
