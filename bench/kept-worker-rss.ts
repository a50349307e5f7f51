/**
 * What a kept examples-body thread holds while idle (bench/README "Round 51: what a kept
 * examples-body thread holds idle (ex55)"): in a fresh process per body size and round (the
 * built `dist/` of this checkout and of `--before DIR`), `checkOnWorker` (server/examples-body.ts)
 * checks one body of `--bytes` (6 MB and 30 MB) with the heap limit of the 32 MiB body limit; the
 * process's resident memory is read once the thread has idled `--idle-ms` (1,000) and again once
 * it was ended (a thread's idle timer, kept-workers.ts: 10 s): the difference is what the idle
 * thread held. Run `npm run build` first.
 *
 *   node --import tsx bench/kept-worker-rss.ts [--before /work/ci-base] [--rounds 3]
 *     [--bytes 6000000,30000000]
 * @module
 */
import { join } from 'node:path'
import { setTimeout as sleep } from 'node:timers/promises'
import { pathToFileURL } from 'node:url'
import { benchArgs, usageError, wholeNumber } from './bench-args.ts'
import {
  checkoutSides,
  loadAverage,
  markdownTable,
  medianAndEach,
  runSidesInChildren,
} from './lib/measure.ts'
import { examplesBodyText } from './lib/examples-body-text.ts'

const { values } = benchArgs(import.meta.url, {
  options: {
    before: { type: 'string' },
    bytes: { type: 'string', default: '6000000,30000000' },
    rounds: { type: 'string', default: '3' },
    'idle-ms': { type: 'string', default: '1000' },
    side: { type: 'string' },
  },
})
const rounds = wholeNumber(import.meta.url, '--rounds', values.rounds)
const idleMs = wholeNumber(import.meta.url, '--idle-ms', values['idle-ms'])
const sizes = values.bytes.split(',').map((size) => Number(size))
if (sizes.some((size) => !Number.isSafeInteger(size) || size < 1))
  usageError(import.meta.url, '--bytes takes whole numbers of bytes, comma-separated.')

interface Row {
  /** MiB: the process's RSS with the thread idle, and once it was ended. */
  idle: number
  ended: number
  /** Whether the thread was still idle (kept) when `idle` was read. */
  kept: boolean
}

const mib = () => process.memoryUsage().rss / 2 ** 20

if (values.side !== undefined) {
  const dist = (path: string) => import(pathToFileURL(join(values.side!, 'dist', path)).href)
  const { checkOnWorker, examplesHeapLimitMb } = await dist('server/examples-body.js')
  const { idleWorkerThreads, KEPT_WORKER_IDLE_MS } = await dist('kept-workers.js')
  const module = pathToFileURL(join(values.side, 'dist/server/examples-body-worker.js'))
  const [bytes] = sizes
  const text = examplesBodyText(bytes, 140)
  const reply = await checkOnWorker(
    { bytes: new Uint8Array(Buffer.from(text)), maxValues: 10_000_000, maxExamples: 1_000_000 },
    new AbortController().signal,
    { limitMb: examplesHeapLimitMb(32 * 2 ** 20), workers: 1 },
  )
  if (!('packed' in reply)) throw new Error(`unexpected reply ${JSON.stringify(reply)}`)
  await sleep(idleMs)
  const idle = mib()
  const kept = idleWorkerThreads(module).length > 0
  await sleep(KEPT_WORKER_IDLE_MS + 1000 - idleMs)
  const row: Row = { idle, ended: mib(), kept }
  console.log(JSON.stringify(row))
  process.exit(0)
} else {
  const sides = checkoutSides(import.meta.url, values.before)
  const loads = [loadAverage(1)]
  const table: Array<Array<string | number>> = []
  for (const bytes of sizes) {
    const results = await runSidesInChildren<Row>(import.meta.url, sides, rounds, [
      '--bytes',
      `${bytes}`,
      '--idle-ms',
      `${idleMs}`,
    ])
    for (const [name, rows] of results) {
      table.push([
        name,
        bytes,
        rows.map((row) => (row.kept ? 'kept' : 'ended')).join(', '),
        medianAndEach(rows.map((row) => row.idle)),
        medianAndEach(rows.map((row) => row.ended)),
        medianAndEach(rows.map((row) => row.idle - row.ended)),
      ])
    }
  }
  loads.push(loadAverage(1))
  console.log(
    `One body checked, RSS ${idleMs} ms later and once the thread ended; ${rounds} rounds (a fresh process each), load ${loads.join(' -> ')}; MiB, median (each)`,
  )
  console.log(
    markdownTable(
      [
        'side',
        'body bytes',
        'thread after the body',
        'RSS, thread idle',
        'RSS, thread ended',
        'held by the idle thread',
      ],
      table,
    ).join('\n'),
  )
}
