/**
 * What flushing a saved index to the disk costs (round 27: every file of the index and its work
 * directory fsynced before the commit's renames, the index directory after them): one library
 * saved again and again over itself by this checkout's `saveIndexedLibrary` and by `--before
 * DIR`'s (another checkout, e.g. /work/ci-base, whose saves don't fsync), the two sides
 * alternating save by save (who goes first alternates too), each side into its own index
 * directory under `--out`. Prints the median, fastest and slowest save per side and size, and
 * the load average (other processes' disk writes make fsync slower).
 *
 *   node --import tsx bench/save-durability.ts --before /work/ci-base [--sizes 10000,100000]
 *     [--rounds 7] [--data ../shared/data] [--out DIR (default: a new directory in the system's
 *     temporary directory, removed at the end; put it on the disk the indexes live on)]
 *
 * The libraries are bench/perf's synthetic ToolBench ones, built once per side with each
 * checkout's own code (default config: BM25); a save writes the tools file, tools.idx, bm25.bin
 * and the manifest, replacing the previous save (rename to `.old-`, rename into place, remove).
 * @module
 */
import { mkdtemp, rm } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { join, resolve } from 'node:path'
import { benchArgs, usageError, wholeNumber } from './bench-args.ts'
import { evenMedian, loadAverage } from './lib/measure.ts'

const { values } = benchArgs(import.meta.url, {
  options: {
    before: { type: 'string' },
    sizes: { type: 'string', default: '10000,100000' },
    rounds: { type: 'string', default: '7' },
    data: { type: 'string', default: '../shared/data' },
    out: { type: 'string' },
  },
})
// What it measures only once the flags are good: --help and a bad flag answer without it.
const { buildSyntheticLibrary } = await import('./perf/synthetic-library.ts')
if (values.before === undefined)
  usageError(import.meta.url, '--before DIR (a checkout) is required.')
const rounds = wholeNumber(import.meta.url, '--rounds', values.rounds)
const sizes = values.sizes.split(',').map(Number)
if (sizes.some((size) => !Number.isInteger(size) || size < 1))
  usageError(import.meta.url, '--sizes takes whole numbers, comma-separated.')
const out =
  values.out === undefined ? await mkdtemp(join(tmpdir(), 'save-durability-')) : values.out

interface Side {
  label: string
  build(name: string, tools: unknown[]): Promise<unknown>
  save(indexDir: string, indexed: unknown): Promise<unknown>
}

async function checkoutSide(root: string, label: string): Promise<Side> {
  const source = resolve(root, 'src')
  const { defaultConfig } = await import(`${source}/config/schema.ts`)
  const { ToolLibrary } = await import(`${source}/library/tool-library.ts`)
  const lifecycle = await import(`${source}/store/library-lifecycle.ts`)
  const config = defaultConfig()
  return {
    label,
    build: (name, tools) =>
      lifecycle.buildIndexedLibrary(new ToolLibrary(name, tools), config, {
        source: { path: 'bench' },
      }),
    save: (indexDir, indexed) => lifecycle.saveIndexedLibrary(indexDir, indexed),
  }
}

const sides = [
  await checkoutSide(values.before, `before (${values.before})`),
  await checkoutSide('.', 'this checkout'),
]
const rows: string[] = []
try {
  for (const size of sizes) {
    const { tools } = await buildSyntheticLibrary(values.data, size)
    const built = await Promise.all(sides.map((side) => side.build(`save-${size}`, tools)))
    const dirs = sides.map((_, at) => join(out, `side-${at}`))
    // One save each first (not timed): every timed save replaces an index.
    for (const [at, side] of sides.entries()) await side.save(dirs[at], built[at])
    const times = sides.map(() => [] as number[])
    for (let round = 0; round < rounds; round += 1) {
      for (const at of round % 2 === 0 ? [0, 1] : [1, 0]) {
        const started = performance.now()
        await sides[at].save(dirs[at], built[at])
        times[at].push(performance.now() - started)
      }
    }
    const medians = times.map(evenMedian)
    for (const [at, side] of sides.entries()) {
      rows.push(
        `| ${size.toLocaleString('en')} | ${side.label} | ${medians[at].toFixed(1)} | ${Math.min(...times[at]).toFixed(1)} | ${Math.max(...times[at]).toFixed(1)} | ${at === 1 ? `${(medians[1] - medians[0]).toFixed(1)} (${(medians[1] / medians[0]).toFixed(2)}x)` : ''} |`,
      )
    }
  }
} finally {
  if (values.out === undefined) await rm(out, { recursive: true, force: true })
}
console.log(`${rounds} saves per side and size, alternating; load average ${loadAverage()}`)
console.log('| tools | side | median ms | fastest ms | slowest ms | this − before (ratio) |')
console.log('|---:|---|---:|---:|---:|---:|')
for (const row of rows) console.log(row)
