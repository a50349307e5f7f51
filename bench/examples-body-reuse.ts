/**
 * What each large usage-examples body costs its worker thread when bodies come one after the
 * other (bench/README "Round 50: the examples-body thread kept for the next body (ex54)"):
 * `checkOnWorker` (server/examples-body.ts) from the built `dist/` of this checkout and of
 * `--before DIR`, `--bodies` (3) bodies of `--bytes` (6 MB) in one process, a fresh process per
 * side and round, sides alternating. Per body: wall milliseconds from the call to the reply (a
 * fresh thread's start and module load included where the thread is new) and the process's CPU.
 * Run `npm run build` first.
 *
 *   node --import tsx bench/examples-body-reuse.ts --before /work/ci-base [--bodies 3]
 *     [--bytes 6000000] [--rounds 3]
 * @module
 */
import { join } from 'node:path'
import { pathToFileURL } from 'node:url'
import { benchArgs, wholeNumber } from './bench-args.ts'
import {
  checkoutSides,
  cpuMs,
  loadAverage,
  markdownTable,
  median,
  runSidesInChildren,
} from './lib/measure.ts'
import { examplesBodyText } from './lib/examples-body-text.ts'

const { values } = benchArgs(import.meta.url, {
  options: {
    before: { type: 'string' },
    bodies: { type: 'string', default: '3' },
    bytes: { type: 'string', default: '6000000' },
    rounds: { type: 'string', default: '3' },
    side: { type: 'string' },
  },
})
const bodies = wholeNumber(import.meta.url, '--bodies', values.bodies)
const bytes = wholeNumber(import.meta.url, '--bytes', values.bytes)
const rounds = wholeNumber(import.meta.url, '--rounds', values.rounds)

if (values.side !== undefined) {
  const module = (await import(
    pathToFileURL(join(values.side, 'dist/server/examples-body.js')).href
  )) as {
    checkOnWorker: (...args: unknown[]) => Promise<unknown>
    examplesHeapLimitMb?: (bytes: number) => number
  }
  const text = examplesBodyText(bytes, 40)
  const rows: Array<{ wall: number; cpu: number }> = []
  for (let body = 0; body < bodies; body += 1) {
    const request = {
      bytes: new Uint8Array(Buffer.from(text)),
      maxValues: 10_000_000,
      maxExamples: 1_000_000,
    }
    const signal = new AbortController().signal
    const [wall, cpu] = [performance.now(), cpuMs()]
    // Round 49's checkOnWorker(request, signal, limitMb?) or round 50's (…, { limitMb, workers }).
    await (module.examplesHeapLimitMb
      ? module.checkOnWorker(request, signal, {
          limitMb: module.examplesHeapLimitMb(32 * 2 ** 20),
          workers: 1,
        })
      : module.checkOnWorker(request, signal))
    rows.push({ wall: performance.now() - wall, cpu: cpuMs() - cpu })
  }
  console.log(JSON.stringify(rows))
  process.exit(0)
} else {
  const sides = checkoutSides(import.meta.url, values.before)
  const loads = [loadAverage(1)]
  const times = await runSidesInChildren<Array<{ wall: number; cpu: number }>>(
    import.meta.url,
    sides,
    rounds,
    ['--bodies', `${bodies}`, '--bytes', `${bytes}`],
  )
  loads.push(loadAverage(1))
  console.log(
    `${bodies} bodies of ${bytes} bytes one after the other, ${rounds} rounds (a fresh process each), load ${loads.join(' -> ')}`,
  )
  const cell = (name: string, body: number, key: 'wall' | 'cpu') => {
    const each = times.get(name)!.map((row) => row[body][key])
    return `${median(each).toFixed(0)} (${each.map((value) => value.toFixed(0)).join(', ')})`
  }
  const header = ['side', 'ms']
  for (let body = 0; body < bodies; body += 1) header.push(`body ${body + 1}`)
  const rows = sides.flatMap(([name]) =>
    (['wall', 'cpu'] as const).map((key) => [
      name,
      key,
      ...Array.from({ length: bodies }, (_, body) => cell(name, body, key)),
    ]),
  )
  console.log(markdownTable(header, rows, '---').join('\n'))
}
