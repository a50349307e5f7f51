/**
 * report.html: one self-contained page (inline CSS and SVG, no script, no external resource)
 * with the results table and four charts: exact match per suite, exact match by gold-set size,
 * recall@K curves, and where exact match is lost (planning, retrieval, selection).
 * @module
 */
import type { BenchReport } from '../bench-report.ts'
import type { AggregateMetrics } from '../metrics/aggregate-metrics.ts'
import { RECALL_KS } from '../metrics/query-metrics.ts'
import { barChart, escapeXml, lineChart } from './svg-charts.ts'
import { rowCells, runLine, splitCounts, SUMMARY_COLUMNS, summaryRows } from './summary-rows.ts'
import { USAGE_COLUMNS, USAGE_TITLE, usageRows } from './usage-rows.ts'

/** The chart titles; tests look for them. */
export const CHART_TITLES = {
  exactMatch: 'Exact match per suite',
  byGoldSize: 'Exact match by gold-set size',
  recallAtK: 'Recall@K of the merged candidate list',
  losses: 'Where exact match is lost (share of queries)',
} as const

const STYLE = `body{font-family:system-ui,sans-serif;margin:2rem;color:#222;max-width:1100px}
table{border-collapse:collapse;font-size:13px}th,td{border:1px solid #ccc;padding:3px 6px}
td{white-space:nowrap}td:not(:first-child){text-align:right}tr.split td:first-child{padding-left:1.5rem;color:#555}
tr.suite td:first-child{font-weight:600}figure{margin:1.5rem 0}pre{background:#f6f6f6;padding:1rem;overflow:auto;font-size:12px}
code{background:#f3f3f3;padding:0 3px}`

export function renderHtml(report: BenchReport): string {
  const title = `Benchmark: ${report.settings.name}`
  const groups = chartGroups(report)
  const body = [
    `<h1>${escapeXml(title)}</h1>`,
    `<p>${escapeXml(runLine(report)).replace(/`([^`]*)`/g, '<code>$1</code>')}</p>`,
    resultsTable(report),
    usageTable(report),
    `<figure>${barChart({
      title: CHART_TITLES.exactMatch,
      categories: groups.map((group) => group.name),
      series: [
        { name: 'EM (raw gold)', values: groups.map((group) => group.metrics.exactMatch) },
        {
          name: 'EM (filtered gold)',
          values: groups.map((group) => group.metrics.filtered.exactMatch),
        },
      ],
    })}</figure>`,
    `<figure>${bySizeChart(groups)}</figure>`,
    `<figure>${lineChart({
      title: CHART_TITLES.recallAtK,
      categories: RECALL_KS.map(String),
      xLabel: 'K',
      series: groups.map((group) => ({
        name: group.name,
        values: RECALL_KS.map((k) => group.metrics.recallAtK[k]),
      })),
    })}</figure>`,
    `<figure>${barChart({
      title: CHART_TITLES.losses,
      categories: groups.map((group) => group.name),
      series: (['planning', 'retrieval', 'selection'] as const).map((stage) => ({
        name: `lost at ${stage}`,
        values: groups.map((group) => group.metrics.losses[stage]),
      })),
    })}</figure>`,
    notesSection(report),
    `<details><summary>Merged configuration and run settings</summary><pre>${escapeXml(
      JSON.stringify({ settings: report.settings, config: report.config }, null, 2),
    )}</pre></details>`,
  ]
  return `<!DOCTYPE html>
<html lang="en"><head><meta charset="utf-8"><title>${escapeXml(title)}</title>
<meta name="viewport" content="width=device-width, initial-scale=1"><style>${STYLE}</style></head>
<body>
${body.join('\n')}
</body></html>
`
}

/** What the charts compare: the suites, or the splits when a single suite ran. */
function chartGroups(report: BenchReport): Array<{ name: string; metrics: AggregateMetrics }> {
  if (report.suites.length === 1 && report.suites[0].splits.length > 1) {
    return report.suites[0].splits.map((split) => ({ name: split.name, metrics: split.metrics }))
  }
  return report.suites.map((suite) => ({ name: suite.name, metrics: suite.metrics }))
}

function bySizeChart(groups: Array<{ name: string; metrics: AggregateMetrics }>): string {
  const sizes = [
    ...new Set(groups.flatMap((group) => group.metrics.byGoldSize.map((entry) => entry.size))),
  ].sort((a, b) => a - b)
  return lineChart({
    title: CHART_TITLES.byGoldSize,
    categories: sizes.map(String),
    xLabel: 'gold-set size',
    series: groups.map((group) => ({
      name: group.name,
      values: sizes.map(
        (size) => group.metrics.byGoldSize.find((entry) => entry.size === size)?.exactMatch ?? null,
      ),
    })),
  })
}

function resultsTable(report: BenchReport): string {
  const head = `<tr>${SUMMARY_COLUMNS.map((column) => `<th>${escapeXml(column)}</th>`).join('')}</tr>`
  const rows = summaryRows(report).map((row) => {
    const cells = rowCells(row).map((cell) => `<td>${escapeXml(cell)}</td>`)
    return `<tr class="${row.depth === 1 ? 'split' : 'suite'}">${cells.join('')}</tr>`
  })
  return `<table><thead>${head}</thead><tbody>${rows.join('')}</tbody></table>`
}

/** Tokens, latency and failures per suite: what a model checkpoint costs per query. */
function usageTable(report: BenchReport): string {
  const head = `<tr>${USAGE_COLUMNS.map((column) => `<th>${escapeXml(column)}</th>`).join('')}</tr>`
  const rows = usageRows(report).map(
    (row) =>
      `<tr class="${row.depth === 1 ? 'split' : 'suite'}">${row.cells.map((cell) => `<td>${escapeXml(cell)}</td>`).join('')}</tr>`,
  )
  return `<h2>${USAGE_TITLE}</h2><table><thead>${head}</thead><tbody>${rows.join('')}</tbody></table>`
}

function notesSection(report: BenchReport): string {
  const items = report.suites.flatMap((suite) =>
    suite.splits.map(
      (split) =>
        `<li><b>${escapeXml(split.name)}</b> (${splitCounts(split)})<ul>${split.notes
          .map((note) => `<li>${escapeXml(note)}</li>`)
          .join('')}</ul></li>`,
    ),
  )
  const skipped = report.skipped.map(
    (skip) => `<li><b>${escapeXml(skip.name)}</b>: ${escapeXml(skip.reason)}</li>`,
  )
  return [
    `<h2>Splits</h2><ul>${items.join('')}</ul>`,
    skipped.length > 0 ? `<h2>Skipped</h2><ul>${skipped.join('')}</ul>` : '',
  ].join('\n')
}
