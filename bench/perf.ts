/**
 * Performance benchmark (not a test): builds libraries of real ToolBench API names and prints one
 * table: index build time, memory, BM25 query latency, selectTools latency in process, and
 * /v1/select-tools latency and throughput over loopback at concurrency 16.
 *
 *   npm run bench:perf -- [--sizes 10000,50000] [--duration 10] [--connections 16] [--data DIR]
 *                         [--generator wrk|autocannon] [--ceiling] [--json FILE] [--repeats N [--together]]
 *
 * `--sizes` takes up to 1,000,000 tools (past the 46,984 ToolGen names, copies with ` v2`, ` v3`…
 * tool suffixes). `--ceiling` adds a row for a bare hono app (bench/perf/ceiling-server.ts) that
 * answers a precomputed real toolsel response of the first size's mean response size, loaded in
 * the same run by the same generator. `--json FILE` writes `{rows:[{tools, buildS, loadS, rssMiB,
 * peakRssMiB, bm25P50Ms, bm25P99Ms, selectP50Ms, httpReqPerS, httpP50Ms}], ceiling:{httpReqPerS}}`
 * (`ceiling` null without `--ceiling`; see bench/perf/perf-options.ts).
 *
 * `--repeats N` (N > 1) builds every size first, then keeps one server per size up and measures
 * N interleaved rounds (the order reversed each round), printing each run with the load average,
 * the server's CPU per request (/proc) and each size's medians, and the larger sizes' req/s ÷ the
 * smallest's of the same round: a fresh server per size, measured once a minute apart, swung
 * #12's 100k ÷ 10k ratio 0.26-1.18 on one code (bench/README.md, round 51). The servers are
 * warmed together until each is steady (two successive 2 s runs' CPU per request within 10%,
 * bench/perf/wrk-load.ts warmUpUntilSteady), and the warm-up it took is printed. The main table then
 * shows each size's median round; `--json` adds `runs` and `warmUp`. `--together` loads every size's server
 * at the same time in each round (each its own wrk), so bursts of other work fall on both alike.
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
import type { HttpLoadResult, RepeatedRun } from './perf/http-load.ts'
import type { SteadyWarmUp } from './perf/wrk-load.ts'
import type { DenseResult } from './perf/dense.ts'
import type { InProcessResult } from './perf/in-process.ts'
import { PERF_OPTIONS, parsePerfArgs, perfJson } from './perf/perf-options.ts'
import { benchArgs, usageError } from './bench-args.ts'
import { evenMedian, markdownTable } from './lib/measure.ts'

benchArgs(import.meta.url, { options: PERF_OPTIONS, allowPositionals: true })
let options: ReturnType<typeof parsePerfArgs>
try {
  options = parsePerfArgs(process.argv.slice(2))
} catch (error) {
  usageError(import.meta.url, error instanceof Error ? error.message : String(error))
}
// The measuring code only once the flags are good: --help and a bad flag answer without it.
// Every mode (a size's child included) loads all three, as before, so its memory figures hold.
const { formatWarmUp, runCeilingLoad, runHttpLoad, runHttpLoadsInterleaved } =
  await import('./perf/http-load.ts')
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
  let rows: Array<InProcessResult & { http: HttpLoadResult }> = []
  let ceiling: HttpLoadResult | undefined
  let repeated: RepeatedRun[] = []
  let warmUp: SteadyWarmUp | undefined
  if (options.repeats > 1 && !options.denseOnly) {
    ;({ rows, ceiling, repeated, warmUp } = await measureRepeated())
  }
  for (const size of options.denseOnly || options.repeats > 1 ? [] : sizes) {
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
  if (repeated.length > 0) process.stdout.write(formatRepeated(repeated, options.together))
  if (warmUp) process.stdout.write(formatWarmUp(warmUp, rows))
  if (options.json) {
    await mkdir(dirname(options.json), { recursive: true })
    const json = {
      ...perfJson(rows, ceiling),
      ...(repeated.length > 0 ? { runs: repeatedJson(repeated) } : {}),
      ...(warmUp ? { warmUp } : {}),
    }
    await writeFile(options.json, `${JSON.stringify(json, null, 2)}\n`)
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

/**
 * `--repeats N`: every size built in its own child first, then one server per size kept up and
 * loaded in N interleaved rounds (bench/perf/http-load.ts runHttpLoadsInterleaved). A size's row
 * takes its median round (by req/s).
 */
async function measureRepeated(): Promise<{
  rows: Array<InProcessResult & { http: HttpLoadResult }>
  ceiling: HttpLoadResult | undefined
  repeated: RepeatedRun[]
  warmUp: SteadyWarmUp
}> {
  const outs: string[] = []
  try {
    const built: Array<InProcessResult & { indexDir: string }> = []
    for (const size of options.sizes) {
      const out = await mkdtemp(join(tmpdir(), 'toolsel-perf-'))
      outs.push(out)
      process.stderr.write(`\n== ${size} tools: in-process measurements\n`)
      built.push({ ...(await runChild(size, out)), indexDir: out })
    }
    const load = {
      instructions: JSON.parse(
        await readFile(join(outs[0], 'instructions.json'), 'utf8'),
      ) as string[],
      connections: options.connections,
      durationSeconds: options.durationSeconds,
      generator: options.generator,
      repeats: options.repeats,
      together: options.together,
    }
    process.stderr.write(
      `== HTTP load: ${options.repeats} ${options.together ? 'rounds, all sizes at once' : 'interleaved rounds'}, ${options.connections} connections, ${options.durationSeconds} s a run\n`,
    )
    let ceiling: HttpLoadResult | undefined
    const { runs: repeated, warmUp } = await runHttpLoadsInterleaved(
      built.map((one) => ({ tools: one.tools, indexDir: one.indexDir, library: one.library })),
      load,
      async (first) => {
        if (!options.ceiling) return
        process.stderr.write(
          `== ceiling: bare hono app, ${first.meanResponseBytes.toFixed(0)}-byte response\n`,
        )
        ceiling = await runCeilingLoad(first.responseSample, load)
      },
    )
    const rows = built.map((one) => {
      const runs = repeated
        .filter((run) => run.tools === one.tools)
        .map((run) => run.result)
        .sort((a, b) => a.requestsPerSecond - b.requestsPerSecond)
      return { ...one, http: runs[(runs.length - 1) >> 1] }
    })
    return { rows, ceiling, repeated, warmUp }
  } finally {
    await Promise.all(outs.map((out) => rm(out, { recursive: true, force: true })))
  }
}

/** The rounds of `--repeats`: each run, then each size's medians and the rounds' ratios. */
function formatRepeated(runs: RepeatedRun[], together: boolean): string {
  const f = (value: number, digits = 2) => value.toFixed(digits)
  const sizes = [...new Set(runs.map((run) => run.tools))]
  const header = [
    'round',
    'tools',
    'load (1 min)',
    'HTTP req/s',
    'HTTP p50 (ms)',
    'server CPU ms / request',
  ]
  const cells = runs.map((run) => [
    run.round,
    run.tools,
    f(run.result.loadAverage),
    f(run.result.requestsPerSecond, 0),
    f(run.result.p50),
    f(run.result.serverCpuMsPerRequest, 3),
  ])
  const how = together
    ? 'every size loaded at the same time in a round'
    : 'order reversed every round'
  const lines = [`\nRounds (each size's server kept up; ${how}):\n`]
  lines.push(...markdownTable(header, cells), '')
  const smallest = sizes[0]
  const bySize = (tools: number, read: (run: RepeatedRun) => number) =>
    runs.filter((run) => run.tools === tools).map(read)
  const ofRound = (round: number, tools: number) =>
    runs.find((run) => run.round === round && run.tools === tools)!.result
  const rounds = [...new Set(runs.map((run) => run.round))]
  for (const tools of sizes) {
    const reqs = bySize(tools, (run) => run.result.requestsPerSecond)
    const cpu = bySize(tools, (run) => run.result.serverCpuMsPerRequest)
    let line = `- ${tools} tools: req/s median ${f(evenMedian(reqs), 0)} (${f(Math.min(...reqs), 0)}-${f(Math.max(...reqs), 0)}), server CPU per request median ${f(evenMedian(cpu), 3)} ms`
    if (tools !== smallest) {
      const ratios = rounds.map(
        (round) =>
          ofRound(round, tools).requestsPerSecond / ofRound(round, smallest).requestsPerSecond,
      )
      const cpuRatios = rounds.map(
        (round) =>
          ofRound(round, smallest).serverCpuMsPerRequest /
          ofRound(round, tools).serverCpuMsPerRequest,
      )
      line += `; req/s ÷ ${smallest} tools' in the same round: median **${f(evenMedian(ratios))}** (${ratios.map((r) => f(r)).join(', ')}); by CPU per request (${smallest}'s ÷ this): median ${f(evenMedian(cpuRatios))} (${f(Math.min(...cpuRatios))}-${f(Math.max(...cpuRatios))})`
    }
    lines.push(`${line}.`)
  }
  const loads = runs.map((run) => run.result.loadAverage)
  lines.push(
    `- load average (1 min) at the runs' starts: ${f(Math.min(...loads))}-${f(Math.max(...loads))}; it counts this benchmark's own server and wrk (about 1-2 on this machine).`,
  )
  return `${lines.join('\n')}\n`
}

function repeatedJson(runs: RepeatedRun[]) {
  return runs.map((run) => ({
    round: run.round,
    tools: run.tools,
    loadAverage: run.result.loadAverage,
    httpReqPerS: run.result.requestsPerSecond,
    httpP50Ms: run.result.p50,
    serverCpuMsPerRequest: run.result.serverCpuMsPerRequest,
  }))
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
      `- ceiling: a bare hono app answering a precomputed ${f(ceiling.meanResponseBytes, 0)}-byte toolsel response (the first size's response closest to its mean of ${f(rows[0].http.meanResponseBytes, 0)} bytes), same generator and connections; ${ceiling.requests} requests (${ceiling.errors} errors, ${ceiling.non2xx} non-2xx); server CPU ${f(ceiling.serverCpuMsPerRequest, 3)} ms per request, ${rows.map((row) => `÷ ${row.tools} tools' ${f(ceiling.serverCpuMsPerRequest / row.http.serverCpuMsPerRequest)}`).join(', ')} (#12's toolsel ÷ hono by CPU per request).`,
    )
  }
  return `\n${lines.join('\n')}\n\n${notes.join('\n')}\n`
}
