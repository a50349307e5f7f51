/**
 * Performance benchmark (not a test): builds libraries of real ToolBench API names and prints one
 * table: index build time, memory, BM25 query latency, selectTools latency in process, and
 * /v1/select-tools latency and throughput over loopback at concurrency 16.
 *
 *   npm run bench:perf -- [--sizes 10000,50000] [--duration 10] [--connections 16] [--data DIR]
 *                         [--generator wrk|autocannon] [--ceiling] [--json FILE]
 *
 * `--sizes` takes up to 1,000,000 tools (past the 46,984 ToolGen names, copies with ` v2`, ` v3`…
 * tool suffixes). `--ceiling` adds a row for a bare hono app (bench/perf/ceiling-server.ts) that
 * answers a precomputed real toolsel response of the first size's mean response size, loaded in
 * the same run by the same generator. `--json FILE` writes `{rows:[{tools, buildS, loadS, rssMiB,
 * peakRssMiB, bm25P50Ms, bm25P99Ms, selectP50Ms, httpReqPerS, httpP50Ms}], ceiling:{httpReqPerS}}`
 * (`ceiling` null without `--ceiling`; see bench/perf/perf-options.ts).
 *
 * The load generator is wrk (Debian package) when installed, else autocannon (npm).
 *   npm run bench:perf -- --dense [--dense-only] [--dense-embedder use-lite] [--dense-text full]
 *     [--dense-cache bench/out/perf-dense-cache] [--dense-cold]
 *
 * `--dense` adds a table for dense and hybrid retrieval (bench/perf/dense.ts); `--dense-only`
 * skips the BM25 and HTTP measurements.
 *
 * Each size runs in a fresh child process, so its memory numbers are its own; the HTTP server runs
 * in another child (`toolsel serve` on the built index) and the load generator drives it from here.
 * @module
 */
import { spawn } from 'node:child_process'
import { mkdir, mkdtemp, readFile, rm, writeFile } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { dirname, join } from 'node:path'
import type { HttpLoadResult } from './perf/http-load.ts'
import type { DenseResult } from './perf/dense.ts'
import type { InProcessResult } from './perf/in-process.ts'
import { PERF_OPTIONS, parsePerfArgs, perfJson } from './perf/perf-options.ts'
import { benchArgs, usageError } from './bench-args.ts'
import { markdownTable } from './lib/measure.ts'

benchArgs(import.meta.url, { options: PERF_OPTIONS, allowPositionals: true })
let options: ReturnType<typeof parsePerfArgs>
try {
  options = parsePerfArgs(process.argv.slice(2))
} catch (error) {
  usageError(import.meta.url, error instanceof Error ? error.message : String(error))
}
// The measuring code only once the flags are good: --help and a bad flag answer without it.
// Every mode (a size's child included) loads all three, as before, so its memory figures hold.
const { runCeilingLoad, runHttpLoad } = await import('./perf/http-load.ts')
const { formatDenseTable, measureDense } = await import('./perf/dense.ts')
const { measureInProcess } = await import('./perf/in-process.ts')

if (options.childDense !== undefined) {
  const result = await measureDense(options.dataDir, options.childDense, {
    embedder: options.denseEmbedder,
    text: options.denseText,
    cacheDir: options.denseCache,
    cold: options.denseCold,
  })
  process.stdout.write(`${JSON.stringify(result)}\n`)
  // use-lite's idle worker threads are unref'd, but the native HNSW graph can hold the loop.
  process.exit(0)
} else if (options.child !== undefined) {
  // Child mode: measure one size in process and hand the result back as JSON on stdout.
  const result = await measureInProcess(options.dataDir, options.child, options.out!)
  process.stdout.write(`${JSON.stringify(result)}\n`)
} else {
  await main()
}

async function main(): Promise<void> {
  const { sizes } = options
  const rows: Array<InProcessResult & { http: HttpLoadResult }> = []
  let ceiling: HttpLoadResult | undefined
  for (const size of options.denseOnly ? [] : sizes) {
    const out = await mkdtemp(join(tmpdir(), 'toolsel-perf-'))
    try {
      process.stderr.write(`\n== ${size} tools: in-process measurements\n`)
      const inProcess = await runChild(size, out)
      process.stderr.write(
        `== ${size} tools: HTTP load (${options.connections} connections, ${options.durationSeconds} s)\n`,
      )
      const load = {
        instructions: JSON.parse(
          await readFile(join(out, 'instructions.json'), 'utf8'),
        ) as string[],
        connections: options.connections,
        durationSeconds: options.durationSeconds,
        generator: options.generator,
      }
      const http = await runHttpLoad({ ...load, indexDir: out, library: inProcess.library })
      rows.push({ ...inProcess, http })
      if (options.ceiling && !ceiling) {
        process.stderr.write(
          `== ceiling: bare hono app, ${http.meanResponseBytes.toFixed(0)}-byte response\n`,
        )
        ceiling = await runCeilingLoad(http.responseSample, load)
      }
    } finally {
      await rm(out, { recursive: true, force: true })
    }
  }
  if (rows.length > 0) process.stdout.write(formatTable(rows, ceiling))
  if (options.json) {
    await mkdir(dirname(options.json), { recursive: true })
    await writeFile(options.json, `${JSON.stringify(perfJson(rows, ceiling), null, 2)}\n`)
    process.stderr.write(`Wrote ${options.json}\n`)
  }
  if (options.dense || options.denseOnly) {
    const denseRows: DenseResult[] = []
    for (const size of sizes) {
      process.stderr.write(`\n== ${size} tools: dense and hybrid (${options.denseEmbedder})\n`)
      denseRows.push(await runDenseChild(size))
    }
    process.stdout.write(formatDenseTable(denseRows))
  }
}

function runDenseChild(size: number): Promise<DenseResult> {
  const flags = ['--dense-embedder', options.denseEmbedder, '--dense-text', options.denseText]
  flags.push('--dense-cache', options.denseCache, '--data', options.dataDir)
  if (options.denseCold) flags.push('--dense-cold')
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
        options.dataDir,
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

function formatTable(
  rows: Array<InProcessResult & { http: HttpLoadResult }>,
  ceiling: HttpLoadResult | undefined,
): string {
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
    ...(ceiling ? ['÷ ceiling'] : []),
  ]
  const cells = rows.map((row) => [
    row.tools,
    row.withRealDescription,
    f(row.buildSeconds),
    f(row.rssAfterBuildMiB, 0),
    f(row.http.serverRssMiB, 0),
    `${f(row.bm25.p50, 3)} / ${f(row.bm25.p99, 3)}`,
    `${f(row.selectTools.p50, 3)} / ${f(row.selectTools.p99, 3)}`,
    `${f(row.http.p50)} / ${f(row.http.p99)}`,
    f(row.http.requestsPerSecond, 0),
    ...(ceiling ? [f(row.http.requestsPerSecond / ceiling.requestsPerSecond)] : []),
  ])
  if (ceiling) {
    const blank: string[] = Array(header.length - 4).fill('')
    const http = `${f(ceiling.p50)} / ${f(ceiling.p99)}`
    cells.push(['ceiling', ...blank, http, f(ceiling.requestsPerSecond, 0), '1.00'])
  }
  const lines = markdownTable(header, cells)
  const notes = rows.map(
    (row) =>
      `- ${row.tools} tools: load from ${row.http.generator}; ${row.bm25.count} BM25 queries (${row.stepQueries} planned steps × passes), ${row.selectTools.count} selectTools calls, ${row.http.requests} HTTP requests (${row.http.errors} errors, ${row.http.non2xx} non-2xx); index ${f(row.indexFileMiB, 1)} MiB on disk, loaded by the server in ${f(row.http.serverLoadSeconds, 1)} s.`,
  )
  if (ceiling) {
    notes.push(
      `- ceiling: a bare hono app answering a precomputed ${f(ceiling.meanResponseBytes, 0)}-byte toolsel response (the first size's response closest to its mean of ${f(rows[0].http.meanResponseBytes, 0)} bytes), same generator and connections; ${ceiling.requests} requests (${ceiling.errors} errors, ${ceiling.non2xx} non-2xx).`,
    )
  }
  return `\n${lines.join('\n')}\n\n${notes.join('\n')}\n`
}
