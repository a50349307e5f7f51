/**
 * CPU per `selectTools` call on a library loaded from its saved index, the way `toolsel serve`
 * holds it (tools kept as one buffer, parsed on demand): builds the library as bench/perf.ts
 * does, saves and reloads it, then runs the 535 benchmark instructions `--passes` times after
 * one warm-up pass. Prints CPU per call (process CPU time, which a busy machine inflates less
 * than wall time), wall p50/p99, and a digest of every step, candidate, score and feature
 * (`explain`), so two versions of the code can be checked for identical answers.
 *
 *   node --import tsx bench/select-cpu.ts [--size 10000] [--passes 3] [--selector learned|top1]
 *     [--model <learned model.json>]   (default: the shipped model) [--by-pass]
 *
 * `--by-pass` also prints the CPU per call of each pass from the process's first call: the
 * warm-up pass (with `explain`, for the digest) first, then each measured one (how many passes
 * the selection takes to settle; bench/warm-up-curve.ts shows the served request's).
 * @module
 */
import { createHash } from 'node:crypto'
import { mkdtemp, readFile, rm } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { benchArgs, usageError } from './bench-args.ts'

const { values } = benchArgs(import.meta.url, {
  options: {
    size: { type: 'string', default: '10000' },
    passes: { type: 'string', default: '3' },
    selector: { type: 'string', default: 'learned' },
    model: { type: 'string' },
    data: { type: 'string', default: process.env.TOOLSEL_DATA_DIR ?? '../shared/data' },
    'by-pass': { type: 'boolean', default: false },
  },
})
const size = Number(values.size)
const passes = Number(values.passes)
if (!Number.isInteger(size) || size < 1 || !Number.isInteger(passes) || passes < 1) {
  usageError(
    import.meta.url,
    '--size takes a positive number of tools, --passes a positive whole number.',
  )
}
if (values.selector !== 'learned' && values.selector !== 'top1') {
  usageError(import.meta.url, `--selector "${values.selector}": use learned or top1.`)
}
// The selection code only once the flags are good: --help and a bad flag answer without it.
const { loadDefaultModel, readLearnedModelSync } = await import('../src/learn/learned-model.ts')
const { selectTools } = await import('../src/pipeline.ts')
const { LearnedSelector } = await import('../src/select/learned-selector.ts')
const { Top1Selector } = await import('../src/select/top1-selector.ts')
const { savedBenchmarkSelection } = await import('./perf/in-process.ts')
const { summarize } = await import('./lib/measure.ts')

const work = await mkdtemp(join(tmpdir(), 'toolsel-select-cpu-'))
try {
  const { instructions, options } = await savedBenchmarkSelection(
    values.data,
    size,
    work,
    values.selector === 'top1'
      ? new Top1Selector()
      : new LearnedSelector(values.model ? readLearnedModelSync(values.model) : loadDefaultModel()),
  )
  // CPU ms per call since `from` (a process.cpuUsage() reading), for `calls` calls.
  const cpuPerCall = (from: NodeJS.CpuUsage, calls: number) => {
    const used = process.cpuUsage(from)
    return (used.user + used.system) / 1000 / calls
  }
  const digest = createHash('sha256')
  const byPass: number[] = []
  let passFrom = process.cpuUsage()
  for (const instruction of instructions) {
    const result = await selectTools(instruction, { ...options, explain: true })
    digest.update(`${JSON.stringify(result.steps)}\n`)
  }
  byPass.push(cpuPerCall(passFrom, instructions.length))
  const samples: number[] = []
  const cpuBefore = process.cpuUsage()
  for (let pass = 0; pass < passes; pass += 1) {
    passFrom = process.cpuUsage()
    for (const instruction of instructions) {
      const started = performance.now()
      await selectTools(instruction, options)
      samples.push(performance.now() - started)
    }
    byPass.push(cpuPerCall(passFrom, instructions.length))
  }
  const cpu = process.cpuUsage(cpuBefore)
  const wall = summarize(samples)
  const load = (await readFile('/proc/loadavg', 'utf8')).split(' ').slice(0, 3).join(' ')
  process.stdout.write(
    `${size} tools, selector ${values.selector}, ${samples.length} calls: ` +
      `CPU ${((cpu.user + cpu.system) / 1000 / samples.length).toFixed(3)} ms per call, ` +
      `wall p50 ${wall.p50.toFixed(3)} / p99 ${wall.p99.toFixed(3)} ms; ` +
      `answers digest ${digest.digest('hex').slice(0, 16)}; load average ${load}\n`,
  )
  if (values['by-pass']) {
    const [first, ...measured] = byPass.map((ms) => ms.toFixed(3))
    process.stdout.write(
      `CPU ms per call by pass: ${first} (warm-up, explain), ${measured.join(', ')}\n`,
    )
  }
} finally {
  await rm(work, { recursive: true, force: true })
}
