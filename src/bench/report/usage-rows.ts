/**
 * The cost table of summary.md and report.html: per suite (and split), the components that ran,
 * model tokens per query, latency and failures. It is what evaluating a model checkpoint needs
 * next to its accuracy: how many tokens and milliseconds a query costs, how many timed out.
 * @module
 */
import type { BenchReport, SplitReport } from '../bench-report.ts'
import type { AggregateMetrics, LatencySummary } from '../metrics/aggregate-metrics.ts'

/** The table's heading in both reports. */
export const USAGE_TITLE = 'Model usage and latency'

export const USAGE_COLUMNS = [
  'suite',
  'planner → selector',
  'queries',
  'tokens in/query',
  'tokens out/query',
  'p50 ms',
  'p95 ms',
  'mean ms',
  'errors',
  'timeouts',
  'fallbacks P/S',
] as const

export interface UsageRow {
  depth: 0 | 1
  cells: string[]
}

const perQuery = (total: number, queries: number) =>
  queries === 0 ? '0' : (total / queries).toFixed(1)
const ms = (value: number) => (value < 10 ? value.toFixed(2) : value.toFixed(1))

export function usageRows(report: BenchReport): UsageRow[] {
  const rows: UsageRow[] = []
  for (const suite of report.suites) {
    const groups: Array<{
      label: string
      depth: 0 | 1
      metrics: AggregateMetrics
      latency: LatencySummary
      components?: SplitReport['components']
    }> = [
      {
        label: suite.name,
        depth: 0,
        metrics: suite.metrics,
        latency: suite.latency,
        components: suite.splits[0]?.components,
      },
    ]
    if (suite.splits.length > 1) {
      for (const split of suite.splits) {
        groups.push({
          label: split.name.slice(suite.name.length + 1) || split.name,
          depth: 1,
          metrics: split.metrics,
          latency: split.latency,
          components: split.components,
        })
      }
    }
    for (const group of groups) {
      const { metrics, latency, components } = group
      rows.push({
        depth: group.depth,
        cells: [
          group.label,
          components ? `${components.planner} → ${components.selector}` : '',
          String(metrics.queries),
          perQuery(metrics.tokens.input, metrics.queries),
          perQuery(metrics.tokens.output, metrics.queries),
          ms(latency.p50Ms),
          ms(latency.p95Ms),
          ms(latency.meanMs),
          String(metrics.errors),
          String(metrics.timeouts ?? 0),
          `${metrics.fallbacks.planner}/${metrics.fallbacks.selector}`,
        ],
      })
    }
  }
  return rows
}

/** Whether a model ran or something failed: summary.md only shows the table then. */
export function hasUsage(report: BenchReport): boolean {
  return report.suites.some(
    (suite) =>
      suite.metrics.tokens.input + suite.metrics.tokens.output > 0 || suite.metrics.errors > 0,
  )
}
