/**
 * The Python client's milliseconds per `select` call against a local `toolsel serve` (the demo
 * library, API keys on): a new connection for every call (`pool_size=0`, what the client did
 * before keep-alive) against reused connections (the default) and AsyncToolselClient (reused,
 * one call awaited at a time), call for call in turns, in one run. Starts the service, then runs
 * bench/python-client-latency.py (which prints the table: one row per round, each mode's median,
 * and the medians of the rounds). Needs python3 3.9+.
 *
 *   node --import tsx bench/python-client.ts [--rounds 5] [--calls 200]
 * @module
 */
import { spawnSync } from 'node:child_process'
import { join } from 'node:path'
import { benchArgs, wholeNumber } from './bench-args.ts'

const { values } = benchArgs(import.meta.url, {
  options: {
    rounds: { type: 'string', default: '5' },
    calls: { type: 'string', default: '200' },
  },
})
// What it measures only once the flags are good: --help and a bad flag answer without it.
const { ROOT, startServe } = await import('../test/helpers/start-serve.ts')
for (const name of ['rounds', 'calls'] as const) {
  wholeNumber(import.meta.url, `--${name}`, values[name])
}

const READ_KEY = 'bench-read-key-0123456789'
const server = await startServe([], {
  env: { TOOLSEL_ADMIN_KEY: 'bench-admin-key-0123456789', TOOLSEL_READ_KEYS: READ_KEY },
})
try {
  const run = spawnSync(
    'python3',
    [
      join(ROOT, 'bench/python-client-latency.py'),
      ...[
        '--url',
        server.url,
        '--key',
        READ_KEY,
        '--rounds',
        values.rounds,
        '--calls',
        values.calls,
      ],
    ],
    { stdio: 'inherit' },
  )
  if (run.error) throw run.error
  process.exitCode = run.status ?? 1
} finally {
  await server.stop()
}
