/**
 * CPU of the import worker's function for a same-tools re-upload (bench/README "Round 26
 * (qa12)"): `prepareUpload` building the BM25 postings (as before round 26) and told the saved
 * tools (`bm25Unless`: no postings), alternating, three each, on the upload-stall body (copies of
 * the ToolBench G3 corpus up to the body limit). In process: the worker runs this very function.
 *
 * `--bytes` sizes the body (default the body limit, `server.bodyLimitBytes`: 32 MiB, ~90,000
 * tools, a minute or more of CPU a side on a busy host); `--rounds` the pairs (default 3).
 *
 *   node --import tsx bench/upload-worker-cost.ts [--data ../shared/data] [--bytes 4194304]
 *     [--rounds 3]
 * @module
 */
import { benchArgs, wholeNumber } from './bench-args.ts'
import { loadAverage, median } from './lib/measure.ts'

const { values } = benchArgs(import.meta.url, {
  options: {
    data: { type: 'string', default: process.env.TOOLSEL_DATA_DIR ?? '../shared/data' },
    bytes: { type: 'string' },
    rounds: { type: 'string', default: '3' },
  },
})
const rounds = wholeNumber(import.meta.url, '--rounds', values.rounds, 1, 100)
const maxBytes =
  values.bytes === undefined
    ? undefined
    : wholeNumber(import.meta.url, '--bytes', values.bytes, 1024)
// What it measures only once the flags are good: --help and a bad flag answer without it.
const { resolveSuites } = await import('../src/bench/suites/suite-registry.ts')
const { parseConfig } = await import('../src/config/load-config.ts')
const { prepareUpload } = await import('../src/store/upload-import-worker.ts')
const { bm25Settings } = await import('../src/store/kinds/bm25-kind.ts')
const [suite] = resolveSuites('toolbench-g3')
const { splits } = await suite.load({
  dataDir: values.data,
  libraryMode: 'corpus',
  unmappable: 'drop',
})
const tools = splits[0].tools
const config = parseConfig({})
const limit = maxBytes ?? config.server.bodyLimitBytes
const lines: string[] = []
let bytes = 2
outer: for (let copy = 0; ; copy += 1)
  for (const tool of tools) {
    const line = JSON.stringify({
      id: copy === 0 ? tool.id : `${tool.id}~c${copy}`,
      name: tool.name,
      description: tool.description,
      parameters: tool.parameters,
    })
    if (bytes + line.length + 2 > limit) break outer
    lines.push(line)
    bytes += Buffer.byteLength(line) + 2
  }
const body = `[\n${lines.join(',\n')}\n]`
const bm25 = bm25Settings(config)
const first = await prepareUpload('big', body, {}, bm25)
const unless = { count: lines.length, contentHash: first.contentHash }
const times: Record<string, number[]> = { before: [], after: [] }
for (let round = 0; round < rounds; round += 1) {
  for (const side of round % 2 === 0 ? ['before', 'after'] : ['after', 'before']) {
    const cpu = process.cpuUsage()
    const prepared = await prepareUpload(
      'big',
      body,
      {},
      bm25,
      side === 'after' ? unless : undefined,
    )
    const used = process.cpuUsage(cpu)
    times[side].push((used.user + used.system) / 1000)
    if ((prepared.bm25Postings === undefined) !== (side === 'after')) throw new Error('postings?')
  }
}
console.log(`${lines.length} tools, ${bytes} bytes; load ${loadAverage()}`)
for (const side of ['before', 'after'])
  console.log(
    `${side}: ${times[side].map((t) => Math.round(t)).join(', ')} ms CPU, median ${Math.round(median(times[side]))}`,
  )
