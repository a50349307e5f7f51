/**
 * Round 42 (explore11, #10): a second retrieval round in the candidate lists, screened on
 * TRAINING data only. The shipped recipe (`toolsel train --learned-dense --dense-free-acceptance`)
 * refitted on folds 1-4 of seed 1, its rule and count chosen on fold 0, held-out exact match on
 * fold 0 (as bench/selection-errors-dev.ts fits; no test query read).
 *
 * The second round is a screen patch of `queryRows` (src/learn/training-rows.ts), kept as
 * bench/residual-dev.patch and never merged: for each list's text, the words whose stems no
 * document of the plain list's first `top` candidates holds are searched again and up to `more`
 * candidates only that search finds are appended after the plain K (`-w`: the whole
 * instruction's list only). Without the variable this is the shipped fit.
 *
 *   git apply bench/residual-dev.patch
 *   R42_RESIDUAL=t1-m5 npx tsx bench/residual-dev.ts --data ../shared/data     # t<top>-m<more>[-w]
 *   git apply -R bench/residual-dev.patch
 * @module
 */
import { readFileSync } from 'node:fs'
import { benchArgs } from './bench-args.ts'

const { values } = benchArgs(import.meta.url, {
  options: { data: { type: 'string', default: '../shared/data' } },
})
const variant = process.env.R42_RESIDUAL
const patched = readFileSync(
  new URL('../src/learn/training-rows.ts', import.meta.url),
  'utf8',
).includes('R42_RESIDUAL')
if (variant !== undefined && !patched) {
  console.error('R42_RESIDUAL is set but bench/residual-dev.patch is not applied.')
  process.exit(2)
}
const { shippedRecipeFit, reportFit } = await import('./training-dev-setup.ts')
const { rows, model } = await shippedRecipeFit(values.data!, 1)
reportFit(`residual ${variant ?? 'none'}`, model, rows)
