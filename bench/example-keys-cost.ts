/**
 * What `ExampleSet.withEach` holds the event loop for in one piece when a write repeats a set's
 * long examples (bench/README "Round 50: long example keys as digests (ex54)"): a set of `--examples` (2,000)
 * examples of `--chars` (8,000) characters, then the same examples written again, parsed afresh
 * and normalised in slices first (`normalizeEach`, as the examples route does): every one a
 * duplicate, and `withEach` then does nothing but look its keys up. Also a write of as many new
 * examples. Each side (this checkout's `src/`, and `--before DIR`'s) in a fresh process per
 * round, sides alternating; prints the median milliseconds of each step.
 *
 *   node --import tsx bench/example-keys-cost.ts [--before /work/ci-base] [--examples 2000]
 *     [--chars 8000] [--rounds 5]
 * @module
 */
import { join } from 'node:path'
import { pathToFileURL } from 'node:url'
import { benchArgs, wholeNumber } from './bench-args.ts'
import {
  checkoutSides,
  loadAverage,
  markdownTable,
  median,
  runSidesInChildren,
} from './lib/measure.ts'

const { values } = benchArgs(import.meta.url, {
  options: {
    before: { type: 'string' },
    examples: { type: 'string', default: '2000' },
    chars: { type: 'string', default: '8000' },
    rounds: { type: 'string', default: '5' },
    side: { type: 'string' },
  },
})
const count = wholeNumber(import.meta.url, '--examples', values.examples)
const chars = wholeNumber(import.meta.url, '--chars', values.chars)
const rounds = wholeNumber(import.meta.url, '--rounds', values.rounds)
const steps = ['of', 'normalizeEach', 'withEach (duplicates)', 'withEach (new)'] as const

if (values.side !== undefined) {
  // One side, in this process: prints its milliseconds per step as one JSON line.
  const { ExampleSet, normalizeEach } = (await import(
    pathToFileURL(join(values.side, 'src/examples/example-set.ts')).href
  )) as typeof import('../src/examples/example-set.ts')
  const { runStepsSliced } = (await import(
    pathToFileURL(join(values.side, 'src/time-slicer.ts')).href
  )) as typeof import('../src/time-slicer.ts')
  const words = (seed: number) => {
    const out: string[] = []
    let length = 0
    for (let word = 0; length < chars; word += 1) {
      const next = `w${((seed * 7919 + word * 104_729) % 1_000_003).toString(36)}`
      out.push(next)
      length += next.length + 1
    }
    return out.join(' ').slice(0, chars)
  }
  const make = (from: number) =>
    JSON.stringify(
      Array.from({ length: count }, (_, at) => ({
        instruction: words(from + at),
        tools: [`tool-${(from + at) % 97}`, `tool-${(from + at) % 89}`],
      })),
    )
  const body = make(0)
  const fresh = make(count)
  const ms: Record<string, number> = {}
  const time = async <T>(step: string, work: () => T | Promise<T>): Promise<T> => {
    const start = performance.now()
    const result = await work()
    ms[step] = performance.now() - start
    return result
  }
  const set = await time('of', () => ExampleSet.ofSliced(JSON.parse(body)))
  set.with([]) // keys the set (once per set, either side)
  const again = await time('normalizeEach', () => runStepsSliced(normalizeEach(JSON.parse(body))))
  const duplicate = time('withEach (duplicates)', () => set.withEach([again], { normalized: true }))
  const { changes } = await duplicate
  if (changes[0].duplicates !== count) throw new Error(`expected ${count} duplicates`)
  const added = await runStepsSliced(normalizeEach(JSON.parse(fresh)))
  await time('withEach (new)', () => set.withEach([added], { normalized: true }))
  console.log(JSON.stringify(ms))
} else {
  const sides = checkoutSides(import.meta.url, values.before)
  const loads = [loadAverage(1)]
  const times = await runSidesInChildren<Record<string, number>>(import.meta.url, sides, rounds, [
    '--examples',
    `${count}`,
    '--chars',
    `${chars}`,
  ])
  loads.push(loadAverage(1))
  console.log(
    `${count} examples of ${chars} characters, ${rounds} rounds (a fresh process each), load ${loads.join(' -> ')}`,
  )
  const rows = sides.map(([name]) => [
    name,
    ...steps.map((step) => {
      const each = times.get(name)!.map((row) => row[step])
      return `${median(each).toFixed(0)} (${each.map((v) => v.toFixed(0)).join(', ')})`
    }),
  ])
  if (sides.length === 2)
    rows.push([
      'ratio this / before',
      ...steps.map((step) => {
        const of = (name: string) => median(times.get(name)!.map((row) => row[step]))
        return (of(sides[0][0]) / of(sides[1][0])).toFixed(2)
      }),
    ])
  console.log(markdownTable(['side (ms, median (each))', ...steps], rows, '---').join('\n'))
}
