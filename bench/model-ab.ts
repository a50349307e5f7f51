/**
 * Two learned models side by side in one process (not a test), call by call: builds one library
 * as bench/select-cpu.ts does (saved and reloaded, the way `toolsel serve` holds it), runs the
 * 535 benchmark instructions through `selectTools` with model A and with model B, each
 * instruction on both back to back (who goes first alternates), `--rounds` times after two
 * warm-up passes, and keeps each call's fastest time per model. The difference of the summed
 * fastest calls is what model B's selection costs more than A's on the same code and library
 * (e.g. a dense model's features), with the moments another process had the core left out; the
 * median over rounds of the per-round difference keeps them.
 *
 *   node --import tsx bench/model-ab.ts --b /tmp/ld.json [--a <model.json>] [--size 10000] [--rounds 9]
 *     [--checkout DIR]
 *
 * `--a` defaults to the shipped model. `--checkout`: run another checkout's code (with its
 * node_modules; e.g. main before a change), the library built by this one's bench helpers.
 * @module
 */
import { mkdtemp, rm } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { join, resolve } from 'node:path'
import { benchArgs, usageError, wholeNumber } from './bench-args.ts'
import { loadAverage, median } from './lib/measure.ts'

const { values } = benchArgs(import.meta.url, {
  options: {
    a: { type: 'string' },
    b: { type: 'string' },
    size: { type: 'string', default: '10000' },
    rounds: { type: 'string', default: '9' },
    data: { type: 'string', default: process.env.TOOLSEL_DATA_DIR ?? '../shared/data' },
    checkout: { type: 'string', default: '.' },
  },
})
// What it measures only once the flags are good: --help and a bad flag answer without it.
const { savedBenchmarkLibrary } = await import('./perf/in-process.ts')
const source = resolve(values.checkout, 'src')
const { defaultConfig } = await import(`${source}/config/schema.ts`)
const { loadDefaultModel, readLearnedModelSync } = await import(`${source}/learn/learned-model.ts`)
const { selectTools } = await import(`${source}/pipeline.ts`)
const { RulePlanner } = await import(`${source}/plan/rule-planner.ts`)
const { LearnedSelector } = await import(`${source}/select/learned-selector.ts`)
const { loadIndexedLibrary } = await import(`${source}/store/index-store.ts`)
if (values.b === undefined) usageError(import.meta.url, '--b <model.json> is required.')
const size = wholeNumber(import.meta.url, '--size', values.size)
const rounds = wholeNumber(import.meta.url, '--rounds', values.rounds)
if (!Number.isInteger(size) || size < 1 || !Number.isInteger(rounds) || rounds < 1) {
  usageError(
    import.meta.url,
    '--size takes a positive number of tools, --rounds a positive whole number.',
  )
}

const work = await mkdtemp(join(tmpdir(), 'toolsel-model-ab-'))
try {
  const { dir, instructions } = await savedBenchmarkLibrary(values.data, size, work)
  const config = defaultConfig()
  const indexed = await loadIndexedLibrary(dir, config)
  const models = [
    values.a ? readLearnedModelSync(values.a) : loadDefaultModel(),
    readLearnedModelSync(values.b),
  ]
  const sides = models.map((model) => ({
    library: indexed.library,
    planner: new RulePlanner(),
    retriever: indexed.retrievers.get('bm25')!,
    selector: new LearnedSelector(model),
    k: config.retrieve.k,
  }))
  for (const side of sides) await side.selector.prepare()
  for (let pass = 0; pass < 2; pass += 1) {
    for (const side of sides)
      for (const instruction of instructions) await selectTools(instruction, side)
  }
  const fastest = sides.map(() => new Array<number>(instructions.length).fill(Infinity))
  const differences: number[] = []
  for (let round = 0; round < rounds; round += 1) {
    const sum = [0, 0]
    for (let at = 0; at < instructions.length; at += 1) {
      for (const side of (round + at) % 2 === 0 ? [0, 1] : [1, 0]) {
        const started = performance.now()
        await selectTools(instructions[at], sides[side])
        const elapsed = performance.now() - started
        sum[side] += elapsed
        if (elapsed < fastest[side][at]) fastest[side][at] = elapsed
      }
    }
    differences.push(((sum[1] - sum[0]) / instructions.length) * 1000)
  }
  const perCall = (times: number[]) =>
    (times.reduce((total, time) => total + time, 0) / instructions.length) * 1000
  const [a, b] = fastest.map(perCall)
  console.log(
    `${size} tools, ${instructions.length} instructions; selectTools µs per call, each call's ` +
      `fastest of ${rounds}: A ${a.toFixed(0)}, B ${b.toFixed(0)}, B − A ${(b - a).toFixed(0)}; ` +
      `per-round B − A median ${median(differences).toFixed(0)} (${differences.map((d) => d.toFixed(0)).join(' ')}); ` +
      `load average ${loadAverage(1)}`,
  )
} finally {
  await rm(work, { recursive: true, force: true })
}
