/**
 * The select answer's JSON, in process: `selectResponseJson` (src/server/select-response.ts, what
 * `POST /v1/select-tools` writes) against `JSON.stringify` of the response object (what `c.json`
 * wrote before round 15). Builds the benchmark library as bench/perf.ts does, saves and reloads
 * it, answers the 535 benchmark instructions once with and once without `explain`, checks that
 * both ways give the same text for every answer with and without `includeSchemas`, then times
 * each answer's serialising (with schemas, as bench:perf asks) the two ways interleaved, keeping
 * each answer's fastest of `--passes`, and prints the mean of those and their ratio.
 *
 *   node --import tsx bench/select-response-ab.ts [--size 10000] [--passes 15] [--write]
 *
 * `--write` (round 55) also prices the answer where the server pays for it: what the in-process
 * figure above leaves out. `selectResponseJson` returns a rope (a string made by `+=`), and its
 * length is known without touching its characters; a server needs its bytes. Per answer (with
 * schemas), each one's fastest of `--passes`, the ways interleaved, all in this process:
 *
 * - in process, the rope: `selectResponseJson(…).length` (the figure above);
 * - in process, the rope and its UTF-8 length: `Buffer.byteLength` of it, as @hono/node-server
 *   takes it for Content-Length (V8 flattens the rope into one string to count it);
 * - in a server: a node:http server on loopback (what @hono/node-server answers through) times,
 *   in its request handler, the answer made and written as the route and @hono/node-server write
 *   it: the route's headers, `Buffer.byteLength`, `writeHead`, `end(text)` (node adds the head
 *   to the text and writes both to the socket in that call: the kernel's loopback send
 *   included); a client in the same process asks for each answer in turn on one keep-alive
 *   connection and reads it whole;
 * - the same server writing the answer as a Buffer made from the rope (`Buffer.from`);
 * - the same server writing the answer's text made beforehand (one flat string, as `bench:perf
 *   --ceiling`'s bare app writes it): the write's own cost, which the ceiling pays too.
 *
 * `--before DIR` (with `--write`) adds another checkout's `selectResponseJson` (DIR with `src/`,
 * e.g. /work/ci-base) to the same turns: its rope and UTF-8 length in process, and its answer
 * made and written by the same server, with its own caches.
 * @module
 */
import { mkdtemp, readFile, rm } from 'node:fs/promises'
import { Agent, createServer, request } from 'node:http'
import type { AddressInfo } from 'node:net'
import { tmpdir } from 'node:os'
import { join, resolve } from 'node:path'
import { pathToFileURL } from 'node:url'
import { benchArgs, usageError } from './bench-args.ts'
import { median } from './lib/measure.ts'
import type { SelectToolsResult } from '../src/pipeline.ts'

const { values } = benchArgs(import.meta.url, {
  options: {
    size: { type: 'string', default: '10000' },
    passes: { type: 'string', default: '15' },
    write: { type: 'boolean', default: false },
    before: { type: 'string' },
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

const mean = (list: number[]) => list.reduce((sum, value) => sum + value, 0) / list.length
const loadAverage = async () =>
  (await readFile('/proc/loadavg', 'utf8')).split(' ').slice(0, 3).join(' ')

/** Microseconds since `started` (`process.hrtime.bigint()`). */
const since = (started: bigint) => Number(process.hrtime.bigint() - started) / 1000

/** `--write`: the answer's cost in process and written by a server, side by side (see above). */
async function priceTheWrite(results: SelectToolsResult[], before?: string): Promise<void> {
  type Write = typeof selectResponseJson
  const other: Write | undefined =
    before === undefined
      ? undefined
      : (
          (await import(
            pathToFileURL(join(resolve(before), 'src/server/select-response.ts')).href
          )) as {
            selectResponseJson: Write
          }
        ).selectResponseJson
  const made = results.map((result) => selectResponseJson(result, true))
  // One flat string per answer, as JSON.stringify makes the ceiling's text.
  const texts = made.map((json) => Buffer.from(json).toString())
  const nonAscii = made.filter((json) => Buffer.byteLength(json) !== json.length).length
  const bytes = mean(made.map((json) => Buffer.byteLength(json)))
  const inProcess: Record<string, (index: number) => number> = {
    'in process: the rope (its length)': (index) => selectResponseJson(results[index], true).length,
    'in process: the rope and its UTF-8 length (Buffer.byteLength)': (index) =>
      Buffer.byteLength(selectResponseJson(results[index], true)),
    ...(other && {
      [`before (${before}), in process: the rope and its UTF-8 length`]: (index: number) =>
        Buffer.byteLength(other(results[index], true)),
    }),
  }
  const served: Record<string, (index: number) => string | Buffer> = {
    'in a server: made and written as the route writes it (a string)': (index) =>
      selectResponseJson(results[index], true),
    'in a server: made, Buffer.from, written': (index) =>
      Buffer.from(selectResponseJson(results[index], true)),
    'in a server: the text made beforehand, written (the ceiling)': (index) => texts[index],
    ...(other && {
      [`before (${before}), in a server: made and written as its route writes it`]: (
        index: number,
      ) => other(results[index], true),
    }),
  }
  if (other && results.some((result, index) => other(result, true) !== made[index])) {
    throw new Error(`${before}'s answers differ from this checkout's.`)
  }
  const names = [...Object.keys(inProcess), ...Object.keys(served)]
  const fastest = new Map(names.map((name) => [name, results.map(() => Infinity)]))
  const keep = (name: string, index: number, micros: number) => {
    const list = fastest.get(name)!
    if (micros < list[index]) list[index] = micros
  }
  const server = createServer((incoming, outgoing) => {
    const [, way, at] = (incoming.url ?? '').split('/')
    const name = Object.keys(served)[Number(way)]
    const index = Number(at)
    const started = process.hrtime.bigint()
    // What the app's request log sets, then what @hono/node-server does with the route's body.
    outgoing.setHeader('x-request-id', 'perf18')
    outgoing.setHeader('x-content-type-options', 'nosniff')
    const body = served[name](index)
    const length = typeof body === 'string' ? Buffer.byteLength(body) : body.byteLength
    outgoing.writeHead(200, { 'Content-Type': 'application/json', 'Content-Length': length })
    outgoing.end(body)
    keep(name, index, since(started))
  })
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve))
  const port = (server.address() as AddressInfo).port
  const agent = new Agent({ keepAlive: true, maxSockets: 1 })
  const ask = (path: string) =>
    new Promise<number>((resolve, reject) => {
      request({ host: '127.0.0.1', port, path, agent }, (answer) => {
        let received = 0
        answer.on('data', (chunk: Buffer) => (received += chunk.length))
        answer.on('end', () => resolve(received))
      })
        .on('error', reject)
        .end()
    })
  try {
    const wayCount = Object.keys(served).length
    for (let pass = 0; pass < passes; pass += 1) {
      for (let index = 0; index < results.length; index += 1) {
        for (let turn = 0; turn < names.length; turn += 1) {
          // Each pass goes through the ways in the other order.
          const way = pass % 2 === 0 ? turn : names.length - 1 - turn
          if (way < wayCount) {
            const received = await ask(`/${way}/${index}`)
            if (received !== Buffer.byteLength(texts[index])) {
              throw new Error(`Answer ${index} came with ${received} bytes.`)
            }
          } else {
            const name = Object.keys(inProcess)[way - wayCount]
            const started = process.hrtime.bigint()
            inProcess[name](index)
            keep(name, index, since(started))
          }
        }
      }
    }
  } finally {
    agent.destroy()
    server.close()
  }
  const rows = names.map((name) => {
    const list = fastest.get(name)!
    return `| ${name} | ${mean(list).toFixed(2)} | ${median(list).toFixed(2)} |`
  })
  process.stdout.write(
    [
      '',
      `${results.length} answers with schemas, ${bytes.toFixed(0)} bytes on average, ${nonAscii} ` +
        `not ASCII; µs per answer, each one's fastest of ${passes}, load average ${await loadAverage()}`,
      '',
      '| way | mean µs | median µs |',
      '| :-- | --: | --: |',
      ...rows,
      '',
    ].join('\n'),
  )
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
  const [before, after] = fastest.map(mean)
  const load = await loadAverage()
  process.stdout.write(
    `${size} tools: ${compared} answers equal both ways; per answer with schemas, each one's ` +
      `fastest of ${passes}: JSON.stringify ${before.toFixed(2)} µs, selectResponseJson ` +
      `${after.toFixed(2)} µs, ratio ${(after / before).toFixed(3)}; load average ${load}\n`,
  )
  if (values.write) await priceTheWrite(results, values.before)
} finally {
  await rm(work, { recursive: true, force: true })
}
