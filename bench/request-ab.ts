/**
 * Two versions of the server on one built library, measured in turns: builds the library as
 * bench/perf.ts does, starts `toolsel serve` from this checkout and from `--before DIR` (another
 * checkout, e.g. `git worktree add /tmp/before <commit>` with its dist built) on the same saved
 * index, then loads them alternately with wrk (16 connections, the benchmark instructions in
 * rotation, `includeSchemas: true`) for `--rounds` rounds of `--duration` seconds each, after a
 * warm-up of both together until steady (WARM_UP_PASSES passes of the instructions, then two
 * successive 2 s runs' CPU per request within 10%, as bench:perf --repeats). Prints each server's
 * req/s and CPU per request (from /proc) per round and the medians: on a shared machine the load
 * moves between rounds, so only turns taken side by side compare.
 *
 *   node --import tsx bench/request-ab.ts --before DIR [--size 10000] [--rounds 5] [--duration 5]
 *     [--together] [--after-workers N] [--after-node-args "--flag …"]
 *
 * `--together` loads both servers at the same time instead (one wrk each, 16 connections), so
 * both run under the same load from other processes, and compares their CPU per request round by
 * round (the median of the after ÷ before ratios). On a machine shared with other work this pairs
 * far better than turns taken seconds apart; throughput is then shared between the two and says
 * little by itself. `--after-workers N` serves the after side with `toolsel serve --workers N`
 * (`--before .` compares one checkout with itself); CPU is summed over a server's processes.
 * `--after-node-args` starts the after side's node with those flags (e.g. a V8 heap setting);
 * `--after-env "NAME=value …"` gives its process more environment. `--index-dir DIR` serves a
 * saved library (`bench/perf.ts --child N --out OUT` leaves one in OUT/perf-N, with the
 * instructions in OUT/instructions.json) instead of building one of `--size` tools.
 * @module
 */
import type { ChildProcess } from 'node:child_process'
import { mkdir, mkdtemp, readFile, rm } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { basename, dirname, join, resolve } from 'node:path'
import { benchArgs, usageError, wholeNumber } from './bench-args.ts'
import { loadAverage, median } from './lib/measure.ts'
import type { ServeProcess } from './perf/serve-process.ts'

const { values } = benchArgs(import.meta.url, {
  options: {
    before: { type: 'string' },
    size: { type: 'string', default: '10000' },
    rounds: { type: 'string', default: '5' },
    duration: { type: 'string', default: '5' },
    together: { type: 'boolean', default: false },
    'after-workers': { type: 'string' },
    'after-node-args': { type: 'string' },
    'after-env': { type: 'string' },
    'index-dir': { type: 'string' },
    data: { type: 'string', default: process.env.TOOLSEL_DATA_DIR ?? '../shared/data' },
  },
})
// What it measures only once the flags are good: --help and a bad flag answer without it.
const { buildSelectLoad, cpuMillis, startServe } = await import('./perf/serve-process.ts')
const { runWrk, WARM_UP_PASSES, warmUpUntilSteady } = await import('./perf/wrk-load.ts')
if (values.before === undefined)
  usageError(import.meta.url, '--before DIR: the checkout to compare with.')
const size = wholeNumber(import.meta.url, '--size', values.size)
const rounds = wholeNumber(import.meta.url, '--rounds', values.rounds)
const seconds = Number(values.duration)
if (!(seconds > 0)) usageError(import.meta.url, '--duration takes seconds (> 0).')

const work = await mkdtemp(join(tmpdir(), 'toolsel-ab-'))
const servers: ChildProcess[] = []
try {
  const built =
    values['index-dir'] === undefined
      ? await buildSelectLoad(values.data, size, work)
      : await savedSelectLoad(resolve(values['index-dir']))
  const bodies = built.bodies
  const indexDir = values['index-dir'] === undefined ? work : dirname(resolve(values['index-dir']))
  const afterEnv = Object.fromEntries(
    (values['after-env'] ?? '')
      .split(/\s+/)
      .filter((pair) => pair.includes('='))
      .map((pair) => [pair.slice(0, pair.indexOf('=')), pair.slice(pair.indexOf('=') + 1)]),
  )
  const sides = [
    { name: 'before', root: resolve(values.before) },
    { name: 'after', root: process.cwd() },
  ]
  interface Running extends ServeProcess {
    name: string
    root: string
    reqPerS: number[]
    cpuMs: number[]
  }
  const running: Running[] = []
  for (const side of sides) {
    const workers = side.name === 'after' ? values['after-workers'] : undefined
    const nodeArgs = side.name === 'after' ? values['after-node-args']?.split(/\s+/) : undefined
    const env = {
      ...(side.name === 'after' && afterEnv),
      ...(workers !== undefined && { TOOLSEL_WORKERS: workers }),
    }
    const started = await startServe({
      root: side.root,
      indexDir,
      library: built.library,
      ...(nodeArgs !== undefined && { nodeArgs }),
      env,
    })
    servers.push(started.server)
    running.push({ ...side, ...started, reqPerS: [] as number[], cpuMs: [] as number[] })
  }
  // JIT and per-library caches: both sides loaded together in 2 s runs until each has been sent
  // WARM_UP_PASSES passes of the instructions and two successive runs' CPU per request agree
  // (warmUpUntilSteady, as bench:perf --repeats): a count of passes alone left servers on a loaded
  // machine getting faster over the measured rounds (bench/README.md, rounds 51-52).
  const warmUp = await warmUpUntilSteady(
    () =>
      Promise.all(
        running.map(async (side) => {
          const scriptDir = join(work, `warm-${side.name}`)
          await mkdir(scriptDir, { recursive: true })
          const cpuBefore = await cpuMillis(side.server.pid!)
          const { requests } = await runWrk({
            url: `${side.url}/v1/select-tools`,
            bodies,
            connections: 16,
            durationSeconds: 2,
            scriptDir,
            warmUp: false,
          })
          const cpuMs = (await cpuMillis(side.server.pid!)) - cpuBefore
          return { requests, cpuMsPerRequest: requests > 0 ? cpuMs / requests : Number.NaN }
        }),
      ),
    WARM_UP_PASSES * bodies.length,
  )
  process.stdout.write(
    `warm-up: ${warmUp.runs} runs of 2 s; ${running
      .map(
        (side, at) =>
          `${side.name} ${warmUp.sent[at]} requests, ${warmUp.steadyAtRun[at] === null ? 'NOT steady' : `steady at run ${warmUp.steadyAtRun[at]}`} (last CPU ms per request ${warmUp.cpuMsPerRequest[
            at
          ]
            .slice(-3)
            .map((ms) => ms.toFixed(2))
            .join(' ')})`,
      )
      .join('; ')}\n`,
  )
  /** Loads one side for `seconds`; records and describes its req/s and CPU per request. */
  const turn = async (side: Running, scriptDir: string): Promise<string> => {
    const cpuBefore = await cpuMillis(side.server.pid!)
    const result = await runWrk({
      url: `${side.url}/v1/select-tools`,
      bodies,
      connections: 16,
      durationSeconds: seconds,
      scriptDir,
      warmUp: false,
    })
    const cpu = (await cpuMillis(side.server.pid!)) - cpuBefore
    side.reqPerS.push(result.requestsPerSecond)
    side.cpuMs.push(cpu / result.requests)
    return (
      `${side.name}: ${result.requestsPerSecond.toFixed(0)} req/s, ` +
      `CPU ${(cpu / result.requests).toFixed(3)} ms per request (non-2xx ${result.non2xx})`
    )
  }
  const ratios: number[] = []
  for (let round = 0; values.together && round < rounds; round += 1) {
    const measured = await Promise.all(
      running.map(async (side) => {
        // One wrk script per side: both write theirs at the same moment.
        const scriptDir = join(work, side.name)
        await mkdir(scriptDir, { recursive: true })
        return turn(side, scriptDir)
      }),
    )
    const [before, after] = running
    ratios.push(after.cpuMs[round] / before.cpuMs[round])
    process.stdout.write(
      `round ${round + 1} together: ${measured.join('; ')}; after ÷ before CPU ${ratios[round].toFixed(3)}, load ${loadAverage()}\n`,
    )
  }
  for (let round = 0; !values.together && round < rounds; round += 1) {
    // Alternate who goes first, so a trend in the machine's load favours neither.
    const order = round % 2 === 0 ? running : [...running].reverse()
    for (const side of order) {
      const measured = await turn(side, work)
      process.stdout.write(`round ${round + 1} ${measured}, load ${loadAverage()}\n`)
    }
  }
  for (const side of running) {
    process.stdout.write(
      `${built.library}, ${side.name} (${side.root}): median ${median(side.reqPerS).toFixed(0)} req/s, ` +
        `CPU ${median(side.cpuMs).toFixed(3)} ms per request\n`,
    )
  }
  if (values.together) {
    process.stdout.write(
      `${built.library}, after ÷ before CPU per request, loaded together: median ${median(ratios).toFixed(3)} (rounds: ${ratios.map((ratio) => ratio.toFixed(3)).join(', ')})\n`,
    )
  }
} finally {
  for (const server of servers) server.kill('SIGTERM')
  await rm(work, { recursive: true, force: true })
}

/** A saved library's name and the request bodies of the instructions saved beside it. */
async function savedSelectLoad(dir: string): Promise<{ library: string; bodies: string[] }> {
  const instructions = JSON.parse(
    await readFile(join(dirname(dir), 'instructions.json'), 'utf8'),
  ) as string[]
  const bodies = instructions.map((instruction) =>
    JSON.stringify({ instruction, includeSchemas: true }),
  )
  return { library: basename(dir), bodies }
}
