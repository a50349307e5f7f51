/**
 * The rows and columns of the results table, shared by summary.md and report.html: one row per
 * suite, one indented row per split when a suite has several, and the mean over suites.
 * @module
 */
import type { BenchReport } from '../bench-report.ts'
import type { AggregateMetrics, LatencySummary } from '../metrics/aggregate-metrics.ts'

export interface SummaryRow {
  label: string
  /** 0 = suite (or the mean), 1 = a split of the suite above. */
  depth: 0 | 1
  metrics?: AggregateMetrics
  latency?: LatencySummary
  /** Mean-over-suites rows carry only these numbers. */
  cells?: string[]
}

const percent = (value: number) => (value * 100).toFixed(1)
const ms = (value: number) => (value < 10 ? value.toFixed(2) : value.toFixed(1))

export const SUMMARY_COLUMNS = [
  'suite',
  'queries',
  'EM',
  'EM filtered',
  'P',
  'R',
  'F1',
  'pool recall',
  'R@5',
  'R@15',
  'planner-reward F1',
  'p50 ms',
  'p95 ms',
] as const

/** The row's cells, in SUMMARY_COLUMNS order (percentages with one decimal). */
export function rowCells(row: SummaryRow): string[] {
  if (row.cells) return [row.label, ...row.cells]
  const metrics = row.metrics as AggregateMetrics
  const latency = row.latency as LatencySummary
  return [
    row.label,
    String(metrics.queries),
    percent(metrics.exactMatch),
    `${percent(metrics.filtered.exactMatch)}${metrics.filtered.excluded > 0 ? ` (n=${metrics.filtered.queries})` : ''}`,
    percent(metrics.precision),
    percent(metrics.recall),
    percent(metrics.f1),
    percent(metrics.poolRecall),
    percent(metrics.recallAtK['5']),
    percent(metrics.recallAtK['15']),
    percent(metrics.plannerReward.f1),
    ms(latency.p50Ms),
    ms(latency.p95Ms),
  ]
}

export function summaryRows(report: BenchReport): SummaryRow[] {
  const rows: SummaryRow[] = []
  for (const suite of report.suites) {
    rows.push({ label: suite.name, depth: 0, metrics: suite.metrics, latency: suite.latency })
    if (suite.splits.length < 2) continue
    for (const split of suite.splits) {
      const label = split.name.slice(suite.name.length + 1) || split.name
      rows.push({ label, depth: 1, metrics: split.metrics, latency: split.latency })
    }
  }
  if (report.suites.length > 1) rows.push(meanRow(report))
  return rows
}

/** Unweighted mean over suites, so a large suite (ToolLens) does not drown the others. */
function meanRow(report: BenchReport): SummaryRow {
  const mean = (pick: (metrics: AggregateMetrics) => number) =>
    percent(
      report.suites.reduce((sum, suite) => sum + pick(suite.metrics), 0) / report.suites.length,
    )
  const queries = report.suites.reduce((sum, suite) => sum + suite.metrics.queries, 0)
  return {
    label: 'mean of suites',
    depth: 0,
    cells: [
      String(queries),
      mean((metrics) => metrics.exactMatch),
      mean((metrics) => metrics.filtered.exactMatch),
      mean((metrics) => metrics.precision),
      mean((metrics) => metrics.recall),
      mean((metrics) => metrics.f1),
      mean((metrics) => metrics.poolRecall),
      mean((metrics) => metrics.recallAtK['5']),
      mean((metrics) => metrics.recallAtK['15']),
      mean((metrics) => metrics.plannerReward.f1),
      '',
      '',
    ],
  }
}

/** One line on what ran: components, K, tau, modes. */
export function runLine(report: BenchReport): string {
  const { settings } = report
  const split = report.suites[0]?.splits[0]
  const components = split?.components ?? {
    planner: settings.planner,
    retriever: settings.retriever,
    selector: settings.selector,
  }
  const parts = [
    `planner \`${components.planner}\``,
    `retriever \`${components.retriever}\``,
    `selector \`${components.selector}\``,
    `K ${settings.k}`,
    `tau ${settings.tau}${settings.baseline === 'oracle-count' ? ' (not applied by the oracle)' : ''}`,
    `library mode ${settings.libraryMode}`,
    `unmappable gold: ${settings.unmappable}`,
  ]
  if (settings.swapLibrary) parts.push(`library swapped for \`${settings.swapLibrary}\``)
  // The same library with and without usage examples scores far apart: say which ran (it was
  // only in report.json's settings).
  if (settings.examplesFile !== undefined)
    parts.push(`usage examples: file \`${settings.examplesFile}\` (per split below)`)
  else if (settings.examples === 'train') parts.push('usage examples: train (per split below)')
  if (settings.limit !== undefined) parts.push(`first ${settings.limit} queries per split`)
  return parts.join(' · ')
}

/**
 * A split's query count for the reports: queries kept of the records read, and with --limit the
 * queries run (so "837 of 837 records" under a 20-query run does not read as 837 queries scored).
 */
export function splitCounts(split: BenchReport['suites'][number]['splits'][number]): string {
  const { stats, metrics } = split
  return metrics.queries < stats.queries
    ? `first ${metrics.queries} of ${stats.queries} queries run (--limit), from ${stats.records} records`
    : `${stats.queries} of ${stats.records} records`
}
