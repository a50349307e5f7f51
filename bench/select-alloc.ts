/**
 * Bytes allocated per `selectTools` call, two checkouts side by side in one process (not a test):
 * loads one saved index with `--before DIR`'s modules and with this checkout's (as
 * `select-ab.ts`), checks that both answer every benchmark instruction the same, warms both up
 * (two passes), then runs V8's sampling heap profiler (objects collected by minor and major GCs
 * included, so it counts what a call allocates, not what survives) over `--passes` passes of the
 * 535 benchmark instructions on each side in turn and prints bytes per call and the functions
 * that allocate the most (their own allocations; `--top N`). A `.ts` checkout runs through tsx,
 * so the sites are functions, not lines.
 *
 *   node --import tsx bench/select-alloc.ts --before /work/ci-base --index-dir DIR [--passes 2] [--top 12]
 *
 * DIR: a saved index, e.g. bench/perf.ts's `--out` (`perf-10000` under it).
 * @module
 */
import { Session } from 'node:inspector/promises'
import { loadavg } from 'node:os'
import { resolve } from 'node:path'
import { benchArgs, usageError } from './bench-args.ts'

const { values } = benchArgs(import.meta.url, {
  options: {
    before: { type: 'string' },
    'index-dir': { type: 'string' },
    passes: { type: 'string', default: '2' },
    top: { type: 'string', default: '12' },
    data: { type: 'string', default: '../shared/data' },
  },
})
// What it measures only once the flags are good: --help and a bad flag answer without it.
const { loadCheckoutDefault } = await import('./perf/checkout-default.ts')
const { loadBenchmarkQueries } = await import('./perf/synthetic-library.ts')
if (values.before === undefined || values['index-dir'] === undefined) {
  usageError(
    import.meta.url,
    '--before DIR (a checkout) and --index-dir DIR (a saved index) are required.',
  )
}
const passes = Number(values.passes)
const top = Number(values.top)
if (!Number.isInteger(passes) || passes < 1 || !Number.isInteger(top) || top < 0)
  usageError(import.meta.url, '--passes takes a positive whole number, --top a whole number.')
const indexDir = resolve(values['index-dir'])

interface SamplingNode {
  callFrame: { functionName: string; url: string }
  selfSize: number
  children: SamplingNode[]
}

const instructions = await loadBenchmarkQueries(values.data)
const sides = [
  { name: 'before', checkout: await loadCheckoutDefault(values.before, indexDir) },
  { name: 'after', checkout: await loadCheckoutDefault('.', indexDir) },
]
for (const instruction of instructions) {
  const [a, b] = await Promise.all(
    sides.map(async (side) => side.checkout.select(instruction, true)),
  )
  if (JSON.stringify(a.steps) !== JSON.stringify(b.steps)) {
    throw new Error(`The two versions answer differently: ${instruction}`)
  }
}
for (let pass = 0; pass < 2; pass += 1) {
  for (const side of sides)
    for (const instruction of instructions) await side.checkout.select(instruction)
}
const session = new Session()
session.connect()
await session.post('HeapProfiler.enable')
console.log(
  `${indexDir}: same answers to ${instructions.length} instructions; load average ${loadavg().map((x) => x.toFixed(1))}`,
)
for (const side of sides) {
  await session.post('HeapProfiler.startSampling', {
    samplingInterval: 512,
    includeObjectsCollectedByMajorGC: true,
    includeObjectsCollectedByMinorGC: true,
  })
  for (let pass = 0; pass < passes; pass += 1) {
    for (const instruction of instructions) await side.checkout.select(instruction)
  }
  const { profile } = (await session.post('HeapProfiler.stopSampling')) as unknown as {
    profile: { head: SamplingNode }
  }
  const calls = passes * instructions.length
  const bySite = new Map<string, number>()
  let total = 0
  const walk = (node: SamplingNode) => {
    if (node.selfSize > 0) {
      const { functionName, url } = node.callFrame
      const site = `${functionName || '(anonymous)'} ${url.split('/').slice(-1)[0]}`
      bySite.set(site, (bySite.get(site) ?? 0) + node.selfSize)
      total += node.selfSize
    }
    for (const child of node.children) walk(child)
  }
  walk(profile.head)
  console.log(
    `${side.name}: ${Math.round(total / calls).toLocaleString('en')} bytes per selectTools call (${calls} calls)`,
  )
  for (const [site, bytes] of [...bySite].sort((a, b) => b[1] - a[1]).slice(0, top)) {
    console.log(
      `  ${Math.round(bytes / calls)
        .toLocaleString('en')
        .padStart(8)}  ${site}`,
    )
  }
}
