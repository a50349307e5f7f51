/**
 * Performance benchmark (not a test): builds libraries of 10k and 50k real ToolBench API names and
 * prints one table: index build time, memory, BM25 query latency, selectTools latency in process,
 * and /v1/select-tools latency and throughput over loopback at concurrency 16.
 *
 *   npm run bench:perf -- [--sizes 10000,50000] [--duration 10] [--connections 16] [--data DIR]
 *                         [--generator wrk|autocannon]
 *
 * The load generator is wrk (Debian package) when installed, else autocannon (npm).
 *   npm run bench:perf -- --dense [--dense-only] [--dense-embedder use-lite] [--dense-text full]
 *     [--dense-cache bench/out/perf-dense-cache] [--dense-cold]
 *
 * `--dense` adds a table for dense and hybrid retrieval (bench/perf/dense.ts); `--dense-only`
 * skips the BM25 and HTTP measurements.
 *
 * Each size runs in a fresh child process, so its memory numbers are its own; the HTTP server runs
 * in another child (`toolsel serve` on the built index) and autocannon drives it from this process.
 * @module
 */
import { spawn } from 'node:child_process'
import { mkdtemp, readFile, rm } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { parseArgs } from 'node:util'
import { runHttpLoad, type HttpLoadResult } from './perf/http-load.ts'
import { formatDenseTable, measureDense, type DenseResult } from './perf/dense.ts'
import { measureInProcess, type InProcessResult } from './perf/in-process.ts'

const { values } = parseArgs({
  options: {
    sizes: { type: 'string', default: '10000,50000' },
    duration: { type: 'string', default: '10' },
    connections: { type: 'string', default: '16' },
    generator: { type: 'string', default: 'wrk' },
    data: { type: 'string', default: process.env.TOOLSEL_DATA_DIR ?? '../shared/data' },
    child: { type: 'string' },
    out: { type: 'string' },
    dense: { type: 'boolean', default: false },
    'dense-only': { type: 'boolean', default: false },
    'dense-embedder': { type: 'string', default: 'use-lite' },
    'dense-text': { type: 'string', default: 'full' },
    'dense-cache': { type: 'string', default: 'bench/out/perf-dense-cache' },
    'dense-cold': { type: 'boolean', default: false },
    'child-dense': { type: 'string' },
  },
})

if (values['child-dense']) {
  const result = await measureDense(values.data, Number(values['child-dense']), {
    embedder: values['dense-embedder'],
    text: values['dense-text'] as 'full' | 'short',
    cacheDir: values['dense-cache'],
    cold: values['dense-cold'],
  })
  process.stdout.write(`${JSON.stringify(result)}\n`)
  // use-lite's idle worker threads are unref'd, but the native HNSW graph can hold the loop.
  process.exit(0)
} else if (values.child) {
  // Child mode: measure one size in process and hand the result back as JSON on stdout.
  const result = await measureInProcess(values.data, Number(values.child), values.out!)
  process.stdout.write(`${JSON.stringify(result)}\n`)
} else {
  await main()
}

async function main(): Promise<void> {
  const sizes = values.sizes.split(',').map(Number)
  const rows: Array<InProcessResult & { http: HttpLoadResult }> = []
  for (const size of values['dense-only'] ? [] : sizes) {
    const out = await mkdtemp(join(tmpdir(), 'toolsel-perf-'))
    try {
      process.stderr.write(`\n== ${size} tools: in-process measurements\n`)
      const inProcess = await runChild(size, out)
      process.stderr.write(
        `== ${size} tools: HTTP load (${values.connections} connections, ${values.duration} s)\n`,
      )
      const http = await runHttpLoad({
        indexDir: out,
        library: inProcess.library,
        instructions: JSON.parse(
          await readFile(join(out, 'instructions.json'), 'utf8'),
        ) as string[],
        connections: Number(values.connections),
        durationSeconds: Number(values.duration),
        generator: values.generator === 'autocannon' ? 'autocannon' : 'wrk',
      })
      rows.push({ ...inProcess, http })
    } finally {
      await rm(out, { recursive: true, force: true })
    }
  }
  if (rows.length > 0) process.stdout.write(formatTable(rows))
  if (values.dense || values['dense-only']) {
    const denseRows: DenseResult[] = []
    for (const size of sizes) {
      process.stderr.write(`\n== ${size} tools: dense and hybrid (${values['dense-embedder']})\n`)
      denseRows.push(await runDenseChild(size))
    }
    process.stdout.write(formatDenseTable(denseRows))
  }
}

function runDenseChild(size: number): Promise<DenseResult> {
  const flags = ['--dense-embedder', values['dense-embedder'], '--dense-text', values['dense-text']]
  flags.push('--dense-cache', values['dense-cache'], '--data', values.data)
  if (values['dense-cold']) flags.push('--dense-cold')
  return runChildProcess(['--child-dense', String(size), ...flags]) as Promise<DenseResult>
}

/** Runs bench/perf.ts with `args` in a fresh process and parses the JSON line it prints last. */
function runChildProcess(args: string[]): Promise<unknown> {
  return new Promise((resolve, reject) => {
    const child = spawn(
      process.execPath,
      ['--expose-gc', '--import', 'tsx', 'bench/perf.ts', ...args],
      { stdio: ['ignore', 'pipe', 'inherit'] },
    )
    let output = ''
    child.stdout.on('data', (chunk: Buffer) => (output += chunk.toString()))
    child.on('error', reject)
    child.on('exit', (code) => {
      if (code !== 0) return reject(new Error(`perf child ${args.join(' ')} exited with ${code}`))
      resolve(JSON.parse(output.trim().split('\n').pop()!))
    })
  })
}

function runChild(size: number, out: string): Promise<InProcessResult> {
  return new Promise((resolve, reject) => {
    const child = spawn(
      process.execPath,
      [
        '--expose-gc',
        '--import',
        'tsx',
        'bench/perf.ts',
        '--child',
        String(size),
        '--out',
        out,
        '--data',
        values.data,
      ],
      { stdio: ['ignore', 'pipe', 'inherit'] },
    )
    let output = ''
    child.stdout.on('data', (chunk: Buffer) => (output += chunk.toString()))
    child.on('error', reject)
    child.on('exit', (code) => {
      if (code !== 0) return reject(new Error(`perf child for ${size} tools exited with ${code}`))
      resolve(JSON.parse(output.trim().split('\n').pop()!) as InProcessResult)
    })
  })
}

function formatTable(rows: Array<InProcessResult & { http: HttpLoadResult }>): string {
  const f = (value: number, digits = 2) => value.toFixed(digits)
  const header = [
    'tools',
    'real descr.',
    'index build (s)',
    'RSS after build (MiB)',
    'server RSS (MiB)',
    'BM25 p50 / p99 (ms)',
    'selectTools p50 / p99 (ms)',
    'HTTP p50 / p99 (ms)',
    'HTTP req/s',
  ]
  const lines = [`| ${header.join(' | ')} |`, `|${header.map(() => '---:').join('|')}|`]
  for (const row of rows) {
    lines.push(
      `| ${[
        row.tools,
        row.withRealDescription,
        f(row.buildSeconds),
        f(row.rssAfterBuildMiB, 0),
        f(row.http.serverRssMiB, 0),
        `${f(row.bm25.p50, 3)} / ${f(row.bm25.p99, 3)}`,
        `${f(row.selectTools.p50, 3)} / ${f(row.selectTools.p99, 3)}`,
        `${f(row.http.p50)} / ${f(row.http.p99)}`,
        f(row.http.requestsPerSecond, 0),
      ].join(' | ')} |`,
    )
  }
  const notes = rows.map(
    (row) =>
      `- ${row.tools} tools: load from ${row.http.generator}; ${row.bm25.count} BM25 queries (${row.stepQueries} planned steps × passes), ${row.selectTools.count} selectTools calls, ${row.http.requests} HTTP requests (${row.http.errors} errors, ${row.http.non2xx} non-2xx); index ${f(row.indexFileMiB, 1)} MiB on disk, loaded by the server in ${f(row.http.serverLoadSeconds, 1)} s.`,
  )
  return `\n${lines.join('\n')}\n\n${notes.join('\n')}\n`
}
