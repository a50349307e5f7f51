/**
 * Reward throughput benchmark (not a test): how many planner completions per second toolsel
 * scores, in process (`scorePlans`) and over HTTP (`POST /v1/rewards/planner` on `toolsel serve`
 * in a child process), on the ToolBench G3 library (1,415 APIs) with BM25. Each request is one
 * GRPO group: 8 completions for one training instruction, as a planner in training writes them
 * (the description plan, reordered, with an extra step, with a step missing, fenced, numbered,
 * prose, the whole instruction as one step).
 *
 *   npm run bench:rewards -- [--groups 400] [--warmup 3] [--duration 10] [--connections 8] [--data DIR]
 *
 * Prints one table. The target is >= 2,000 completions/s over HTTP on 2 cores.
 * @module
 */
import { spawn, type ChildProcess } from 'node:child_process'
import { mkdtemp, rm } from 'node:fs/promises'
import { availableParallelism, tmpdir } from 'node:os'
import { join } from 'node:path'
import { benchArgs } from './bench-args.ts'

const { values } = benchArgs(import.meta.url, {
  options: {
    groups: { type: 'string', default: '400' },
    duration: { type: 'string', default: '10' },
    warmup: { type: 'string', default: '3' },
    connections: { type: 'string', default: '8' },
    data: { type: 'string', default: process.env.TOOLSEL_DATA_DIR ?? '../shared/data' },
  },
})
// What it measures only once the flags are good: --help and a bad flag answer without it.
const { parseConfig } = await import('../src/config/load-config.ts')
const { ToolLibrary } = await import('../src/library/tool-library.ts')
const { scorePlans } = await import('../src/rewards/score-plans.ts')
const { buildIndexedLibrary } = await import('../src/store/library-lifecycle.ts')
const { requireRetriever } = await import('../src/store/indexed-library.ts')
const { G3_TRAIN_FILES, loadToolbenchG3Train } =
  await import('../src/train/splits/toolbench-g3-train.ts')
const { descriptionStep } = await import('../src/train/target-plan.ts')

interface Group {
  library: string
  instruction: string
  gold: string[]
  completions: string[]
}

const split = await loadToolbenchG3Train(values.data)
const config = parseConfig({})
const indexed = await buildIndexedLibrary(new ToolLibrary('toolbench-g3', split.tools), config)
const groups: Group[] = split.examples.slice(0, Number(values.groups)).map((example) => {
  const plan = example.gold.map((id) => descriptionStep(indexed.library.require(id)))
  const completions = [
    JSON.stringify(plan),
    JSON.stringify([...plan].reverse()),
    JSON.stringify([...plan, 'answer the user with a summary']),
    JSON.stringify(plan.slice(1)),
    `\`\`\`json\n${JSON.stringify(plan)}\n\`\`\``,
    plan.map((step, index) => `${index + 1}. ${step}`).join('\n'),
    'I will look this up for you.',
    JSON.stringify([example.instruction]),
  ]
  return {
    library: 'toolbench-g3',
    instruction: example.instruction,
    gold: example.gold,
    completions,
  }
})
const completionsPerGroup = groups[0].completions.length

// In process: every group once, one after the other (after one warm-up pass).
const retriever = requireRetriever(indexed)
const scoreAll = async () => {
  for (const group of groups) {
    await scorePlans(group.instruction, group.gold, group.completions, {
      library: indexed.library,
      retriever,
      k: config.retrieve.k,
      maxSteps: config.plan.maxSteps,
    })
  }
}
await scoreAll()
const started = performance.now()
await scoreAll()
const inProcessSeconds = (performance.now() - started) / 1000

// Over HTTP: toolsel serve on a built index, `connections` clients posting groups in rotation.
const indexDir = await mkdtemp(join(tmpdir(), 'toolsel-rewards-'))
await runToolsel([
  'index',
  join(values.data, G3_TRAIN_FILES.corpus),
  '--name',
  'toolbench-g3',
  '--index-dir',
  indexDir,
])
const { child, url } = await startServe(indexDir)
const latencies: number[] = []
let next = 0
// Warm up first (JIT, sockets): the first seconds of a fresh server are not its throughput.
await drive(Number(values.warmup), () => undefined)
const httpStarted = performance.now()
await drive(Number(values.duration), (ms) => latencies.push(ms))
const httpSeconds = (performance.now() - httpStarted) / 1000
child.kill('SIGTERM')
await rm(indexDir, { recursive: true, force: true })

/** `connections` clients posting groups in rotation for `seconds`; `record` gets each latency. */
async function drive(seconds: number, record: (ms: number) => void): Promise<void> {
  const deadline = performance.now() + seconds * 1000
  await Promise.all(
    Array.from({ length: Number(values.connections) }, async () => {
      while (performance.now() < deadline) {
        const group = groups[next++ % groups.length]
        const sent = performance.now()
        const response = await fetch(`${url}/v1/rewards/planner`, {
          method: 'POST',
          headers: { 'content-type': 'application/json' },
          body: JSON.stringify(group),
        })
        if (response.status !== 200)
          throw new Error(`HTTP ${response.status}: ${await response.text()}`)
        await response.arrayBuffer()
        record(performance.now() - sent)
      }
    }),
  )
}

latencies.sort((a, b) => a - b)
const percentile = (p: number) =>
  latencies[Math.min(latencies.length - 1, Math.floor(p * latencies.length))]
const rows = [
  [
    'in process (scorePlans)',
    groups.length,
    groups.length * completionsPerGroup,
    inProcessSeconds,
    '-',
    '-',
  ],
  [
    `HTTP, ${values.connections} connections`,
    latencies.length,
    latencies.length * completionsPerGroup,
    httpSeconds,
    percentile(0.5).toFixed(2),
    percentile(0.95).toFixed(2),
  ],
] as const
process.stdout.write(
  `Planner reward throughput, ToolBench G3 library (${indexed.library.size} tools), BM25, k ${config.retrieve.k}, ${completionsPerGroup} completions per request, ${availableParallelism()} CPUs\n\n` +
    '| mode | requests | completions | seconds | completions/s | p50 ms/request | p95 ms/request |\n' +
    '|---|---:|---:|---:|---:|---:|---:|\n' +
    rows
      .map(
        ([mode, requests, completions, seconds, p50, p95]) =>
          `| ${mode} | ${requests} | ${completions} | ${seconds.toFixed(2)} | ${Math.round(completions / seconds)} | ${p50} | ${p95} |`,
      )
      .join('\n') +
    '\n',
)

function runToolsel(args: string[]): Promise<void> {
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, ['bin/toolsel.mjs', ...args], {
      stdio: ['ignore', 'ignore', 'inherit'],
    })
    child.on('error', reject)
    child.on('close', (code) =>
      code === 0 ? resolve() : reject(new Error(`toolsel ${args[0]} exited ${code}`)),
    )
  })
}

async function startServe(dir: string): Promise<{ child: ChildProcess; url: string }> {
  const child = spawn(
    process.execPath,
    [
      'bin/toolsel.mjs',
      'serve',
      '--port',
      '0',
      '--host',
      '127.0.0.1',
      '--index-dir',
      dir,
      '--library',
      'toolbench-g3',
      '--log-level',
      'info',
    ],
    { stdio: ['ignore', 'ignore', 'pipe'], env: { ...process.env, TOOLSEL_PORT: '' } },
  )
  let logs = ''
  child.stderr!.on('data', (chunk: Buffer) => (logs += chunk.toString()))
  const until = Date.now() + 60_000
  while (!/Ready:/.test(logs)) {
    if (Date.now() > until || child.exitCode !== null)
      throw new Error(`serve did not start:\n${logs}`)
    await new Promise((resolve) => setTimeout(resolve, 50))
  }
  return { child, url: `http://127.0.0.1:${/Listening on http:\/\/[^:]+:(\d+)/.exec(logs)![1]}` }
}
