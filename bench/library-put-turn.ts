/**
 * The longest event-loop turn of one large library upload (bench/README "Round 52: the longest
 * turn of a large library PUT (lib57)"): a server in this process (the built `dist/` of this
 * checkout and of `--before DIR`, a fresh process per side and round, sides alternating) serving
 * the sample tools from an index directory; `PUT /v1/libraries/big` of `--tools` (20,000)
 * distinct tools with `--chars` (600)-character descriptions (a canonical tools JSON array, sent
 * from a buffer built before), from its first byte to its answer (import, BM25 build, save, swap).
 * `--import-in process` (the default) imports it on the main thread (`server.importWorkerMinChars`
 * set past the body): the library is then held as tool objects and the save writes their JSON
 * lines (the path `ToolLibrary.toJsonLineChunksSliced` changed); `worker` imports it on the
 * import worker thread (the default for bodies of 1 MiB or more: the save writes the worker's
 * bytes as they are). Meanwhile a 1 ms timer records each gap between its turns: the longest
 * (wall), the most of the main thread's own CPU in one gap (`/proc/thread-self/schedstat`), and
 * how many gaps were over 100 ms. Run `npm run build` first.
 *
 *   node --import tsx bench/library-put-turn.ts [--before /work/ci-base] [--rounds 3]
 *     [--tools 20000] [--chars 600] [--import-in process|worker]
 * @module
 */
import { readFileSync } from 'node:fs'
import { request as httpRequest } from 'node:http'
import { mkdtemp, rm, writeFile } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { pathToFileURL } from 'node:url'
import { benchArgs, usageError, wholeNumber } from './bench-args.ts'
import {
  checkoutSides,
  loadAverage,
  markdownTable,
  medianAndEach,
  runSidesInChildren,
} from './lib/measure.ts'

const { values } = benchArgs(import.meta.url, {
  options: {
    before: { type: 'string' },
    rounds: { type: 'string', default: '3' },
    tools: { type: 'string', default: '20000' },
    chars: { type: 'string', default: '600' },
    'import-in': { type: 'string', default: 'process' },
    side: { type: 'string' },
  },
})
const rounds = wholeNumber(import.meta.url, '--rounds', values.rounds)
const count = wholeNumber(import.meta.url, '--tools', values.tools)
const chars = wholeNumber(import.meta.url, '--chars', values.chars)
const importIn = values['import-in']
if (importIn !== 'process' && importIn !== 'worker') {
  usageError(import.meta.url, `--import-in is process or worker, not "${importIn}"`)
}

interface Row {
  /** The PUT, first byte to answer, ms. */
  ms: number
  /** The longest gap between two turns of a 1 ms timer, wall ms, and when it began (ms in). */
  turn: number
  turnAt: number
  /** The most main-thread CPU in one such gap, ms. */
  turnCpu: number
  /** Gaps over 100 ms. */
  over100: number
}

/** The calling thread's CPU time so far, ns. */
const threadCpuNs = () => Number(readFileSync('/proc/thread-self/schedstat', 'utf8').split(' ')[0])

if (values.side !== undefined) {
  const dist = (path: string) => import(pathToFileURL(join(values.side!, 'dist', path)).href)
  const { parseConfig } = await dist('config/load-config.js')
  const { createMemoryLogger } = await dist('log.js')
  const { createComponents } = await dist('components.js')
  const { ToolselService } = await dist('service/toolsel-service.js')
  const { createApp } = await dist('server/app.js')
  const { listenApp } = await import('../test/helpers/listen-app.ts')
  const { SAMPLE_TOOLS } = await import('../test/helpers/sample-tools.ts')
  const indexDir = await mkdtemp(join(tmpdir(), 'toolsel-put-turn-'))
  try {
    const words = 'sends the weekly report to the team by friday and files it '
    const tools = Array.from({ length: count }, (_, at) => ({
      id: `big.tool_${at}`,
      name: `tool_${at}`,
      description: `${at} ${words.repeat(Math.ceil(chars / words.length))}`.slice(0, chars).trim(),
      parameters: {
        type: 'object',
        properties: { query: { type: 'string', description: `the query of tool ${at}` } },
        required: ['query'],
      },
    }))
    const body = Buffer.from(JSON.stringify(tools))
    const toolFile = join(indexDir, 'sample.json')
    await writeFile(toolFile, JSON.stringify(SAMPLE_TOOLS))
    const config = parseConfig({
      library: { default: toolFile, indexDir },
      server: { importWorkerMinChars: importIn === 'process' ? body.length + 1 : 0 },
    })
    const logger = createMemoryLogger()
    const service = new ToolselService(config, logger, createComponents(config, logger))
    await service.start()
    const server = await listenApp(createApp(service).fetch)
    await new Promise((resolve) => setTimeout(resolve, 200))
    const gaps: Array<{ wall: number; cpu: number; at: number }> = []
    let [lastWall, lastCpu] = [performance.now(), threadCpuNs()]
    const started = lastWall
    const ticker = setInterval(() => {
      const [wall, cpu] = [performance.now(), threadCpuNs()]
      gaps.push({ wall: wall - lastWall, cpu: (cpu - lastCpu) / 1e6, at: lastWall - started })
      ;[lastWall, lastCpu] = [wall, cpu]
    }, 1)
    // node:http writes the buffer as it is (fetch copied it: a turn of the client's own).
    const answer = await new Promise<{ toolCount?: number }>((resolve, reject) => {
      const request = httpRequest(`${server.url}/v1/libraries/big`, {
        method: 'PUT',
        headers: { 'content-type': 'application/json', 'content-length': body.length },
      })
      request.on('error', reject)
      request.on('response', async (response) => {
        const parts: Buffer[] = []
        for await (const part of response) parts.push(part as Buffer)
        resolve(JSON.parse(Buffer.concat(parts).toString()))
      })
      request.end(body)
    })
    const ms = performance.now() - started
    clearInterval(ticker)
    await server.close()
    if (answer.toolCount !== count) throw new Error(`unexpected answer ${JSON.stringify(answer)}`)
    const longest = gaps.reduce((one, other) => (other.wall > one.wall ? other : one))
    const row: Row = {
      ms,
      turn: longest.wall,
      turnAt: longest.at,
      turnCpu: Math.max(...gaps.map((gap) => gap.cpu)),
      over100: gaps.filter((gap) => gap.wall > 100).length,
    }
    if (process.env.TOOLSEL_BENCH_GAPS)
      for (const gap of [...gaps].sort((one, other) => other.cpu - one.cpu).slice(0, 8))
        console.error(JSON.stringify(gap))
    console.log(JSON.stringify(row))
  } finally {
    await rm(indexDir, { recursive: true, force: true })
  }
  process.exit(0)
} else {
  const sides = checkoutSides(import.meta.url, values.before)
  const loads = [loadAverage(1)]
  const results = await runSidesInChildren<Row>(import.meta.url, sides, rounds, [
    '--tools',
    `${count}`,
    '--chars',
    `${chars}`,
    '--import-in',
    importIn,
  ])
  loads.push(loadAverage(1))
  console.log(
    `PUT of ${count} tools with ${chars}-character descriptions, imported in the ${importIn}, ${rounds} rounds (a fresh process each, sides alternating), load ${loads.join(' -> ')}; ms, median (each)`,
  )
  console.log(
    markdownTable(
      [
        'side',
        'PUT ms',
        'longest turn',
        'its start, ms in',
        'most CPU in one turn',
        'turns > 100 ms',
      ],
      [...results].map(([name, rows]) => [
        name,
        medianAndEach(rows.map((row) => row.ms)),
        medianAndEach(rows.map((row) => row.turn)),
        medianAndEach(rows.map((row) => row.turnAt)),
        medianAndEach(rows.map((row) => row.turnCpu)),
        medianAndEach(rows.map((row) => row.over100)),
      ]),
    ).join('\n'),
  )
}
