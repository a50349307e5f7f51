/**
 * What the disk check of an unchanged upload costs: a PUT of the tools a library holds already
 * answers "unchanged" only once its saved files are found whole (`savedIndexProblem`,
 * store/library-lifecycle.ts: since round 33 the manifest and an `lstat` of each file its `files`
 * record lists; one load of the saved index for a manifest without it, as before). Per size,
 * alternating in one run: the whole unchanged path
 * of an upload (`importUploadedLibrary`: the import of the body, in a worker thread above
 * server.importWorkerMinChars, the same-index test and the check) and the check alone; the path
 * without the check is about their difference. Synthetic ToolBench-named libraries, as
 * bench/perf.ts makes them, built with `--retriever` (default retrieve.build, BM25; a dense part,
 * `bm25,dense:static:glove-100d`, made the load-based check read its vectors and HNSW graph too).
 *
 *   TOOLSEL_DATA_DIR=/work/shared/data node --import tsx bench/put-unchanged-cost.ts [--reps 7] [--data <dir>]
 *     [--retriever bm25,dense:static:glove-100d] [--sizes 1000,10000]
 * @module
 */
import { mkdtemp, rm } from 'node:fs/promises'
import { loadavg, tmpdir } from 'node:os'
import { join } from 'node:path'
import { benchArgs } from './bench-args.ts'

const { values } = benchArgs(import.meta.url, {
  options: {
    reps: { type: 'string', default: '7' },
    data: { type: 'string', default: process.env.TOOLSEL_DATA_DIR ?? '../shared/data' },
    retriever: { type: 'string' },
    sizes: { type: 'string', default: '1000,10000' },
  },
})
// What it measures only once the flags are good: --help and a bad flag answer without it.
const { defaultConfig } = await import('../src/config/schema.ts')
const {
  importUploadedLibrary,
  indexTools,
  loadIndexedLibrary,
  saveIndexedLibrary,
  savedIndexProblem,
} = await import('../src/store/library-lifecycle.ts')
const { summarize } = await import('./lib/measure.ts')
const { buildSyntheticLibrary } = await import('./perf/synthetic-library.ts')
const reps = Number(values.reps)
const dataDir = values.data
const config = defaultConfig()
const retriever = values.retriever ?? config.retrieve.build
const sizes = values.sizes.split(',').map(Number)
if (sizes.some((size) => !Number.isInteger(size) || size < 1))
  throw new Error(`--sizes is a comma list of tool counts: ${values.sizes}`)
const work = await mkdtemp(join(tmpdir(), 'toolsel-put-unchanged-'))
const rows: string[] = []
try {
  for (const size of sizes) {
    const { tools } = await buildSyntheticLibrary(dataDir, size)
    const indexDir = join(work, String(size))
    const body = (await indexTools('bench', tools, config)).library.toJsonLines().toString('utf8')
    // Saved as a first PUT of the body saves it (its source: the format it was read in).
    const first = await importUploadedLibrary(
      { text: body, fileName: 'tools.jsonl' },
      'bench',
      config,
      { retriever },
    )
    if (first.unchanged) throw new Error('a first upload is never unchanged')
    await saveIndexedLibrary(indexDir, first.indexed, { toolsIndex: first.toolsIndex })
    const served = await loadIndexedLibrary(join(indexDir, 'bench'), config)
    const whole: number[] = []
    const check: number[] = []
    for (let rep = 0; rep < reps; rep += 1) {
      let started = performance.now()
      const upload = await importUploadedLibrary(
        { text: body, fileName: 'tools.jsonl' },
        'bench',
        config,
        { retriever, unchangedFrom: served },
      )
      whole.push(performance.now() - started)
      if (!upload.unchanged) throw new Error(`size ${size}: the upload was not found unchanged`)
      started = performance.now()
      const problem = await savedIndexProblem(served.dir!, config, served.manifest)
      check.push(performance.now() - started)
      if (problem !== undefined) throw new Error(`size ${size}: ${problem}`)
    }
    const wholeMs = summarize(whole).p50
    const checkMs = summarize(check).p50
    rows.push(
      `| ${size.toLocaleString('en-US')} | ${(body.length / 1e6).toFixed(1)} | ${wholeMs.toFixed(1)} | ${checkMs.toFixed(1)} | ${((100 * checkMs) / wholeMs).toFixed(0)}% |`,
    )
  }
} finally {
  await rm(work, { recursive: true, force: true })
}
console.log(
  `Unchanged upload (${retriever}), medians of ${reps} (load average ${loadavg()[0].toFixed(1)}):`,
)
console.log('| tools | body MB | unchanged PUT path ms | disk check ms | check share |')
console.log('| --- | --- | --- | --- | --- |')
for (const row of rows) console.log(row)
