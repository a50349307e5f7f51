/**
 * The primary's sum of the workers' metrics (`aggregateAnswers`), with real prom-client registries:
 * scrapes summed at once each say their own `toolsel_workers_scraped`, also when one of them has
 * to leave a worker's answer out.
 */
import { Counter, Registry } from 'prom-client'
import { describe, expect, it } from 'vitest'
import { aggregateAnswers } from '../../src/server/cluster-metrics.ts'

type MetricsJson = Awaited<ReturnType<Registry['getMetricsAsJSON']>>

/** A worker's metrics as it sends them: `requests` counted on a real registry. */
async function worker(requests: number): Promise<MetricsJson> {
  const registry = new Registry()
  new Counter({ name: 'toolsel_requests_total', help: 'Requests.', registers: [registry] }).inc(
    requests,
  )
  return registry.getMetricsAsJSON()
}

/** What a worker answers that cannot be summed (the malformed test fault's shape). */
const MALFORMED = [
  { name: 'toolsel_ready', type: 'gauge', aggregator: 'nonesuch' },
] as unknown as MetricsJson

/** The value of the unlabelled series `name` in Prometheus text. */
function value(text: string, name: string): number | undefined {
  const line = text.split('\n').find((each) => each.startsWith(`${name} `))
  return line === undefined ? undefined : Number(line.slice(name.length + 1))
}

describe('aggregateAnswers', () => {
  it('sums the answers it can and counts them, each scrape its own count when several run at once', async () => {
    const [one, two, three] = await Promise.all([worker(1), worker(2), worker(4)])
    // Started together: the third one's fallback (leaving MALFORMED out) runs between the others.
    const texts = await Promise.all([
      aggregateAnswers([one, two, three], 5),
      aggregateAnswers([one], 5),
      aggregateAnswers([two, MALFORMED, three], 5),
      aggregateAnswers([], 5),
    ])
    expect(texts.map((text) => value(text, 'toolsel_workers_scraped'))).toEqual([3, 1, 2, 0])
    expect(texts.map((text) => value(text, 'toolsel_requests_total'))).toEqual([7, 1, 6, undefined])
    for (const text of texts) {
      expect(value(text, 'toolsel_worker_restarts_total')).toBe(5)
      expect(value(text, 'toolsel_workers')).toBe(0) // The test process has no cluster workers.
    }
  })
})
