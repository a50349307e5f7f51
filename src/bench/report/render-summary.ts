/**
 * summary.md: the results table, skipped splits, per-split notes and exact match by gold-set size.
 * @module
 */
import { terminalText } from '../../terminal-text.ts'
import type { BenchReport } from '../bench-report.ts'
import { rowCells, runLine, splitCounts, SUMMARY_COLUMNS, summaryRows } from './summary-rows.ts'
import { hasUsage, USAGE_COLUMNS, USAGE_TITLE, usageRows } from './usage-rows.ts'

/**
 * The summary, printed by `toolsel bench` and written to summary.md, with control characters
 * shown as visible escapes (`terminalText`): split names come from file names and data that may
 * be downloaded, and one holding `ESC]0;…` retitled the terminal that printed it.
 */
export function renderSummary(report: BenchReport): string {
  const lines = [`# Benchmark: ${report.settings.name}`, '', runLine(report), '']
  lines.push(
    'EM = exact match of the predicted tool set (%); "filtered" drops gold tools sharing no content word with the query (n = queries left when some lost every gold tool). P/R/F1 = set precision/recall/F1. Pool recall = gold tools among all step candidates; R@K over the merged ranked candidates. Planner-reward F1 = the paper\'s reward with a 1/log2(rank+1) recall discount. Latency per query, milliseconds.',
    '',
  )
  if (report.suites.length === 0) lines.push('No suite ran: see "Skipped" below.')
  else {
    lines.push(...resultsTable(report), '')
    if (hasUsage(report)) lines.push(...usageTable(report), '')
    lines.push(...lossTable(report), '', ...bySizeTable(report))
  }
  lines.push('', '## Splits', '')
  for (const suite of report.suites) {
    for (const split of suite.splits) {
      const { metrics } = split
      const facts = [
        splitCounts(split),
        `library ${split.library.name} (${split.library.tools} tools, matched by ${split.library.matchBy})`,
        `components ${split.components.planner} → ${split.components.retriever} → ${split.components.selector}`,
        `fallbacks: planner ${metrics.fallbacks.planner}, selector ${metrics.fallbacks.selector}`,
        `tokens/query ${metrics.tokens.perQuery}`,
      ]
      if (split.examples)
        facts.push(
          `usage examples: ${split.examples.source} (${exampleCounts(split.examples.counts)})`,
        )
      if (metrics.errors > 0) facts.push(`**${metrics.errors} queries failed** (counted as misses)`)
      const swapped = split.library.swapped
      if (swapped)
        facts.push(
          `${swapped.goldMissing} gold tools (${swapped.queriesWithGoldMissing} queries) missing from the swapped library`,
        )
      lines.push(`- **${split.name}**: ${facts.join('; ')}.`)
      for (const note of split.notes) lines.push(`  - ${note}`)
    }
  }
  if (report.skipped.length > 0) {
    lines.push('', '## Skipped', '')
    for (const skip of report.skipped) lines.push(`- ${skip.name}: ${skip.reason}`)
  }
  lines.push(
    '',
    `Wall time ${(report.timings.wallMs / 1000).toFixed(1)} s. The merged config is in report.json.`,
    '',
  )
  return terminalText(lines.join('\n'))
}

function resultsTable(report: BenchReport): string[] {
  const lines = [tableLine([...SUMMARY_COLUMNS])]
  lines.push(tableLine(SUMMARY_COLUMNS.map((_, index) => (index === 0 ? '---' : '---:'))))
  for (const row of summaryRows(report)) {
    const cells = rowCells(row)
    cells[0] = row.depth === 1 ? `  ↳ ${cells[0]}` : `**${cells[0]}**`
    lines.push(tableLine(cells))
  }
  return lines
}

function usageTable(report: BenchReport): string[] {
  const lines = [
    `## ${USAGE_TITLE}`,
    '',
    'Model tokens per query (mean), pipeline latency per query, queries that failed or hit the per-query time limit (misses), and queries where the planner/selector fell back.',
    '',
    tableLine([...USAGE_COLUMNS]),
    tableLine(USAGE_COLUMNS.map((_, index) => (index < 2 ? '---' : '---:'))),
  ]
  for (const row of usageRows(report)) {
    const cells = [...row.cells]
    cells[0] = row.depth === 1 ? `  ↳ ${cells[0]}` : cells[0]
    lines.push(tableLine(cells))
  }
  return lines
}

function lossTable(report: BenchReport): string[] {
  const lines = [
    '## Where exact match is lost',
    '',
    "% of queries. Planning: fewer steps (and predicted tools) than gold tools. Retrieval: a gold tool is in no step's candidates. Selection: every gold tool was a candidate and there were enough steps, yet the picks were wrong, repeated or extra.",
    '',
    tableLine(['suite', 'EM', 'planning', 'retrieval', 'selection']),
    tableLine(['---', '---:', '---:', '---:', '---:']),
  ]
  for (const suite of report.suites) {
    const { exactMatch, losses } = suite.metrics
    const cells = [exactMatch, losses.planning, losses.retrieval, losses.selection]
    lines.push(tableLine([suite.name, ...cells.map((value) => (value * 100).toFixed(1))]))
  }
  return lines
}

function bySizeTable(report: BenchReport): string[] {
  const sizes = [
    ...new Set(
      report.suites.flatMap((suite) => suite.metrics.byGoldSize.map((group) => group.size)),
    ),
  ].sort((a, b) => a - b)
  if (sizes.length === 0) return []
  const lines = ['## Exact match by gold-set size', '', 'EM % (queries) per gold-set size.', '']
  lines.push(tableLine(['suite', ...sizes.map(String)]))
  lines.push(tableLine(['---', ...sizes.map(() => '---:')]))
  for (const suite of report.suites) {
    const cells = sizes.map((size) => {
      const group = suite.metrics.byGoldSize.find((entry) => entry.size === size)
      return group ? `${(group.exactMatch * 100).toFixed(1)} (${group.queries})` : ''
    })
    lines.push(tableLine([suite.name, ...cells]))
  }
  return lines
}

function tableLine(cells: string[]): string {
  return `| ${cells.map((cell) => cell.replace(/\|/g, '\\|')).join(' | ')} |`
}

/** `24 in the library` (one training split), else `8-9 in each fold's library`. */
function exampleCounts(counts: readonly number[]): string {
  if (counts.length === 1) return `${counts[0]} in the library`
  const low = Math.min(...counts)
  const high = Math.max(...counts)
  return `${low === high ? low : `${low}-${high}`} in each fold's library`
}
