/**
 * What the BM25 tokenizer's probes cost (store/kinds/tokenizer-probe.ts): the first call in a
 * process tokenizes the probe text (stemmer, ICU word breaks for the CJK and Thai lines) and
 * hashes the terms; later calls return the kept value. Each turn is a new process (`--turns`),
 * the tokenizer module already imported (as it is wherever an index is built or loaded), so the
 * first call's time is what the probe adds to a process's first bm25 build or load.
 *
 * `--space`: the learned dense map's probe of the static GloVe vectors instead
 * (learn/dense-space-probe.ts), timed after the vectors are loaded (about a second, not counted).
 *
 *   node --import tsx bench/tokenizer-probe-cost.ts [--turns 7] [--space]
 * @module
 */
import { execFileSync } from 'node:child_process'
import { fileURLToPath } from 'node:url'
import { benchArgs } from './bench-args.ts'
import { loadAverage, median } from './lib/measure.ts'

const { values: args } = benchArgs(import.meta.url, {
  options: {
    turns: { type: 'string', default: '7' },
    child: { type: 'boolean', default: false },
    space: { type: 'boolean', default: false },
  },
})
// What it measures only once the flags are good: --help and a bad flag answer without it.
const { tokenizerProbes } = await import('../src/store/kinds/tokenizer-probe.ts')
const { denseToolVectors } = await import('../src/learn/dense-encoder.ts')
const { spaceProbe } = await import('../src/learn/dense-space-probe.ts')

if (args.child) {
  const vectors = args.space ? await denseToolVectors() : undefined
  if (args.space && vectors === undefined) throw new Error('static word vectors unavailable')
  const probeOnce = () => (vectors ? spaceProbe(vectors.encoder) : tokenizerProbes().core)
  const started = performance.now()
  const probe = probeOnce()
  const first = performance.now() - started
  const again = performance.now()
  probeOnce()
  console.log(JSON.stringify({ probe, first, cached: performance.now() - again }))
} else {
  const turns: { probe: string; first: number; cached: number }[] = []
  for (let turn = 0; turn < Number(args.turns); turn++) {
    const out = execFileSync(
      process.execPath,
      [
        '--import',
        'tsx',
        fileURLToPath(import.meta.url),
        '--child',
        ...(args.space ? ['--space'] : []),
      ],
      { encoding: 'utf8' },
    )
    turns.push(JSON.parse(out.trim().split('\n').at(-1)!))
  }
  const ms = (value: number) => value.toFixed(3)
  console.log(
    `${args.space ? 'dense space' : 'tokenizer'} probe ${turns[0].probe}: ${turns.length} processes, load ${loadAverage()}`,
  )
  console.log(
    `first call median ${ms(median(turns.map((turn) => turn.first)))} ms (turns ${turns
      .map((turn) => ms(turn.first))
      .join(', ')}), later calls median ${ms(median(turns.map((turn) => turn.cached)))} ms`,
  )
}
