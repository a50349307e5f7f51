/**
 * What a saved index's load costs in two versions (not a test): `loadIndexedLibrary` of each
 * `--index DIR` (a saved library's directory, `<indexDir>/<name>`) from this checkout and from
 * `--before DIR` (another checkout, e.g. `git worktree add /tmp/before <commit>`; its src/ is
 * imported through tsx, nothing built), in one process, alternately, `--turns` times after one
 * warm-up load each. Prints per index the medians of wall and CPU milliseconds (user + system of
 * the process) and the after ÷ before ratio of the medians: on a shared machine only loads taken
 * side by side compare.
 *
 *   node --import tsx bench/index-load-ab.ts --before /work/ci-base --index /tmp/idx/demo
 *     [--index /tmp/p100k/perf-100000] [--turns 9]
 * @module
 */
import { join, resolve } from 'node:path'
import { benchArgs, usageError, wholeNumber } from './bench-args.ts'
import { loadAverage, median } from './lib/measure.ts'

const { values } = benchArgs(import.meta.url, {
  options: {
    before: { type: 'string' },
    index: { type: 'string', multiple: true },
    turns: { type: 'string', default: '9' },
  },
})
if (values.before === undefined)
  usageError(import.meta.url, '--before DIR: the checkout to compare with.')
if (values.index === undefined || values.index.length === 0)
  usageError(import.meta.url, '--index DIR: a saved library directory (more than one allowed).')
const turns = wholeNumber(import.meta.url, '--turns', values.turns)

type Load = (dir: string, config: unknown) => Promise<{ library: { size: number } }>
/** `loadIndexedLibrary` and the default config of the checkout at `root`. */
async function version(root: string): Promise<{ load: Load; config: unknown }> {
  const lifecycle = await import(join(resolve(root), 'src/store/library-lifecycle.ts'))
  const schema = await import(join(resolve(root), 'src/config/schema.ts'))
  return { load: lifecycle.loadIndexedLibrary as Load, config: schema.defaultConfig() }
}
const sides = {
  before: await version(values.before!),
  after: await version('.'),
}

/** One load: wall and CPU milliseconds, and the tools loaded. */
async function timed(side: keyof typeof sides, dir: string) {
  const cpu = process.cpuUsage()
  const start = performance.now()
  const loaded = await sides[side].load(dir, sides[side].config)
  const wall = performance.now() - start
  const used = process.cpuUsage(cpu)
  return { wall, cpu: (used.user + used.system) / 1000, tools: loaded.library.size }
}

console.log(`load average ${loadAverage(1)}, ${turns} turns`)
console.log(
  '| index | tools | before wall ms | after wall ms | ratio | before CPU ms | after CPU ms | ratio |',
)
console.log('|---|---:|---:|---:|---:|---:|---:|---:|')
for (const dir of values.index!) {
  await timed('before', dir)
  await timed('after', dir)
  type Run = { wall: number; cpu: number }
  const runs: Record<keyof typeof sides, Run[]> = { before: [], after: [] }
  let tools = 0
  for (let turn = 0; turn < turns; turn++) {
    // Alternating which goes first, so neither always follows the other's garbage.
    const order: (keyof typeof sides)[] = turn % 2 === 0 ? ['before', 'after'] : ['after', 'before']
    for (const side of order) {
      const run = await timed(side, dir)
      runs[side].push(run)
      tools = run.tools
    }
  }
  const wall = (side: keyof typeof sides) => median(runs[side].map((run) => run.wall))
  const cpu = (side: keyof typeof sides) => median(runs[side].map((run) => run.cpu))
  console.log(
    `| ${dir} | ${tools} | ${wall('before').toFixed(1)} | ${wall('after').toFixed(1)} | ${(wall('after') / wall('before')).toFixed(2)} | ${cpu('before').toFixed(1)} | ${cpu('after').toFixed(1)} | ${(cpu('after') / cpu('before')).toFixed(2)} |`,
  )
}
console.log(`load average ${loadAverage(1)}`)
