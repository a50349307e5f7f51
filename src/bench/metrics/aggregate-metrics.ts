/**
 * Averages per-query metrics over a split or a whole suite (micro-average: every query weighs
 * the same, whichever split it came from).
 * @module
 */
import { percentile } from './percentile.ts'
import { RECALL_KS, type LossStage, type QueryMetrics } from './query-metrics.ts'

/** What aggregation needs of one query's run. */
export interface ScoredQuery {
  metrics: QueryMetrics
  /** Size of the (raw) gold set. */
  goldSize: number
  /** Pipeline latency of the query in milliseconds. */
  totalMs: number
  usage: { inputTokens: number; outputTokens: number }
  fallbacks: { planner: number; selector: number }
  /** Set when the pipeline threw for this query (it then counts as a miss). */
  error?: unknown
}

export interface AggregateMetrics {
  queries: number
  exactMatch: number
  precision: number
  recall: number
  f1: number
  poolRecall: number
  poolComplete: number
  recallAtK: Record<string, number>
  plannerReward: { precision: number; recall: number; f1: number }
  /** Against the lexically filtered gold; `excluded` queries lost every gold tool to the filter. */
  filtered: {
    queries: number
    excluded: number
    exactMatch: number
    precision: number
    recall: number
    f1: number
  }
  /** Share of queries that missed exact match at each stage (see `LossStage`). */
  losses: Record<LossStage, number>
  /** Exact match by size of the raw gold set, smallest first. */
  byGoldSize: Array<{ size: number; queries: number; exactMatch: number }>
  /** Queries whose pipeline run threw (counted as misses). */
  errors: number
  /** Of those, queries stopped by the per-query time limit (`--query-timeout`). */
  timeouts: number
  /** Queries in which a planner / selector fell back to another component. */
  fallbacks: { planner: number; selector: number }
  /** Model tokens: totals and the mean per query. */
  tokens: { input: number; output: number; perQuery: number }
}

export interface LatencySummary {
  p50Ms: number
  p95Ms: number
  meanMs: number
}

/** Four decimals: enough for a percentage with two decimals, and stable, short JSON. */
export const round4 = (value: number) => Math.round(value * 1e4) / 1e4

const mean = (values: number[]) =>
  values.length === 0 ? 0 : round4(values.reduce((sum, value) => sum + value, 0) / values.length)

export function aggregateMetrics(queries: readonly ScoredQuery[]): AggregateMetrics {
  const all = queries.map((query) => query.metrics)
  const of = (pick: (metrics: QueryMetrics) => number) => mean(all.map(pick))
  const filtered = all.flatMap((metrics) => (metrics.filtered ? [metrics.filtered] : []))
  const sizes = [...new Set(queries.map((query) => query.goldSize))].sort((a, b) => a - b)
  const input = queries.reduce((sum, query) => sum + query.usage.inputTokens, 0)
  const output = queries.reduce((sum, query) => sum + query.usage.outputTokens, 0)
  return {
    queries: queries.length,
    exactMatch: of((metrics) => metrics.exactMatch),
    precision: of((metrics) => metrics.precision),
    recall: of((metrics) => metrics.recall),
    f1: of((metrics) => metrics.f1),
    poolRecall: of((metrics) => metrics.poolRecall),
    poolComplete: of((metrics) => metrics.poolComplete),
    recallAtK: Object.fromEntries(RECALL_KS.map((k) => [k, of((metrics) => metrics.recallAtK[k])])),
    plannerReward: {
      precision: of((metrics) => metrics.plannerReward.precision),
      recall: of((metrics) => metrics.plannerReward.recall),
      f1: of((metrics) => metrics.plannerReward.f1),
    },
    filtered: {
      queries: filtered.length,
      excluded: all.length - filtered.length,
      exactMatch: mean(filtered.map((scores) => scores.exactMatch)),
      precision: mean(filtered.map((scores) => scores.precision)),
      recall: mean(filtered.map((scores) => scores.recall)),
      f1: mean(filtered.map((scores) => scores.f1)),
    },
    losses: {
      planning: of((metrics) => (metrics.loss === 'planning' ? 1 : 0)),
      retrieval: of((metrics) => (metrics.loss === 'retrieval' ? 1 : 0)),
      selection: of((metrics) => (metrics.loss === 'selection' ? 1 : 0)),
    },
    byGoldSize: sizes.map((size) => {
      const group = queries.filter((query) => query.goldSize === size)
      return {
        size,
        queries: group.length,
        exactMatch: mean(group.map((q) => q.metrics.exactMatch)),
      }
    }),
    errors: queries.filter((query) => query.error !== undefined).length,
    timeouts: queries.filter(
      (query) => (query.error as { code?: unknown } | undefined)?.code === 'TIMEOUT',
    ).length,
    fallbacks: {
      planner: queries.filter((query) => query.fallbacks.planner > 0).length,
      selector: queries.filter((query) => query.fallbacks.selector > 0).length,
    },
    tokens: {
      input,
      output,
      perQuery: queries.length === 0 ? 0 : round4((input + output) / queries.length),
    },
  }
}

/** Latency percentiles over the queries' pipeline times (kept apart from the metrics: not deterministic). */
export function summarizeLatency(queries: readonly ScoredQuery[]): LatencySummary {
  const times = queries.map((query) => query.totalMs)
  const round = (value: number) => (Number.isNaN(value) ? 0 : Math.round(value * 1000) / 1000)
  return {
    p50Ms: round(percentile(times, 50)),
    p95Ms: round(percentile(times, 95)),
    meanMs: round(times.length === 0 ? 0 : times.reduce((a, b) => a + b, 0) / times.length),
  }
}
