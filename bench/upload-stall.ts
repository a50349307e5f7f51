/**
 * How long a library upload over HTTP blocks the event loop (#10 hardening: "nobody who reaches
 * the port can freeze the process"). Takes the ToolBench G3 corpus (COLT, 1,415 tools) and, to
 * reach the largest upload the server accepts by default (`server.bodyLimitBytes`, 32 MiB; no
 * tool-count limit), copies of its tools made distinct by an id suffix until the canonical JSON
 * body is just under `--bytes` (default the body limit). Serves the demo library over real HTTP
 * in this process and, while a client keeps sending `/v1/select-tools` (or `/healthz` with
 * `--client health`), measures with `perf_hooks.monitorEventLoopDelay`:
 *
 * - `idle`: the client alone (the floor);
 * - `upload #n`: `PUT /v1/libraries/big` of the whole body (import, BM25 build, save, swap);
 *   the first creates the library, later ones replace it. With `--import-in both` (default) each
 *   round uploads twice, once imported in the process (`server.importWorkerMinChars` set past
 *   the body: the path before round 14) and once in the import worker thread (the default),
 *   alternating which goes first; `process` or `worker` runs one of them.
 * - `reload #n` (`--reloads N`, default 0): after the uploads, the saved index loaded again and
 *   swapped in while serving, as every other process of `serve --workers N` does after a change
 *   (service/cluster-sync.ts).
 *
 * The upload is sent by a child process (node's fetch of the body, written to a file once): a
 * 33 MB request made and written by this process stalled its event loop (~1-2 s) with the
 * client's work, which is not the server's stall.
 *
 * Then, outside the server, times the save's pieces one by one on the uploaded library (tools
 * file text, its sha256, the tools index file, the BM25 file), so a long stall can be placed.
 *
 *   node --import tsx bench/upload-stall.ts [--data ../shared/data] [--bytes N] [--uploads 2]
 *     [--client select|health] [--import-in both|process|worker] [--reloads 0]
 * @module
 */
import { createHash } from 'node:crypto'
import { spawn } from 'node:child_process'
import { mkdtemp, rm, writeFile } from 'node:fs/promises'
import { loadavg, tmpdir } from 'node:os'
import { join } from 'node:path'
import { benchArgs, usageError, wholeNumber } from './bench-args.ts'
import type { StallRow } from './stall-probe.ts'

const { values } = benchArgs(import.meta.url, {
  options: {
    data: { type: 'string', default: process.env.TOOLSEL_DATA_DIR ?? '../shared/data' },
    bytes: { type: 'string' },
    uploads: { type: 'string', default: '2' },
    client: { type: 'string', default: 'select' },
    'import-in': { type: 'string', default: 'both' },
    reloads: { type: 'string', default: '0' },
  },
})
// What it measures only once the flags are good: --help and a bad flag answer without it.
const { resolveSuites } = await import('../src/bench/suites/suite-registry.ts')
const { createComponents } = await import('../src/components.ts')
const { parseConfig } = await import('../src/config/load-config.ts')
const { createMemoryLogger } = await import('../src/log.ts')
const { createApp } = await import('../src/server/app.ts')
const { ToolselService } = await import('../src/service/toolsel-service.ts')
const { Bm25Retriever } = await import('../src/retrieve/bm25/bm25-retriever.ts')
type Bm25Retriever = import('../src/retrieve/bm25/bm25-retriever.ts').Bm25Retriever
const { writeBm25File } = await import('../src/store/kinds/bm25-file.ts')
const { loadIndexedLibrary } = await import('../src/store/library-lifecycle.ts')
const { writeToolsIndexFile } = await import('../src/store/tools-index-file.ts')
const { listenApp } = await import('../test/helpers/listen-app.ts')
const { measureStall, pause } = await import('./stall-probe.ts')
const reloads = wholeNumber(import.meta.url, '--reloads', values.reloads, 0)
const uploads = wholeNumber(import.meta.url, '--uploads', values.uploads)
if (values.client !== 'select' && values.client !== 'health')
  usageError(import.meta.url, '--client takes select or health.')
const modes = { both: ['process', 'worker'], process: ['process'], worker: ['worker'] }[
  values['import-in']!
]
if (!modes) usageError(import.meta.url, '--import-in takes both, process or worker.')

const [suite] = resolveSuites('toolbench-g3')
const { splits } = await suite.load({
  dataDir: values.data!,
  libraryMode: 'corpus',
  unmappable: 'drop',
})
const split = splits[0]
if (!split) throw new Error(`toolbench-g3 corpus not found under ${values.data}.`)

const work = await mkdtemp(join(tmpdir(), 'toolsel-upload-stall-'))
const config = parseConfig({ library: { indexDir: join(work, 'indexes') } })
const limit = values.bytes === undefined ? config.server.bodyLimitBytes : Number(values.bytes)
// Canonical tools (id, name, description, parameters): copies of the corpus with `~c<n>` ids
// until the JSON array is just under the limit.
const lines: string[] = []
let bytes = 2
for (let copy = 0; ; copy += 1) {
  let full = false
  for (const tool of split.tools) {
    const line = JSON.stringify({
      id: copy === 0 ? tool.id : `${tool.id}~c${copy}`,
      name: tool.name,
      description: tool.description,
      parameters: tool.parameters,
    })
    const size = Buffer.byteLength(line) + 2
    if (bytes + size > limit) {
      full = true
      break
    }
    lines.push(line)
    bytes += size
  }
  if (full) break
}
const body = Buffer.from(`[\n${lines.join(',\n')}\n]`)

/**
 * Sends the body from a child process: a 33 MB request built and written by this process would
 * stall the event loop the bench measures with the client's work, not the server's.
 */
function uploadFromChild(url: string, file: string): Promise<{ code: number; output: string }> {
  const script = `const body = require('node:fs').readFileSync(process.argv[1]);
fetch(process.argv[2], { method: 'PUT', headers: { 'content-type': 'application/json' }, body })
  .then(async (r) => { const t = await r.text(); if (!r.ok) { console.log(r.status, t); process.exitCode = 1 } })
  .catch((e) => { console.log(String(e)); process.exitCode = 1 })`
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, ['-e', script, file, url], {
      stdio: ['ignore', 'pipe', 'inherit'],
    })
    let output = ''
    child.stdout.on('data', (chunk: Buffer) => (output += chunk.toString()))
    child.on('error', reject)
    child.on('close', (code) => resolve({ code: code ?? 1, output }))
  })
}

try {
  const bodyFile = join(work, 'body.json')
  await writeFile(bodyFile, body)
  const logger = createMemoryLogger()
  const service = new ToolselService(config, logger, createComponents(config, logger))
  await service.start()
  const server = await listenApp(createApp(service).fetch)
  const questions = [
    'text Sam the weather forecast for tomorrow',
    'find flights from Paris to Rome next week',
    'send an email to my manager about the report',
    'what is on my calendar today',
  ]
  let asked = 0
  const select = () =>
    fetch(`${server.url}/v1/select-tools`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ instruction: questions[asked++ % questions.length] }),
    })
  const health = () => fetch(`${server.url}/healthz`)
  const client = values.client === 'select' ? select : health

  const rows: StallRow[] = []
  const measure = async (phase: string, action: () => Promise<unknown>) => {
    rows.push(await measureStall(phase, client, action))
  }

  await measure('idle (client alone)', () => pause(1000))
  const workerMinChars = config.server.importWorkerMinChars
  for (let upload = 1; upload <= uploads; upload += 1) {
    const order = upload % 2 === 1 ? modes : [...modes].reverse()
    for (const mode of order) {
      config.server.importWorkerMinChars = mode === 'process' ? Infinity : workerMinChars
      await measure(`upload #${upload} (import in ${mode})`, async () => {
        const { code, output } = await uploadFromChild(
          `${server.url}/v1/libraries/big?format=canonical`,
          bodyFile,
        )
        if (code !== 0) throw new Error(`upload: ${output}`)
      })
    }
  }
  // What another server process does after the upload (cluster-sync's apply): load the saved
  // index (tools index, BM25 file) and swap it in.
  for (let reload = 1; reload <= reloads; reload += 1) {
    await measure(`reload #${reload}`, async () => {
      const dir = join(config.library.indexDir, 'big')
      const indexed = await loadIndexedLibrary(dir, config, { logger })
      service.libraries.set({ ...indexed, dir }, { replicated: true })
    })
  }
  await server.close()

  // The save's pieces, timed alone on the uploaded (in-memory) library.
  const indexed = service.library('big')
  const pieces: Array<[string, number]> = []
  const time = async <T>(piece: string, work: () => T | Promise<T>): Promise<T> => {
    const started = performance.now()
    const result = await work()
    pieces.push([piece, performance.now() - started])
    return result
  }
  const { ToolLibrary } = await import('../src/library/tool-library.ts')
  const memory = new ToolLibrary('big', indexed.library.tools)
  const toolLines = await time('tools file text (toJsonLines)', () => memory.toJsonLines())
  const hash = await time('sha256 of the tools file', () =>
    createHash('sha256').update(toolLines).digest('hex'),
  )
  await time('tools index file (spans, id table, ranks, crc32, write)', () =>
    writeToolsIndexFile(join(work, 'tools.idx'), memory.ids, toolLines, hash),
  )
  const bm25 = indexed.retrievers.get('bm25') as Bm25Retriever
  await time('BM25 file (terms join, write)', () =>
    writeBm25File(join(work, 'bm25.bin'), bm25.postings),
  )

  const fixed = (value: number) => value.toFixed(1)
  console.log(
    `Upload: ${lines.length} tools (G3 corpus ${split.tools.length} tools, copies made distinct), ${body.length} bytes (limit ${config.server.bodyLimitBytes}); client ${values.client}; node ${process.version}; load average ${loadavg()
      .map((load) => load.toFixed(2))
      .join(' ')}`,
  )
  console.log(
    '| phase | ms | stall max ms | stall p99 ms | stall max, CPU ms | client requests | slowest request ms | RSS after, MB |',
  )
  console.log('| --- | ---: | ---: | ---: | ---: | ---: | ---: | ---: |')
  for (const row of rows)
    console.log(
      `| ${row.phase} | ${Math.round(row.ms)} | ${fixed(row.stallMax)} | ${fixed(row.stallP99)} | ${fixed(row.stallCpuMax)} | ${row.requests} | ${fixed(row.slowest)} | ${Math.round(row.rssMb)} |`,
    )
  console.log('\n| save piece (alone) | ms |\n| --- | ---: |')
  for (const [piece, ms] of pieces) console.log(`| ${piece} | ${fixed(ms)} |`)
} finally {
  await rm(work, { recursive: true, force: true })
}
