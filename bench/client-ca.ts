/**
 * The TypeScript client given `ca` (a private CA), call for call against another checkout's
 * client: milliseconds per `search` call one after another, TLS handshakes for them, and the wall
 * time and handshakes of calls sent together, through the clients' TLS test proxy
 * (test/helpers/https-proxy.ts: a throwaway CA made by openssl, a Node https server before a real
 * `toolsel serve`). Round 33 compares undici's fetch (this checkout) with round 32's node:https
 * fetch: `--other /work/ci-base/src/client/index.ts`. Each round makes new clients, so the
 * first call's handshake is in every round. Prints one row per round and the medians.
 *
 *   node --import tsx bench/client-ca.ts --other <checkout>/src/client/index.ts [--rounds 5] [--calls 100] [--together 8]
 * @module
 */
import { readFile } from 'node:fs/promises'
import { join, resolve } from 'node:path'
import { benchArgs, usageError, wholeNumber } from './bench-args.ts'
import { median } from './lib/measure.ts'

const { values } = benchArgs(import.meta.url, {
  options: {
    other: { type: 'string', default: '' },
    rounds: { type: 'string', default: '5' },
    calls: { type: 'string', default: '100' },
    together: { type: 'string', default: '8' },
  },
})
// What it measures only once the flags are good: --help and a bad flag answer without it.
const { ToolselClient } = await import('../src/client/index.ts')
type ToolselClient = import('../src/client/index.ts').ToolselClient
const { startHttpsProxy } = await import('../test/helpers/https-proxy.ts')
const counts = { rounds: 0, calls: 0, together: 0 }
for (const name of ['rounds', 'calls', 'together'] as const) {
  counts[name] = wholeNumber(import.meta.url, `--${name}`, values[name], 1, 10_000)
}
if (values.other === '')
  usageError(
    import.meta.url,
    '--other takes the client module to compare, e.g. <checkout>/src/client/index.ts.',
  )

type Client = Pick<ToolselClient, 'search'>
type MakeClient = (options: { baseUrl: string; ca: string }) => Client
const other = (await import(resolve(values.other))) as {
  ToolselClient: new (options: { baseUrl: string; ca: string }) => Client
}
const clients: Array<[string, MakeClient]> = [
  ['this checkout', (options) => new ToolselClient(options)],
  [values.other, (options) => new other.ToolselClient(options)],
]

const https = await startHttpsProxy()
try {
  const ca = await readFile(join(https.dir, 'ca.pem'), 'utf8')
  const baseUrl = `https://localhost:${https.port}`
  const query = { query: 'send an SMS', k: 3 }
  const rows: Record<
    string,
    Array<{ perCall: number; handshakes: number; together: number; togetherHandshakes: number }>
  > = {}
  for (let round = 0; round < counts.rounds; round += 1) {
    for (const [name, make] of round % 2 === 0 ? clients : [...clients].reverse()) {
      const client = make({ baseUrl, ca })
      let before = https.handshakes()
      const times: number[] = []
      for (let call = 0; call < counts.calls; call += 1) {
        const start = performance.now()
        await client.search(query)
        times.push(performance.now() - start)
      }
      const handshakes = https.handshakes() - before
      const fresh = make({ baseUrl, ca })
      before = https.handshakes()
      const start = performance.now()
      await Promise.all(Array.from({ length: counts.together }, () => fresh.search(query)))
      const together = performance.now() - start
      ;(rows[name] ??= []).push({
        perCall: median(times),
        handshakes,
        together,
        togetherHandshakes: https.handshakes() - before,
      })
      const row = rows[name].at(-1)!
      console.log(
        `round ${round + 1} ${name}: ${row.perCall.toFixed(2)} ms a call (median of ${counts.calls}), ${handshakes} handshakes; ${counts.together} together: ${together.toFixed(1)} ms, ${row.togetherHandshakes} handshakes`,
      )
    }
  }
  for (const [name, list] of Object.entries(rows)) {
    console.log(
      `median ${name}: ${median(list.map((row) => row.perCall)).toFixed(2)} ms a call, ${median(list.map((row) => row.handshakes))} handshakes for ${counts.calls} calls; ${counts.together} together ${median(list.map((row) => row.together)).toFixed(1)} ms, ${median(list.map((row) => row.togetherHandshakes))} handshakes`,
    )
  }
} finally {
  await https.close()
}
