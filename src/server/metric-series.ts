/**
 * Histograms for the per-request metrics, kept as series per label tuple that callers look up
 * once (a Map get by a key they build), instead of prom-client's `observe(labels, value)`, which
 * validates the label names and hashes the label object on every call (about 2 µs of each
 * `/v1/select-tools` request: 2 calls per request and 5 per selection). They register in a
 * prom-client Registry and answer `get()` / `getForPromString()` in prom-client's own shape, so a
 * scrape is the same text as prom-client's Histogram (and, for the counter view, Counter) would
 * write for the same observations (test/server/metric-series.test.ts compares them).
 * @module
 */
import type { Histogram, Registry } from 'prom-client'

/** One label tuple's observations: counts per bucket (not cumulative), sum and count. */
export interface Series {
  readonly labels: Readonly<Record<string, string>>
  readonly buckets: number[]
  sum: number
  count: number
}

interface ValuePair {
  labels: Record<string, string | number>
  sharedLabels?: Record<string, string>
  value: number
  metricName?: string
  exemplar?: null
}

interface MetricData {
  name: string
  help: string
  type: 'histogram' | 'counter'
  values: ValuePair[]
  aggregator: 'sum'
}

export class SeriesHistogram {
  readonly type = 'histogram'
  readonly aggregator = 'sum'
  private readonly series = new Map<string, Series>()

  constructor(
    readonly name: string,
    readonly help: string,
    /** Upper bounds, ascending; a value above the last counts only in `+Inf`. */
    readonly upperBounds: readonly number[],
    registry: Registry,
    /** Also a counter of the observations per series (same labels), registered before this. */
    counter?: { name: string; help: string },
  ) {
    if (counter !== undefined) this.registerCounter(counter.name, counter.help, registry)
    registry.registerMetric(this as unknown as Histogram)
  }

  /** The series of `key`, made with `labels()` on first use (series appear in first-use order). */
  seriesOf(key: string, labels: () => Record<string, string>): Series {
    let found = this.series.get(key)
    if (found === undefined) {
      found = { labels: labels(), buckets: this.upperBounds.map(() => 0), sum: 0, count: 0 }
      this.series.set(key, found)
    }
    return found
  }

  observe(series: Series, value: number): void {
    if (!Number.isFinite(value)) throw new TypeError(`Value is not a valid number: ${value}`)
    const bounds = this.upperBounds
    for (let i = 0; i < bounds.length; i++) {
      if (value <= bounds[i]!) {
        series.buckets[i]! += 1
        break
      }
    }
    series.sum += value
    series.count += 1
  }

  private registerCounter(name: string, help: string, registry: Registry): void {
    const counter = {
      name,
      help,
      type: 'counter' as const,
      aggregator: 'sum' as const,
      get: async (): Promise<MetricData> => ({
        help,
        name,
        type: 'counter',
        values: [...this.series.values()].map((series) => ({
          value: series.count,
          labels: { ...series.labels },
        })),
        aggregator: 'sum',
      }),
      reset: () => this.reset(),
    }
    registry.registerMetric(counter as unknown as Histogram)
  }

  reset(): void {
    this.series.clear()
  }

  /** What the registry writes: bucket lines carry the series' labels as shared labels. */
  async getForPromString(): Promise<MetricData> {
    const values: ValuePair[] = []
    for (const series of this.series.values()) {
      const sharedLabels = series.labels as Record<string, string>
      let cumulative = 0
      for (let i = 0; i < this.upperBounds.length; i++) {
        cumulative += series.buckets[i]!
        values.push({
          labels: { le: this.upperBounds[i]! },
          value: cumulative,
          metricName: `${this.name}_bucket`,
          exemplar: null,
          sharedLabels,
        })
      }
      values.push(
        {
          labels: { le: '+Inf' },
          value: series.count,
          metricName: `${this.name}_bucket`,
          exemplar: null,
          sharedLabels,
        },
        { labels: {}, value: series.sum, metricName: `${this.name}_sum`, sharedLabels },
        { labels: {}, value: series.count, metricName: `${this.name}_count`, sharedLabels },
      )
    }
    return { name: this.name, help: this.help, type: 'histogram', values, aggregator: 'sum' }
  }

  /** prom-client's JSON shape: the shared labels spread into each value's labels. */
  async get(): Promise<MetricData> {
    const data = await this.getForPromString()
    data.values = data.values.map(({ sharedLabels, ...value }) => ({
      ...value,
      labels: { ...value.labels, ...sharedLabels },
    }))
    return data
  }
}
