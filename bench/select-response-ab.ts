/**
 * The select answer's JSON, in process: `selectResponseJson` (src/server/select-response.ts, what
 * `POST /v1/select-tools` writes) against `JSON.stringify` of the response object (what `c.json`
 * wrote before round 15). Builds the benchmark library as bench/perf.ts does, saves and reloads
 * it, answers the 535 benchmark instructions once with and once without `explain`, checks that
 * both ways give the same text for every answer with and without `includeSchemas`, then times
 * each answer's serialising (with schemas, as bench:perf asks) the two ways interleaved, keeping
 * each answer's fastest of `--passes`, and prints the mean of those and their ratio.
 *
 *   node --import tsx bench/select-response-ab.ts [--size 10000] [--passes 15]
 * @module
 */
import { mkdtemp, readFile, rm } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { benchArgs, usageError } from './bench-args.ts'
import type { SelectToolsResult } from '../src/pipeline.ts'

const { values } = benchArgs(import.meta.url, {
  options: {
    size: { type: 'string', default: '10000' },
    passes: { type: 'string', default: '15' },
    data: { type: 'string', default: process.env.TOOLSEL_DATA_DIR ?? '../shared/data' },
  },
})
// What it measures only once the flags are good: --help and a bad flag answer without it.
const { loadDefaultModel } = await import('../src/learn/learned-model.ts')
const { selectTools } = await import('../src/pipeline.ts')
const { LearnedSelector } = await import('../src/select/learned-selector.ts')
const { selectResponseJson, selectResponseObject } =
  await import('../src/server/select-response.ts')
const { savedBenchmarkSelection } = await import('./perf/in-process.ts')
const size = Number(values.size)
const passes = Number(values.passes)
if (!Number.isInteger(size) || size < 1 || !Number.isInteger(passes) || passes < 1) {
  usageError(
    import.meta.url,
    '--size takes a positive number of tools, --passes a positive whole number.',
  )
}

/** What `c.json` of the route's response object wrote. */
function objectJson(result: SelectToolsResult, includeSchemas: boolean): string {
  return JSON.stringify(selectResponseObject(result, includeSchemas))
}

const work = await mkdtemp(join(tmpdir(), 'toolsel-select-response-'))
try {
  const { instructions, options } = await savedBenchmarkSelection(
    values.data,
    size,
    work,
    new LearnedSelector(loadDefaultModel()),
  )
  const results: SelectToolsResult[] = []
  let compared = 0
  for (const explain of [false, true]) {
    for (const instruction of instructions) {
      const result = await selectTools(instruction, { ...options, explain })
      for (const includeSchemas of [true, false]) {
        if (selectResponseJson(result, includeSchemas) !== objectJson(result, includeSchemas)) {
          throw new Error(`The two ways differ for "${instruction}" (explain ${explain}).`)
        }
        compared += 1
      }
      if (!explain) results.push(result)
    }
  }
  const ways = [
    (result: SelectToolsResult) => objectJson(result, true).length,
    (result: SelectToolsResult) => selectResponseJson(result, true).length,
  ]
  const fastest = ways.map(() => new Array<number>(results.length).fill(Infinity))
  for (let pass = 0; pass < passes; pass += 1) {
    for (let index = 0; index < results.length; index += 1) {
      for (const way of pass % 2 === 0 ? [0, 1] : [1, 0]) {
        const started = process.hrtime.bigint()
        ways[way](results[index])
        const micros = Number(process.hrtime.bigint() - started) / 1000
        if (micros < fastest[way][index]) fastest[way][index] = micros
      }
    }
  }
  const mean = (list: number[]) => list.reduce((sum, value) => sum + value, 0) / list.length
  const [before, after] = fastest.map(mean)
  const load = (await readFile('/proc/loadavg', 'utf8')).split(' ').slice(0, 3).join(' ')
  process.stdout.write(
    `${size} tools: ${compared} answers equal both ways; per answer with schemas, each one's ` +
      `fastest of ${passes}: JSON.stringify ${before.toFixed(2)} µs, selectResponseJson ` +
      `${after.toFixed(2)} µs, ratio ${(after / before).toFixed(3)}; load average ${load}\n`,
  )
} finally {
  await rm(work, { recursive: true, force: true })
}
