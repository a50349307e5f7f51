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
 *
 * `--uploads N` measures the server's path instead (bench/README "Round 49 (imp23)"): N uploads
 * of the same body one after the other in one process, `importUploadInWorker` from the built
 * `dist/` of this checkout and of `--before DIR`, and `prepareUpload` on the main thread, each in
 * a fresh process, `--rounds` of each (sides alternating). Per upload: wall, the process's CPU
 * (every thread: the worker's too), the event loop's longest wait (a 1 ms timer: what a
 * `/healthz` would have waited) and the process's peak RSS; with `--idle-wait S`, also the RSS
 * right after the last upload and S seconds later (a worker kept for the next upload holds its
 * heap until it ends). Run `npm run build` first.
 *
 *   node --import tsx bench/upload-worker-cost.ts --uploads 3 --bytes 12582912 --before /work/ci-base
 * @module
 */
import { execFile } from 'node:child_process'
import { existsSync, readFileSync } from 'node:fs'
import { join } from 'node:path'
import { fileURLToPath, pathToFileURL } from 'node:url'
import { promisify } from 'node:util'
import { benchArgs, usageError, wholeNumber } from './bench-args.ts'
import { cpuMs, loadAverage, markdownTable, median, rssMiB } from './lib/measure.ts'
import type * as UploadImport from '../src/store/upload-import.ts'
import type * as UploadWorker from '../src/store/upload-import-worker.ts'

const run = promisify(execFile)

const { values } = benchArgs(import.meta.url, {
  options: {
    data: { type: 'string', default: process.env.TOOLSEL_DATA_DIR ?? '../shared/data' },
    bytes: { type: 'string' },
    rounds: { type: 'string', default: '3' },
    uploads: { type: 'string' },
    before: { type: 'string' },
    'idle-wait': { type: 'string' },
    // Internal: one side's process of --uploads (`dist` the built package, or "main").
    side: { type: 'string' },
  },
})
const rounds = wholeNumber(import.meta.url, '--rounds', values.rounds, 1, 100)
const maxBytes =
  values.bytes === undefined
    ? undefined
    : wholeNumber(import.meta.url, '--bytes', values.bytes, 1024)
const idleWaitS =
  values['idle-wait'] === undefined
    ? undefined
    : wholeNumber(import.meta.url, '--idle-wait', values['idle-wait'], 0, 600)
const uploads =
  values.uploads === undefined
    ? undefined
    : wholeNumber(import.meta.url, '--uploads', values.uploads, 1, 20)
if (uploads !== undefined && values.side === undefined) {
  await compareSides(uploads)
  process.exit(0)
}
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
if (values.side !== undefined) {
  await oneSide(values.side, uploads ?? 1)
  process.exit(0)
}
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

/** One upload's figures (a line of JSON from a side's process). */
interface UploadFigures {
  tools: number
  bytes: number
  wallMs: number
  cpuMs: number
  loopMaxMs: number
  peakRssMiB: number
}

/**
 * --uploads in this process: `uploads` of the body, each a line of JSON on stdout. `side` is a
 * built package's dist/ directory (`importUploadInWorker`, the server's path) or "main"
 * (`prepareUpload` on this thread).
 */
async function oneSide(side: string, uploads: number): Promise<void> {
  // "main": this checkout's dist/, prepareUpload on this thread.
  const main = side === 'main'
  const dist = pathToFileURL(`${main ? fileURLToPath(new URL('../dist', import.meta.url)) : side}/`)
  const worker = main
    ? undefined
    : ((await import(new URL('store/upload-import.js', dist).href)) as typeof UploadImport)
  const inProcess = main
    ? ((await import(new URL('store/upload-import-worker.js', dist).href)) as typeof UploadWorker)
    : undefined
  const encoded = Buffer.from(body)
  for (let upload = 0; upload < uploads; upload += 1) {
    let last = performance.now()
    let loopMaxMs = 0
    const probe = setInterval(() => {
      const now = performance.now()
      loopMaxMs = Math.max(loopMaxMs, now - last)
      last = now
    }, 1)
    const started = performance.now()
    const cpu = cpuMs()
    if (worker)
      await worker.importUploadInWorker(
        'big',
        new Uint8Array(encoded),
        {},
        {
          workers: 1,
          heapLimitMb: worker.importHeapLimitMb(config.server.bodyLimitBytes),
          bm25,
        },
      )
    else await inProcess!.prepareUpload('big', body, {}, bm25)
    // A block on this thread (the main-thread side) ends here: the last wait counts too.
    loopMaxMs = Math.max(loopMaxMs, performance.now() - last)
    const figures: UploadFigures = {
      tools: lines.length,
      bytes,
      wallMs: performance.now() - started,
      cpuMs: cpuMs() - cpu,
      loopMaxMs,
      peakRssMiB: peakRssMiB(),
    }
    clearInterval(probe)
    console.log(JSON.stringify(figures))
  }
  if (idleWaitS !== undefined) {
    const afterRssMiB = rssMiB()
    await new Promise((resolve) => setTimeout(resolve, idleWaitS * 1000))
    console.log(JSON.stringify({ afterRssMiB, idleRssMiB: rssMiB() }))
  }
}

/** --idle-wait: the RSS after the last upload and `idleWaitS` later, in MiB. */
interface IdleFigures {
  afterRssMiB: number
  idleRssMiB: number
}

/** The process's peak RSS so far (VmHWM), in MiB. */
function peakRssMiB(): number {
  const line = readFileSync('/proc/self/status', 'utf8').match(/^VmHWM:\s+(\d+) kB/m)
  return line ? Number(line[1]) / 1024 : Number.NaN
}

/**
 * --uploads: every side in its own process, `rounds` times (the order alternating), and a table of
 * each upload's medians.
 */
async function compareSides(count: number): Promise<void> {
  const here = fileURLToPath(new URL('..', import.meta.url))
  const sides: Array<[string, string]> = [
    ['this: worker', join(here, 'dist')],
    ...(values.before
      ? [[`${values.before}: worker`, join(values.before, 'dist')] as [string, string]]
      : []),
    ['this: main thread', 'main'],
  ]
  for (const [, dist] of sides)
    if (dist !== 'main' && !existsSync(join(dist, 'store', 'upload-import.js')))
      usageError(import.meta.url, `no built package at ${dist} (run npm run build there)`)
  const figures = new Map<string, UploadFigures[][]>(sides.map(([label]) => [label, []]))
  const idles = new Map<string, IdleFigures[]>(sides.map(([label]) => [label, []]))
  for (let round = 0; round < rounds; round += 1)
    for (const [label, dist] of round % 2 === 0 ? sides : [...sides].reverse()) {
      const args = [...process.execArgv, fileURLToPath(import.meta.url), '--data', values.data]
      args.push('--uploads', String(count), '--side', dist)
      if (values.bytes !== undefined) args.push('--bytes', values.bytes)
      if (idleWaitS !== undefined) args.push('--idle-wait', String(idleWaitS))
      const { stdout } = await run(process.execPath, args)
      const parsed = stdout
        .trim()
        .split('\n')
        .map((line) => JSON.parse(line) as UploadFigures & IdleFigures)
      if (idleWaitS !== undefined) idles.get(label)!.push(parsed.pop()!)
      figures.get(label)!.push(parsed)
    }
  const first = [...figures.values()][0][0][0]
  console.log(
    `${first.tools} tools, ${first.bytes} bytes, ${rounds} processes a side; load ${loadAverage()}`,
  )
  const base = figures.get(sides[1]?.[0] ?? '')
  const rows: Array<Array<string | number>> = []
  for (const [label, runs] of figures)
    for (let upload = 0; upload < count; upload += 1) {
      const of = (key: keyof UploadFigures, from = runs) =>
        median(from.map((run) => run[upload][key]))
      const ratio =
        base && sides.length > 2 && label !== sides[1][0]
          ? (of('cpuMs') / of('cpuMs', base)).toFixed(2)
          : ''
      rows.push([
        label,
        upload + 1,
        Math.round(of('wallMs')).toLocaleString('en-US'),
        Math.round(of('cpuMs')).toLocaleString('en-US'),
        runs.map((run) => Math.round(run[upload].cpuMs)).join(' / '),
        ratio,
        Math.round(of('loopMaxMs')),
        Math.round(of('peakRssMiB')),
      ])
    }
  const header = [
    'side',
    'upload',
    'wall ms',
    'CPU ms',
    'CPU ms (runs)',
    'CPU x before',
    'loop max ms',
    'peak RSS MiB',
  ]
  for (const line of markdownTable(header, rows, ['---', ...Array(7).fill('---:')]))
    console.log(line)
  if (idleWaitS === undefined) return
  const idleRows = [...idles].map(([label, runs]) => [
    label,
    Math.round(median(runs.map((run) => run.afterRssMiB))),
    Math.round(median(runs.map((run) => run.idleRssMiB))),
  ])
  const idleHeader = ['side', 'RSS MiB after the last upload', `RSS MiB ${idleWaitS} s later`]
  for (const line of markdownTable(idleHeader, idleRows, ['---', '---:', '---:'])) console.log(line)
}
