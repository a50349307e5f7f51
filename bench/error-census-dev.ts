/**
 * An error census of the shipped recipe's held-out misses (#10, round 51), on TRAINING data only:
 * the shipped recipe (`toolsel train --learned-dense --dense-free-acceptance`, no TaskBench shapes)
 * fitted on folds 1-4 of `--seed`, its decision scored on fold 0 of ToolPlanner G3, its
 * single-clause and composed sets and ToolLens train, as the data card's held-out figures are.
 * Each miss is put in exactly one class, in this order:
 *
 * - `a:too-many`: more distinct tools picked than gold;
 * - `b:too-few`: fewer (none included);
 * - `d:no-list`: as many as gold, and a gold tool left out is in no candidate list;
 * - `c:not-picked`: as many as gold, every gold tool left out is a candidate but was not picked.
 *
 * Beside them: `planner≠gold` (the planner's clause count differs from the gold count, among the
 * a/b misses), `no-list(any)` (a gold tool in no list, among all misses), `c:rank-2` (a c-miss
 * whose wrong pick is a clause's most probable candidate and the gold tool its second), and two
 * oracles: `count-oracle` (exact when the top-|gold| candidates by probability are taken) and
 * `pool-oracle` (every gold tool is a candidate).
 *
 *   npx tsx bench/error-census-dev.ts [--data ../shared/data] [--seed 1]
 * @module
 */
import { benchArgs, wholeNumber } from './bench-args.ts'

const { values } = benchArgs(import.meta.url, {
  options: {
    data: { type: 'string', default: '../shared/data' },
    seed: { type: 'string', default: '1' },
  },
})
// What it measures only once the flags are good: --help and a bad flag answer without it.
const { errorCensus, shippedRecipeFit } = await import('./training-dev-setup.ts')
const seed = wholeNumber(import.meta.url, '--seed', values.seed, 0)
const { rows, model } = await shippedRecipeFit(values.data!, seed)
errorCensus(rows, model, seed)
