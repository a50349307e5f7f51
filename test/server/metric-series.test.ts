/**
 * The per-request histograms (metric-series.ts) write the same scrape as prom-client's Counter and
 * Histogram fed the same observations: same series order, buckets, sums, counts and JSON.
 */
import { Counter, Histogram, Registry } from 'prom-client'
import { describe, expect, it } from 'vitest'
import { SeriesHistogram } from '../../src/server/metric-series.ts'

const BUCKETS = [0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30]
const NAMES = { counter: 'requests_total', histogram: 'request_seconds' }

function reference() {
  const registry = new Registry()
  const counter = new Counter({
    name: NAMES.counter,
    help: 'Requests, by method, route and status.',
    labelNames: ['method', 'route', 'status'],
    registers: [registry],
  })
  const histogram = new Histogram({
    name: NAMES.histogram,
    help: 'Request latency "quoted" \\ and escaped.',
    labelNames: ['method', 'route', 'status'],
    buckets: BUCKETS,
    registers: [registry],
  })
  return {
    registry,
    observe(method: string, route: string, status: number, seconds: number) {
      const labels = { method, route, status: String(status) }
      counter.inc(labels)
      histogram.observe(labels, seconds)
    },
  }
}

function series() {
  const registry = new Registry()
  const histogram = new SeriesHistogram(
    NAMES.histogram,
    'Request latency "quoted" \\ and escaped.',
    BUCKETS,
    registry,
    { name: NAMES.counter, help: 'Requests, by method, route and status.' },
  )
  return {
    registry,
    observe(method: string, route: string, status: number, seconds: number) {
      const found = histogram.seriesOf(`${method} ${route} ${status}`, () => ({
        method,
        route,
        status: String(status),
      }))
      histogram.observe(found, seconds)
    },
  }
}

describe('SeriesHistogram', () => {
  it('scrapes as prom-client does for the same observations', async () => {
    const before = reference()
    const after = series()
    expect(await after.registry.metrics()).toBe(await before.registry.metrics())
    // Values on bucket bounds, between them, above the last, zero; routes with quotes and
    // backslashes (label escaping); series in first-use order, interleaved.
    const values = [0, 0.001, 0.0011, 0.0025, 0.007, 0.05, 0.3, 1, 2.6, 30, 31, 1234.5, 1e-9]
    const routes = ['/v1/select-tools', '/v1/libraries/:library', 'unmatched', '/a"b\\c\nd']
    let n = 0
    for (const value of values) {
      for (const route of routes) {
        for (const [method, status] of [
          ['POST', 200],
          ['GET', 404],
          ['POST', 504],
        ] as const) {
          if ((n++ * 7) % 5 === 0) continue
          before.observe(method, route, status, value * (1 + (n % 3) / 10))
          after.observe(method, route, status, value * (1 + (n % 3) / 10))
        }
      }
    }
    const text = await after.registry.metrics()
    expect(text).toBe(await before.registry.metrics())
    expect(text).toContain(`${NAMES.counter}{method="POST",route="/v1/select-tools",status="200"}`)
    expect(await after.registry.getMetricsAsJSON()).toEqual(
      await before.registry.getMetricsAsJSON(),
    )
    // Merged into another registry (as the app's scrape merges the process metrics).
    expect(await Registry.merge([new Registry(), after.registry]).metrics()).toBe(text)
    after.registry.resetMetrics()
    before.registry.resetMetrics()
    expect(await after.registry.metrics()).toBe(await before.registry.metrics())
  })

  it('rejects values that are not finite numbers, as prom-client does', () => {
    const histogram = new SeriesHistogram('x_seconds', 'x', BUCKETS, new Registry())
    const found = histogram.seriesOf('a', () => ({ stage: 'a' }))
    expect(() => histogram.observe(found, Number.NaN)).toThrow(TypeError)
  })
})
