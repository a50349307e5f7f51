/**
 * What one CLI start costs (round 47: command modules loaded only for the command that runs):
 * CPU seconds and wall seconds of `node bin/toolsel.mjs` for `--help`, `index --help`,
 * `select` on the demo library (with the user cache of the runs, and with an empty one: round 48
 * caches the demo's index there) and `serve` (demo) until `/readyz` answers, in this checkout and
 * in `--before <checkout>` (a built clone of an earlier commit), in alternating turns.
 *
 *   node --import tsx bench/cli-start.ts --before /work/ci-base --turns 11
 *
 * Both checkouts need a fresh `dist/` (`npm run build`): bin/toolsel.mjs runs the sources
 * through tsx otherwise, and the figures would be tsx's. A command's CPU is its process's and
 * its children's (`/proc/<sh>/stat`'s cutime + cstime after the shell waited for it; 10 ms
 * ticks); `serve`'s is read from `/proc/<pid>/stat` when `/readyz` first answers.
 * @module
 */
import { spawn, spawnSync } from 'node:child_process'
import { mkdtempSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join, resolve } from 'node:path'
import { benchArgs, usageError, wholeNumber } from './bench-args.ts'
import { cpuSeconds, loadAverage, median } from './lib/measure.ts'

const { values } = benchArgs(import.meta.url, {
  options: { before: { type: 'string' }, turns: { type: 'string', default: '11' } },
})
if (values.before === undefined) usageError(import.meta.url, '--before <checkout> is required.')
const turns = wholeNumber(import.meta.url, '--turns', values.turns, 1, 1000)
const { freePort, waitUntilReady } = await import('./perf/http-load.ts')
const checkouts = { before: resolve(values.before), after: resolve('.') }

const TICKS_PER_SECOND = 100
/**
 * The user cache directory of the runs (XDG_CACHE_HOME: `select` keeps the demo's index there
 * since round 48), the bench's own, so that no index another toolsel cached is read.
 */
const cacheHome = mkdtempSync(join(tmpdir(), 'cli-start-cache-'))
process.on('exit', () => rmSync(cacheHome, { recursive: true, force: true }))

/** A short-lived command: its exit code, wall and CPU seconds (the shell's reaped children). */
function runOnce(checkout: string, args: readonly string[], cache = cacheHome) {
  const script = '"$@" >/dev/null 2>&1; code=$?; echo "$code"; cat /proc/$$/stat'
  const node = [process.execPath, join(checkout, 'bin/toolsel.mjs'), ...args]
  const env = { ...process.env, XDG_CACHE_HOME: cache }
  const started = performance.now()
  const shell = spawnSync('sh', ['-c', script, 'sh', ...node], { encoding: 'utf8', env })
  const wall = (performance.now() - started) / 1000
  const [code, stat] = shell.stdout.split('\n')
  const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ')
  // cutime, cstime: the 16th and 17th fields, 13 and 14 after the name's.
  const cpu = (Number(fields[13]) + Number(fields[14])) / TICKS_PER_SECOND
  return { code: Number(code), wall, cpu }
}

/** `serve` with the demo library until `/readyz` answers: wall and the server's CPU seconds. */
async function serveOnce(checkout: string) {
  const port = await freePort()
  const args = [join(checkout, 'bin/toolsel.mjs'), 'serve', '--host', '127.0.0.1']
  args.push('--port', String(port), '--log-level', 'error')
  const started = performance.now()
  const server = spawn(process.execPath, args, { stdio: 'ignore' })
  const exited = new Promise((done) => server.once('exit', done))
  try {
    await waitUntilReady(`http://127.0.0.1:${port}`, server, 120_000, 20)
    const wall = (performance.now() - started) / 1000
    return { code: 0, wall, cpu: await cpuSeconds(server.pid!) }
  } finally {
    server.kill('SIGTERM')
    await exited
  }
}

const CASES: Record<string, (checkout: string) => ReturnType<typeof serveOnce>> = {
  '--help': async (checkout) => runOnce(checkout, ['--help']),
  'index --help': async (checkout) => runOnce(checkout, ['index', '--help']),
  'select (demo)': async (checkout) => runOnce(checkout, ['select', 'book a flight to Paris']),
  // The first run after a change of the code or of the demo: an empty cache (built and saved).
  'select (demo), empty cache': async (checkout) => {
    const empty = mkdtempSync(join(tmpdir(), 'cli-start-empty-'))
    try {
      return runOnce(checkout, ['select', 'book a flight to Paris'], empty)
    } finally {
      rmSync(empty, { recursive: true, force: true })
    }
  },
  'serve to ready': serveOnce,
}

const loadAtStart = loadAverage()
const samples: Record<string, Record<'before' | 'after', { wall: number[]; cpu: number[] }>> = {}
for (const name of Object.keys(CASES))
  samples[name] = { before: { wall: [], cpu: [] }, after: { wall: [], cpu: [] } }
for (let turn = 0; turn < turns; turn++) {
  // Alternating which goes first, so that neither always runs on a warmer cache.
  const order = turn % 2 === 0 ? (['before', 'after'] as const) : (['after', 'before'] as const)
  for (const [name, run] of Object.entries(CASES))
    for (const side of order) {
      const { code, wall, cpu } = await run(checkouts[side])
      if (code !== 0) throw new Error(`${name} in ${checkouts[side]} exited with ${code}`)
      samples[name][side].wall.push(wall)
      samples[name][side].cpu.push(cpu)
    }
}

console.log(`before: ${checkouts.before}, after: ${checkouts.after}, ${turns} turns each`)
console.log(`load average at start ${loadAtStart}, at end ${loadAverage()}`)
console.log(
  '| start | CPU s before | CPU s after | CPU ratio | wall s before | wall s after | wall ratio |',
)
console.log('|---|---:|---:|---:|---:|---:|---:|')
for (const [name, { before, after }] of Object.entries(samples)) {
  const [cpuBefore, cpuAfter] = [median(before.cpu), median(after.cpu)]
  const [wallBefore, wallAfter] = [median(before.wall), median(after.wall)]
  const row = [cpuBefore, cpuAfter, cpuAfter / cpuBefore, wallBefore, wallAfter]
  row.push(wallAfter / wallBefore)
  console.log(`| ${name} | ${row.map((value) => value.toFixed(2)).join(' | ')} |`)
}
