/**
 * Held-out check of the learned-dense model's one-clause dense features (#10, round 17), on
 * TRAINING data only: ToolPlanner G3 and ToolLens train as `toolsel train` reads them, plus
 * (unless `--no-shapes`) the TaskBench requests the bench does not evaluate. The training rows are
 * built twice, with a one-clause plan's clause features from the clause's own vector (as models
 * before round 17 compute them) and from the whole instruction's (DenseInput `oneClause`), and
 * three pipelines are scored on fold 0 of `--seed` (the model, rule and count fitted on the other
 * folds, as `toolsel train`'s data card does):
 *
 * - `clause/clause`: trained and answered with the clause's vector (`train --learned-dense`);
 * - `clause/instruction`: trained with the clause's vector, answered with the instruction's;
 * - `instruction/instruction`: trained and answered with the instruction's.
 *
 * Per held-out split: exact match % (count-only splits: the right number of tools), and the
 * one-clause and several-clause queries apart.
 *
 *   npx tsx bench/one-clause-dev.ts [--data ../shared/data] [--seed 1] [--no-shapes]
 * @module
 */
import { benchArgs, wholeNumber } from './bench-args.ts'
import type { LearnedModel } from '../src/learn/learned-model.ts'
import type { TrainingSets } from '../src/learn/train-model.ts'

const { values } = benchArgs(import.meta.url, {
  options: {
    data: { type: 'string', default: '../shared/data' },
    seed: { type: 'string', default: '1' },
    'no-shapes': { type: 'boolean' },
  },
})
// What it measures only once the flags are good: --help and a bad flag answer without it.
const { decideTools } = await import('../src/learn/count-model.ts')
const { denseToolVectors } = await import('../src/learn/dense-encoder.ts')
const { decisionInput, fitTrainingSets, foldOf, score, shapeMatch, trainingSets } =
  await import('../src/learn/train-model.ts')
const { trainingDevSetup } = await import('./training-dev-setup.ts')
const dataDir = values.data!
const seed = wholeNumber(import.meta.url, '--seed', values.seed, 0)
const { sources, base: recipe } = await trainingDevSetup(dataDir, seed, {
  shapes: !values['no-shapes'],
})
const dense = await denseToolVectors()
if (dense === undefined) throw new Error('No static word vectors (npm ci).')
const base = { ...recipe, dense, learnDense: {} }

let started = performance.now()
const clauseRows = trainingSets(sources, base)
const instructionRows = trainingSets(sources, { ...base, rowsOneClauseDense: 'instruction' })
console.log(`training rows built twice in ${((performance.now() - started) / 1000).toFixed(0)} s`)

/** Exact match (or the right count) per held-out split of `model` answering `rows`' fold 0. */
function heldOut(model: LearnedModel, rows: TrainingSets): string {
  const out: string[] = []
  for (const set of rows.sets) {
    const groups = { all: [0, 0], one: [0, 0], several: [0, 0] }
    for (const query of set.queries) {
      if (foldOf(query.id, seed) !== 0) continue
      if (set.countOnly && query.shape !== 'single') continue
      const placed = decideTools(
        decisionInput(query, score(model, query)),
        model.rule,
        model.count,
      ).filter((id): id is string => id !== null)
      const gold = new Set(query.gold)
      const right = query.shape
        ? shapeMatch(placed, query.shape)
        : Number(new Set(placed).size === gold.size && placed.every((id) => gold.has(id)))
      for (const key of ['all', query.steps >= 2 ? 'several' : 'one'] as const) {
        groups[key][0] += right
        groups[key][1] += 1
      }
    }
    const pct = ([ok, n]: number[]) => (n === 0 ? '-' : ((100 * ok) / n).toFixed(2))
    out.push(
      `  ${set.name}${set.countOnly ? ' (one-tool, right count)' : ''}: ${pct(groups.all)} (n ${groups.all[1]}); one clause ${pct(groups.one)} (n ${groups.one[1]}), several ${pct(groups.several)} (n ${groups.several[1]})`,
    )
  }
  return out.join('\n')
}

// clause/instruction reuses clause/clause's fit.
const fitted = new Map<TrainingSets, LearnedModel>()
for (const [name, fitRows, answerRows] of [
  ['clause/clause', clauseRows, clauseRows],
  ['clause/instruction', clauseRows, instructionRows],
  ['instruction/instruction', instructionRows, instructionRows],
] as const) {
  started = performance.now()
  const model = fitted.get(fitRows) ?? fitTrainingSets(fitRows, base)
  fitted.set(fitRows, model)
  console.log(
    `== ${name} (${((performance.now() - started) / 1000).toFixed(0)} s): rule ${JSON.stringify(model.rule)}, count ${model.count?.threshold ?? '-'} / ${model.count?.extendThreshold ?? '-'}`,
  )
  console.log(heldOut(model, answerRows))
}
