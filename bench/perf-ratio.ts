/**
 * Issue #12's ratio (HTTP req/s at the large size ÷ req/s at the small size) for two checkouts,
 * measured in alternating turns: each turn runs `bench/perf.ts --sizes SMALL,LARGE --ceiling
 * --json F` once in `--before DIR` (another checkout with its node_modules, e.g. a built clean
 * clone of an older commit) and once in this checkout, in a fresh process each, the side that
 * goes first swapping every turn. Prints one row per run (req/s at each size, the ratio, the bare
 * hono ceiling, toolsel ÷ ceiling, selectTools p50 at each size, the load average when the run
 * started) and each side's medians and ranges: on a shared machine the load moves between runs,
 * so only turns taken side by side compare.
 *
 *   node --import tsx bench/perf-ratio.ts --before DIR [--turns 4] [--sizes 10000,100000]
 *     [--data DIR] [--duration 10] [--json FILE]
 *
 * Build dist/ in both checkouts first (`npm run build`): bin/toolsel.mjs serves src/ through tsx
 * otherwise, and the side is then named "(src via tsx …)" in the table.
 * `--before .` compares this checkout with itself (the run-to-run spread).
 *
 *   node --import tsx bench/perf-ratio.ts --paired --before DIR [--index-dirs SMALL,LARGE] …
 *
 * `--paired` measures the ratio another way, steadier on a busy machine: per turn and side, that
 * checkout serves both libraries at once and one autocannon load (16 connections each, the
 * benchmark instructions in rotation, `includeSchemas: true`, WARM_UP_PASSES passes of warm-up as
 * bench:perf) drives both together, so both sizes share whatever else the machine runs; the ratio
 * is the small library's CPU per request (from /proc) ÷ the large one's, the req/s ratio of a
 * server bound by its CPU. `--index-dirs` takes two saved libraries
 * (`bench/perf.ts --child N --out OUT` leaves one in OUT/perf-N, with OUT/instructions.json);
 * without it both are built first (this checkout's code). Each run's own log (bench/perf.ts's
 * stderr) goes to a temporary folder, named when a run fails. `--json FILE` writes every run's
 * bench/perf.ts JSON with its side, turn and load.
 * @module
 */
import { execFileSync, spawn } from 'node:child_process'
import { createWriteStream } from 'node:fs'
import { mkdir, mkdtemp, readFile, rm, writeFile } from 'node:fs/promises'
import { loadavg, tmpdir } from 'node:os'
import { basename, dirname, join, resolve } from 'node:path'
import { pathToFileURL } from 'node:url'
import type { PerfJson } from './perf/perf-options.ts'
import { benchArgs, usageError, wholeNumber } from './bench-args.ts'
import { evenMedian, markdownTable } from './lib/measure.ts'

const { values } = benchArgs(import.meta.url, {
  options: {
    before: { type: 'string' },
    turns: { type: 'string', default: '4' },
    sizes: { type: 'string', default: '10000,100000' },
    data: { type: 'string', default: process.env.TOOLSEL_DATA_DIR ?? '../shared/data' },
    duration: { type: 'string', default: '10' },
    json: { type: 'string' },
    paired: { type: 'boolean', default: false },
    'index-dirs': { type: 'string' },
  },
})
if (values.before === undefined) {
  usageError(import.meta.url, '--before DIR: the checkout to compare with (. for this one).')
}
const turns = wholeNumber(import.meta.url, '--turns', values.turns, 1, 50)
const sizes = values.sizes.split(',').map(Number)
if (
  sizes.length !== 2 ||
  !sizes.every((n) => Number.isInteger(n) && n > 0) ||
  sizes[0] >= sizes[1]
) {
  usageError(import.meta.url, `--sizes takes two sizes, small then large, got "${values.sizes}"`)
}
if (
  values['index-dirs'] !== undefined &&
  (!values.paired || values['index-dirs'].split(',').length !== 2)
) {
  usageError(
    import.meta.url,
    '--index-dirs takes two saved libraries, small then large, with --paired',
  )
}
const duration = Number(values.duration)
if (!(duration > 0 && duration <= 600)) {
  usageError(import.meta.url, `--duration takes seconds from 1 to 600, got "${values.duration}"`)
}

const here = resolve(import.meta.dirname, '..')
const sides = [
  { root: resolve(values.before), name: label(resolve(values.before)) },
  { root: here, name: label(here) },
]
if (sides[0].name === sides[1].name) sides[0].name += ' (before)'
// bin/toolsel.mjs serves from dist/ only while it matches src/, else through tsx's loader (about
// 30 MiB and slower first requests): a side without a fresh build is named so.
for (const side of sides) {
  const fresh = (await import(pathToFileURL(join(side.root, 'bin', 'dist-freshness.mjs')).href)
    .then(({ isDistFresh }) => isDistFresh(join(side.root, 'src'), join(side.root, 'dist')))
    .catch(() => false)) as boolean
  if (!fresh) side.name += ' (src via tsx: npm run build there)'
}
const data = resolve(values.data)

interface Run {
  side: string
  turn: number
  load1: number
  perf: PerfJson
}

if (values.paired) await pairedTurns()
else await perfTurns()

async function perfTurns(): Promise<void> {
  const work = await mkdtemp(join(tmpdir(), 'toolsel-perf-ratio-'))
  const runs: Run[] = []
  try {
    for (let turn = 1; turn <= turns; turn++) {
      const order = turn % 2 === 1 ? sides : [sides[1], sides[0]]
      for (const side of order) {
        const load1 = loadavg()[0]
        const perf = await runPerf(side.root, join(work, `${runs.length + 1}`))
        runs.push({ side: side.name, turn, load1, perf })
        process.stderr.write(`${side.name} turn ${turn}: ${row(runs.at(-1)!).join(' | ')}\n`)
      }
    }
  } finally {
    // Keep the logs when a run failed (the error names them); otherwise nothing is left behind.
    if (runs.length === turns * 2) await rm(work, { recursive: true, force: true })
  }
  process.stdout.write(table(runs))
  await writeJson({ sizes, runs })
}

async function writeJson(content: unknown): Promise<void> {
  if (values.json === undefined) return
  await mkdir(dirname(resolve(values.json)), { recursive: true })
  await writeFile(values.json, `${JSON.stringify(content, null, 2)}\n`)
  process.stderr.write(`Wrote ${values.json}\n`)
}

interface PairedRun {
  side: string
  turn: number
  load1: number
  /** Per library, small then large. */
  requestsPerSecond: number[]
  cpuMsPerRequest: number[]
  failed: number[]
}

/**
 * `--paired`: per turn and side, that checkout serves both libraries at once (two `toolsel
 * serve`s) and one autocannon load drives both together, so both sizes run under the same load
 * from other processes; CPU per request comes from /proc. The ratio is small's CPU per request ÷
 * large's: the req/s ratio of a server bound by its CPU.
 */
async function pairedTurns(): Promise<void> {
  const { buildSelectLoad, cpuMillis, startServe } = await import('./perf/serve-process.ts')
  const { default: autocannon } = await import('autocannon')
  const { WARM_UP_PASSES, warmUpTogether } = await import('./perf/wrk-load.ts')
  const run = (options: Parameters<typeof autocannon>[0]) =>
    new Promise<Parameters<Parameters<typeof autocannon>[1]>[1]>((done, fail) =>
      autocannon(options, (error, result) => (error ? fail(error) : done(result))),
    )
  const work = await mkdtemp(join(tmpdir(), 'toolsel-perf-ratio-'))
  const runs: PairedRun[] = []
  try {
    const libraries: Array<{ dir: string; library: string }> = []
    let bodies: string[] = []
    if (values['index-dirs'] !== undefined) {
      for (const dir of values['index-dirs'].split(',').map((path) => resolve(path))) {
        libraries.push({ dir: dirname(dir), library: basename(dir) })
      }
      const file = join(libraries[0].dir, 'instructions.json')
      bodies = (JSON.parse(await readFile(file, 'utf8')) as string[]).map((instruction) =>
        JSON.stringify({ instruction, includeSchemas: true }),
      )
    } else {
      for (const size of sizes) {
        const dir = join(work, `lib-${size}`)
        const built = await buildSelectLoad(data, size, dir)
        libraries.push({ dir, library: built.library })
        bodies = built.bodies
      }
    }
    const load = async (url: string, seconds: number) => {
      let next = 0
      const result = await run({
        url: `${url}/v1/select-tools`,
        connections: 16,
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        duration: seconds,
        requests: [
          {
            setupRequest: (request: { body?: string }) => ({
              ...request,
              body: bodies[next++ % bodies.length],
            }),
          },
        ],
      })
      return {
        requests: result.requests.total,
        requestsPerSecond: result.requests.average,
        failed: result.errors + result.non2xx,
      }
    }
    for (let turn = 1; turn <= turns; turn++) {
      const order = turn % 2 === 1 ? sides : [sides[1], sides[0]]
      for (const side of order) {
        const servers = await Promise.all(
          libraries.map(({ dir, library }) =>
            startServe({ root: side.root, indexDir: dir, library }),
          ),
        )
        try {
          // JIT and per-library caches: runs of 3 s on each, loaded together, until each has
          // been sent WARM_UP_PASSES passes of the instructions (as bench:perf).
          await warmUpTogether(
            async () =>
              (await Promise.all(servers.map(({ url }) => load(url, 3)))).map(
                (result) => result.requests,
              ),
            WARM_UP_PASSES * bodies.length,
          )
          const load1 = loadavg()[0]
          const pids = servers.map(({ server }) => server.pid!)
          const before = await Promise.all(pids.map((pid) => cpuMillis(pid)))
          const results = await Promise.all(servers.map(({ url }) => load(url, duration)))
          const after = await Promise.all(pids.map((pid) => cpuMillis(pid)))
          runs.push({
            side: side.name,
            turn,
            load1,
            requestsPerSecond: results.map((result) => result.requestsPerSecond),
            cpuMsPerRequest: results.map(
              (result, at) => (after[at] - before[at]) / result.requests,
            ),
            failed: results.map((result) => result.failed),
          })
          process.stderr.write(
            `${side.name} turn ${turn}: ${pairedRow(runs.at(-1)!).join(' | ')}\n`,
          )
        } finally {
          await Promise.all(
            servers.map(({ server }) => {
              if (server.exitCode !== null) return undefined
              const exited = new Promise((done) => server.once('exit', done))
              server.kill('SIGTERM')
              return exited
            }),
          )
        }
      }
    }
  } finally {
    await rm(work, { recursive: true, force: true })
  }
  process.stdout.write(pairedTable(runs))
  await writeJson({ sizes, paired: true, runs })
}

function pairedRatio(run: PairedRun): number {
  return run.cpuMsPerRequest[0] / run.cpuMsPerRequest[1]
}

function pairedRow(run: PairedRun): string[] {
  return [
    run.side,
    String(run.turn),
    `${run.cpuMsPerRequest[0].toFixed(3)} / ${run.cpuMsPerRequest[1].toFixed(3)}`,
    pairedRatio(run).toFixed(3),
    `${run.requestsPerSecond[0].toFixed(0)} / ${run.requestsPerSecond[1].toFixed(0)}`,
    (run.requestsPerSecond[1] / run.requestsPerSecond[0]).toFixed(3),
    run.failed.join(' / '),
    run.load1.toFixed(2),
  ]
}

function pairedTable(runs: PairedRun[]): string {
  const [small, large] = sizeNames()
  const header = ['code', 'turn', `CPU per request ${small} / ${large} (ms)`]
  header.push(`${small} CPU ÷ ${large} CPU`, `req/s ${small} / ${large} (loaded together)`)
  header.push(`${large} ÷ ${small} req/s`, 'errors or non-2xx', 'load (1 min)')
  const lines = markdownTable(header, runs.map(pairedRow))
  const summary = sides.map((side) => {
    const ratios = runs.filter((run) => run.side === side.name).map(pairedRatio)
    return `- ${side.name} (${side.root}), ${ratios.length} runs: ${small} CPU ÷ ${large} CPU per request, median (range) ${spread(ratios, 3)}`
  })
  return `\n${lines.join('\n')}\n\n${summary.join('\n')}\n`
}

function sizeNames(): string[] {
  return sizes.map((n) => (n % 1000 === 0 ? `${n / 1000}k` : String(n)))
}

function spread(list: number[], digits: number): string {
  return `${evenMedian(list).toFixed(digits)} (${Math.min(...list).toFixed(digits)}-${Math.max(...list).toFixed(digits)})`
}

/** The checkout's short commit id (with `+` when its tracked files differ), else its folder name. */
function label(root: string): string {
  try {
    const git = (args: string[]) =>
      execFileSync('git', ['-C', root, ...args], { encoding: 'utf8', stdio: 'pipe' }).trim()
    const dirty = git(['status', '--short', '--untracked-files=no']) !== ''
    return `${git(['rev-parse', '--short', 'HEAD'])}${dirty ? '+' : ''}`
  } catch {
    return basename(root)
  }
}

/** One bench/perf.ts run in `root` (its own node_modules and code); its JSON. */
async function runPerf(root: string, prefix: string): Promise<PerfJson> {
  const json = `${prefix}.json`
  const log = `${prefix}.log`
  const args = ['--expose-gc', '--import', 'tsx', 'bench/perf.ts', '--sizes', sizes.join(',')]
  args.push('--ceiling', '--data', data, '--duration', String(duration), '--json', json)
  const status = await new Promise<number | null>((done, fail) => {
    const out = createWriteStream(log)
    const child = spawn(process.execPath, args, { cwd: root, stdio: ['ignore', 'pipe', 'pipe'] })
    child.stdout.pipe(out, { end: false })
    child.stderr.pipe(out, { end: false })
    child.once('error', fail)
    child.once('close', (code) => out.end(() => done(code)))
  })
  if (status !== 0) throw new Error(`bench/perf.ts in ${root} exited with ${status}; log: ${log}`)
  return JSON.parse(await readFile(json, 'utf8')) as PerfJson
}

function ratio(run: Run): number {
  return run.perf.rows[1].httpReqPerS / run.perf.rows[0].httpReqPerS
}

function row(run: Run): string[] {
  const [small, large] = run.perf.rows
  const ceiling = run.perf.ceiling?.httpReqPerS ?? NaN
  return [
    run.side,
    String(run.turn),
    small.httpReqPerS.toFixed(0),
    large.httpReqPerS.toFixed(0),
    ratio(run).toFixed(3),
    ceiling.toFixed(0),
    (small.httpReqPerS / ceiling).toFixed(3),
    `${small.selectP50Ms.toFixed(3)} / ${large.selectP50Ms.toFixed(3)}`,
    run.load1.toFixed(2),
  ]
}

function table(runs: Run[]): string {
  const [small, large] = sizeNames()
  const header = ['code', 'turn', `${small} req/s`, `${large} req/s`, `${large} ÷ ${small}`]
  header.push(
    'ceiling (bare hono)',
    'toolsel ÷ ceiling',
    `selectTools p50 ${small} / ${large} (ms)`,
  )
  header.push('load (1 min)')
  const lines = markdownTable(header, runs.map(row))
  const summary = sides.map((side) => {
    const mine = runs.filter((run) => run.side === side.name)
    const perSecond = (at: number) =>
      spread(
        mine.map((run) => run.perf.rows[at].httpReqPerS),
        0,
      )
    return (
      `- ${side.name} (${side.root}), ${mine.length} runs: median (range) ${small} ` +
      `${perSecond(0)} req/s, ${large} ${perSecond(1)} req/s, ${large} ÷ ${small} ` +
      spread(mine.map(ratio), 3)
    )
  })
  return `\n${lines.join('\n')}\n\n${summary.join('\n')}\n`
}
