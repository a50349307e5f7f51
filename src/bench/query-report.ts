/**
 * One query's record in report.json, full or compact (see `BenchRunSettings.compact`).
 * @module
 */
import type { BenchCase } from './bench-case.ts'
import type { QueryReport } from './bench-report.ts'
import type { CaseOutcome } from './case-runner.ts'
import { round4 } from './metrics/aggregate-metrics.ts'
import type { QueryMetrics } from './metrics/query-metrics.ts'

export function queryReport(
  benchCase: BenchCase,
  outcome: CaseOutcome,
  metrics: QueryMetrics,
  filteredGold: string[],
  compact: boolean,
): QueryReport {
  const sameGold = filteredGold.length === benchCase.gold.length
  const report: QueryReport = {
    id: benchCase.id,
    ...(!compact && { instruction: benchCase.instruction }),
    gold: benchCase.gold,
    predicted: outcome.predicted,
    ...(!(compact && sameGold) && { filteredGold }),
    steps: outcome.steps.map((step) =>
      compact
        ? {
            ...(step.text !== benchCase.instruction && { text: step.text }),
            selected: step.selected,
          }
        : {
            text: step.text,
            selected: step.selected,
            candidates: step.candidates.map(({ id, score }) => ({ id, score })),
          },
    ),
    metrics: compact && sameGold ? withoutFiltered(metrics) : metrics,
  }
  if (outcome.fallbacks.length > 0) report.fallbacks = outcome.fallbacks
  if (outcome.usage.inputTokens + outcome.usage.outputTokens > 0) report.usage = outcome.usage
  if (outcome.error) report.error = outcome.error
  if (!compact) report.timings = outcome.timings
  return report
}

function withoutFiltered(metrics: QueryMetrics): QueryReport['metrics'] {
  const { filtered: _same, ...rest } = metrics
  return rest
}

export function roundMetrics(metrics: QueryMetrics): QueryMetrics {
  const round = <T>(value: T): T => {
    if (typeof value === 'number') return round4(value) as T
    if (value === null || typeof value !== 'object') return value
    return Object.fromEntries(Object.entries(value).map(([key, inner]) => [key, round(inner)])) as T
  }
  return round(metrics)
}
