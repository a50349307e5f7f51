/**
 * How long one usage-example write blocks the event loop (#10 hardening: "nobody who reaches the
 * port can freeze the process"). Builds the ToolBench G3 corpus (COLT, 1,419 APIs) with the
 * ToolPlanner G3 training split as its usage examples (what `toolsel bench --suite toolbench-g3
 * --library-mode corpus --examples train` gives the library; `--examples N` keeps the first N),
 * saves it as an index, then serves it over real HTTP in this process and, while a client keeps
 * sending requests (`/healthz` during start-up, `/v1/select-tools` with training instructions
 * after, or `/healthz` with `--client health`), measures with `perf_hooks.monitorEventLoopDelay`:
 *
 * - `start`: the service loading the saved index (examples, their memory and its preparation);
 * - `examples`: `POST /v1/libraries/g3/examples` of one new example;
 * - `feedback`: `POST /v1/feedback` of one new example;
 * - `feedback burst`: `--burst` (8) feedback posts sent at once (the phase lasts until all are
 *   answered);
 * - `reload`: the saved index loaded again and swapped in while serving (`--reloads`, 2), as
 *   every other process of `serve --workers N` does after a change (service/cluster-sync.ts);
 * - `idle`: the client alone (the floor: with selections, one selection's own CPU).
 *
 * Prints one row per phase: the phase's duration, the longest event-loop stall (max) and its p99,
 * the longest stall in the main thread's own CPU time (what the code holds the loop for, without
 * the waits for a core of a loaded machine), the client's requests and their slowest latency.
 *
 *   node --import tsx bench/example-write-stall.ts [--data ../shared/data] [--examples N]
 *     (N past the 4,751 distinct training examples: copies made distinct by a marker word)
 *     [--writes 2] [--client select|health] [--burst 8] [--reloads 2]
 * @module
 */
import { mkdtemp, rm } from 'node:fs/promises'
import { loadavg, tmpdir } from 'node:os'
import { join } from 'node:path'
import { benchArgs, usageError, wholeNumber } from './bench-args.ts'
import type { StallRow } from './stall-probe.ts'

const { values } = benchArgs(import.meta.url, {
  options: {
    data: { type: 'string', default: process.env.TOOLSEL_DATA_DIR ?? '../shared/data' },
    examples: { type: 'string' },
    writes: { type: 'string', default: '2' },
    client: { type: 'string', default: 'select' },
    burst: { type: 'string', default: '8' },
    reloads: { type: 'string', default: '2' },
  },
})
// What it measures only once the flags are good: --help and a bad flag answer without it.
const { resolveSuites } = await import('../src/bench/suites/suite-registry.ts')
const { createComponents } = await import('../src/components.ts')
const { parseConfig } = await import('../src/config/load-config.ts')
const { ExampleSet } = await import('../src/examples/example-set.ts')
const { createMemoryLogger } = await import('../src/log.ts')
const { createApp } = await import('../src/server/app.ts')
const { ToolselService } = await import('../src/service/toolsel-service.ts')
const { indexTools, loadIndexedLibrary, saveIndexedLibrary } =
  await import('../src/store/library-lifecycle.ts')
const { listenApp } = await import('../test/helpers/listen-app.ts')
const { measureStall, pause } = await import('./stall-probe.ts')
const writes = wholeNumber(import.meta.url, '--writes', values.writes)
const reloads = wholeNumber(import.meta.url, '--reloads', values.reloads, 0)
if (values.client !== 'select' && values.client !== 'health')
  usageError(import.meta.url, '--client takes select or health.')

const [suite] = resolveSuites('toolbench-g3')
const { splits } = await suite.load({
  dataDir: values.data!,
  libraryMode: 'corpus',
  unmappable: 'drop',
  examples: 'train',
})
const split = splits[0]
if (!split?.training)
  throw new Error(`toolbench-g3 corpus and training files not found under ${values.data}.`)
// `--examples N`: the first N training examples, or, past the 4.75k there are, copies of them
// made distinct by a marker word (` v1`, ` v2`…) until there are N (16,900: the scale of #10).
const wanted =
  values.examples === undefined
    ? split.training.examples.length
    : wholeNumber(import.meta.url, '--examples', values.examples)
const base = split.training.examples
const training = Array.from({ length: wanted }, (_, position) => {
  const example = base[position % base.length]
  const copy = Math.floor(position / base.length)
  return copy === 0 ? example : { ...example, instruction: `${example.instruction} v${copy}` }
})

const work = await mkdtemp(join(tmpdir(), 'toolsel-write-stall-'))
const indexDir = join(work, 'indexes')
const config = parseConfig({ library: { default: 'g3', indexDir } })
try {
  const built = await indexTools('g3', split.tools, config, {
    examples: ExampleSet.of(training, { cap: config.library.maxExamples }),
  })
  await saveIndexedLibrary(indexDir, built)
  const exampleCount = built.examples?.set.size ?? 0
  const logger = createMemoryLogger()
  const service = new ToolselService(config, logger, createComponents(config, logger))
  const server = await listenApp(createApp(service).fetch)
  const instructions = training.map((example) => example.instruction)
  let asked = 0
  const select = () =>
    fetch(`${server.url}/v1/select-tools`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ instruction: instructions[asked++ % instructions.length] }),
    })
  const health = () => fetch(`${server.url}/healthz`)
  const post = async (path: string, body: unknown) => {
    const response = await fetch(`${server.url}${path}`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify(body),
    })
    if (!response.ok) throw new Error(`${path}: ${response.status} ${await response.text()}`)
    await response.json()
  }

  const rows: StallRow[] = []
  const measure = async (
    phase: string,
    request: () => Promise<Response>,
    action: () => Promise<unknown>,
  ) => {
    rows.push(await measureStall(phase, request, action))
  }

  await measure('start', health, () => service.start())
  const client = values.client === 'select' ? select : health
  await measure(`idle (client alone)`, client, () => pause(1000))
  for (let write = 1; write <= writes; write += 1) {
    const example = training[(write * 7919) % training.length]
    await measure(`examples #${write}`, client, () =>
      post('/v1/libraries/g3/examples', {
        examples: [
          { instruction: `${example.instruction} stall probe e${write}`, tools: example.tools },
        ],
      }),
    )
    const other = training[(write * 104_729) % training.length]
    await measure(`feedback #${write}`, client, () =>
      post('/v1/feedback', {
        library: 'g3',
        instruction: `${other.instruction} stall probe f${write}`,
        used: other.tools,
      }),
    )
  }
  // A burst: `--burst` feedback posts at once (one rebuild each when writes are serialised one by
  // one; two when the ones that arrive during a write are applied together).
  const burst = Number(values.burst)
  await measure(`feedback burst of ${burst}`, client, () =>
    Promise.all(
      Array.from({ length: burst }, (_, index) => {
        const example = training[(index * 31_337 + 11) % training.length]
        return post('/v1/feedback', {
          library: 'g3',
          instruction: `${example.instruction} stall probe b${index}`,
          used: example.tools,
        })
      }),
    ),
  )
  // What another server process does with this library's change (cluster-sync's apply): load the
  // saved index (its tools index, BM25 files, usage examples and their memory) and swap it in.
  for (let reload = 1; reload <= reloads; reload += 1) {
    await measure(`reload #${reload}`, client, async () => {
      const dir = join(indexDir, 'g3')
      const indexed = await loadIndexedLibrary(dir, config, { logger })
      service.libraries.set({ ...indexed, dir }, { replicated: true })
    })
  }
  await server.close()

  const fixed = (value: number) => value.toFixed(1)
  console.log(
    `G3 corpus: ${split.tools.length} tools, ${exampleCount} usage examples (ToolPlanner G3 training split${wanted > base.length ? ', copies made distinct' : ''}); client ${values.client}; node ${process.version}; load average ${loadavg()
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
} finally {
  await rm(work, { recursive: true, force: true })
}
