/**
 * Trains the learned selector: candidate rows from every training source (and single-clause
 * queries made from them), a logistic model fitted on four of five folds by query, and the count
 * decision rule chosen on the fifth. Deterministic: the fold of a query is a seeded hash of its
 * id, the fit has no randomness.
 * @module
 */
import type { Tool } from '../library/tool.ts'
import type { Bm25Settings } from '../retrieve/bm25/bm25-retriever.ts'
import { FEATURE_NAMES } from './candidate-features.ts'
import { decideSet, type DecisionRule } from './decide-set.ts'
import { MODEL_FORMAT, MODEL_FORMAT_VERSION, type LearnedModel } from './learned-model.ts'
import { fitLogistic, predictProbability, type LogisticModel } from './logistic-regression.ts'
import type { TrainingCase } from './training-data.ts'
import { queryRows, singleClauseCases, type QueryRows } from './training-rows.ts'

export interface TrainingSource {
  name: string
  tools: Tool[]
  cases: TrainingCase[]
  notes: string[]
  /** Also train on single-clause queries made from this source's multi-tool queries. */
  singleClauses: boolean
}

export interface TrainOptions {
  bm25: Bm25Settings
  /** Seeds the fold assignment. Default 1. */
  seed?: number
  /** Candidates per list. Default 15. */
  k?: number
  maxSteps?: number
  /** BM25 threshold that labels single-clause queries. Default 3. */
  tau?: number
  l2?: number
  onProgress?: (message: string) => void
}

const FOLDS = 5

/** FNV-1a of seed and id: the fold of a query (single-clause queries share their parent's). */
function foldOf(id: string, seed: number): number {
  let hash = 0x811c9dc5 ^ seed
  for (const char of `${seed}:${id.split('#')[0]}`) {
    hash ^= char.charCodeAt(0)
    hash = Math.imul(hash, 0x01000193) >>> 0
  }
  return hash % FOLDS
}

const RULE_GRID: DecisionRule[] = [0.15, 0.2, 0.25, 0.3, 0.35, 0.4, 0.45, 0.5, 0.55, 0.6].flatMap(
  (threshold) =>
    [0, 0.05, 0.1, 0.2].flatMap((floor) => [0, 1].map((extra) => ({ threshold, floor, extra }))),
)

function exactMatch(predicted: readonly string[], gold: readonly string[]): number {
  const goldSet = new Set(gold)
  return new Set(predicted).size === goldSet.size && predicted.every((id) => goldSet.has(id))
    ? 1
    : 0
}

export function trainLearnedModel(
  sources: readonly TrainingSource[],
  options: TrainOptions,
): LearnedModel {
  const seed = options.seed ?? 1
  const k = options.k ?? 15
  const rowOptions = { bm25: options.bm25, k, maxSteps: options.maxSteps ?? 8 }
  const sets: Array<{ name: string; queries: QueryRows[] }> = []
  const notes: string[] = []
  for (const source of sources) {
    notes.push(...source.notes)
    sets.push({ name: source.name, queries: queryRows(source.tools, source.cases, rowOptions) })
    options.onProgress?.(`${source.name}: ${source.cases.length} queries`)
    if (source.singleClauses) {
      const single = singleClauseCases(source.tools, source.cases, {
        ...rowOptions,
        tau: options.tau ?? 3,
      })
      sets.push({
        name: `${source.name}-single`,
        queries: queryRows(source.tools, single, rowOptions),
      })
      notes.push(
        `${source.name}-single: ${single.length} single-clause queries made from ${source.name}`,
      )
      options.onProgress?.(`${source.name}-single: ${single.length} queries`)
    }
  }

  const rows: number[][] = []
  const labels: number[] = []
  const weights: number[] = []
  for (const set of sets) {
    const train = set.queries.filter((query) => foldOf(query.id, seed) !== 0)
    // Every set weighs the same in total, whatever its size.
    const weight = 10_000 / Math.max(1, train.length)
    for (const query of train) {
      const gold = new Set(query.gold)
      query.x.forEach((x, index) => {
        rows.push(x)
        labels.push(gold.has(query.ids[index]) ? 1 : 0)
        weights.push(weight)
      })
    }
  }
  if (rows.length === 0) throw new Error('No training rows: every source was empty.')
  options.onProgress?.(`fitting ${rows.length} candidate rows`)
  const model = fitLogistic(rows, labels, { l2: options.l2 ?? 1, rowWeights: weights })

  const held = sets.map((set) => ({
    name: set.name,
    queries: set.queries
      .filter((query) => foldOf(query.id, seed) === 0)
      .map((query) => ({ query, scored: score(model, query) })),
  }))
  const evaluate = (rule: DecisionRule) =>
    held.map(({ name, queries }) => ({
      name,
      queries: queries.length,
      exactMatch:
        queries.length === 0
          ? 0
          : queries.reduce(
              (sum, { query, scored }) =>
                sum + exactMatch(decideSet(scored, query.steps, rule), query.gold),
              0,
            ) / queries.length,
    }))
  let best = { rule: RULE_GRID[0], mean: -1 }
  for (const rule of RULE_GRID) {
    const splits = evaluate(rule).filter((split) => split.queries > 0)
    const mean =
      splits.reduce((sum, split) => sum + split.exactMatch, 0) / Math.max(1, splits.length)
    if (mean > best.mean) best = { rule, mean }
  }
  const splits = evaluate(best.rule).map((split) => ({
    ...split,
    exactMatch: Math.round(split.exactMatch * 10_000) / 100,
  }))
  const round = (value: number) => Math.round(value * 1e6) / 1e6
  return {
    format: MODEL_FORMAT,
    formatVersion: MODEL_FORMAT_VERSION,
    features: [...FEATURE_NAMES],
    model: {
      mean: model.mean.map(round),
      scale: model.scale.map(round),
      weights: model.weights.map(round),
      bias: round(model.bias),
    },
    rule: best.rule,
    k,
    dataCard: {
      trainedAt: new Date(0).toISOString(),
      seed,
      trainedOn: sets.map((set) => `${set.name} (${set.queries.length} queries)`),
      notes,
      rows: rows.length,
      heldOut: {
        description: `fold 0 of ${FOLDS} by query id (seeded hash); the model was fitted on the other folds and the decision rule chosen on this one; exact match % per set`,
        splits,
      },
    },
  }
}

function score(model: LogisticModel, query: QueryRows) {
  return query.ids.map((id, index) => ({ id, p: predictProbability(model, query.x[index]) }))
}
