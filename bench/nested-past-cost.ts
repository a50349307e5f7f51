/**
 * What the depth check of every /mcp body and `mcp --stdio` line costs (src/mcp/jsonrpc-answers.ts
 * `nestedPast`, MAX_MESSAGE_DEPTH), next to the JSON.parse it follows: medians of `--turns` warm
 * runs over messages of `--values` values in three shapes (numbers; arrays 200 deep; small
 * objects). Round 37's first walk (07348c2) pushed an entry for every value, numbers too: several
 * times the parse (~6x at 99,000 numbers, 1.2 s for an 8 MiB stdio line); c3eb4dd keeps only
 * arrays and objects on its stack. `--before` runs another checkout's check beside this one's.
 *
 *   node --import tsx bench/nested-past-cost.ts [--values 1000000] [--turns 5] [--before /work/ci-base]
 * @module
 */
import { existsSync } from 'node:fs'
import { join } from 'node:path'
import { fileURLToPath, pathToFileURL } from 'node:url'
import { benchArgs } from './bench-args.ts'
import { loadAverage } from './lib/measure.ts'

const { values: args } = benchArgs(import.meta.url, {
  options: {
    values: { type: 'string', default: '1000000' },
    turns: { type: 'string', default: '5' },
    before: { type: 'string' },
  },
})
const count = Number(args.values)
const turns = Number(args.turns)
if (!Number.isInteger(count) || count < 400) throw new Error('--values takes an integer >= 400')
if (!Number.isInteger(turns) || turns < 1) throw new Error('--turns takes a positive integer')

type Check = (value: unknown, limit: number) => boolean
const checkOf = async (root: string): Promise<Check | undefined> => {
  const path = join(root, 'src/mcp/jsonrpc-answers.ts')
  if (!existsSync(path)) return undefined
  return ((await import(pathToFileURL(path).href)) as { nestedPast?: Check }).nestedPast
}
const checks: Array<{ name: string; check: Check }> = [
  { name: 'this checkout', check: (await checkOf(fileURLToPath(new URL('..', import.meta.url))))! },
]
if (args.before !== undefined) {
  const before = await checkOf(args.before)
  if (before === undefined) console.log(`${args.before} has no nestedPast: left out`)
  else checks.push({ name: 'before', check: before })
}

/** The median of `turns` timings of `run`, in ms, after one run to warm it. */
function medianMs(run: () => unknown): number {
  run()
  const times = Array.from({ length: turns }, () => {
    const started = performance.now()
    run()
    return performance.now() - started
  })
  return times.sort((a, b) => a - b)[times.length >> 1]
}

const shapes: Record<string, string> = {
  numbers: `[${'0,'.repeat(count - 1)}0]`,
  'arrays 200 deep': `[${Array.from(
    { length: Math.floor(count / 200) },
    () => `${'['.repeat(199)}0${']'.repeat(199)}`,
  ).join(',')}]`,
  'small objects': `[${'{"a":0},'.repeat(Math.floor(count / 2) - 1)}{"a":0}]`,
}
console.log(`nestedPast vs JSON.parse, ${count} values, median of ${turns}, load ${loadAverage()}`)
console.log(
  `| message | KiB | JSON.parse ms | ${checks.map(({ name }) => `check ms (${name})`).join(' | ')} |`,
)
console.log(`|---|---:|---:|${checks.map(() => '---:').join('|')}|`)
for (const [name, body] of Object.entries(shapes)) {
  const text = `{"jsonrpc":"2.0","id":1,"method":"ping","params":{"x":${body}}}`
  const value = JSON.parse(text) as unknown
  const cells = checks.map(({ check }) => medianMs(() => check(value, 256)).toFixed(1))
  console.log(
    `| ${name} | ${Math.round(text.length / 1024)} | ${medianMs(() => JSON.parse(text)).toFixed(1)} | ${cells.join(' | ')} |`,
  )
}
