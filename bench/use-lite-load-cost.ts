/**
 * What loading the use-lite embedder costs a process, as a dense index build or load pays it
 * (store/create-configured-embedder.ts: the weights, then one warm-up forward pass), and what
 * the first query embedded after it costs. Since round 36 the load also probes the weights'
 * vectors (models/vector-probe.ts: the probe texts in one forward pass, once per process): run
 * it with `--root` on a checkout from before to see what the probe adds. Since round 37 a load
 * that probed is not warmed up again (`warmedUp`): `--before` on a round-36 checkout shows it. Each turn is a new
 * process (`--turns`); the two checkouts alternate when `--before` is given. "probe texts, warm"
 * is the probe's forward pass timed again after the load: what it costs once warm.
 *
 *   node --import tsx bench/use-lite-load-cost.ts [--turns 7] [--before /work/ci-base]
 * @module
 */
import { execFileSync } from 'node:child_process'
import { loadavg } from 'node:os'
import { join, resolve } from 'node:path'
import { fileURLToPath, pathToFileURL } from 'node:url'
import { benchArgs } from './bench-args.ts'

const { values: args } = benchArgs(import.meta.url, {
  options: {
    turns: { type: 'string', default: '7' },
    before: { type: 'string' },
    child: { type: 'string' },
  },
})

interface Turn {
  load: number
  firstQuery: number
  /** The probe texts embedded once more after the load (what the probe's pass costs warm). */
  probePass: number
  fingerprint: string | null
}

if (args.child !== undefined) {
  const root = args.child
  const module = (file: string) => import(pathToFileURL(join(root, file)).href)
  const [{ createConfiguredEmbedder }, { parseConfig }, { VECTOR_PROBE_TEXTS }] = await Promise.all(
    [
      module('src/store/create-configured-embedder.ts'),
      module('src/config/load-config.ts'),
      module('src/models/vector-probe.ts'),
    ],
  )
  const dense = parseConfig({ retrieve: { dense: { embedder: 'use-lite' } } }).retrieve.dense
  const started = performance.now()
  const embedder = await createConfiguredEmbedder(dense)
  const load = performance.now() - started
  const query = performance.now()
  await embedder.embed(['send an email to the whole team about the launch'], { kind: 'query' })
  const firstQuery = performance.now() - query
  const pass = performance.now()
  await embedder.embed(VECTOR_PROBE_TEXTS, { kind: 'query' })
  const turn: Turn = {
    load,
    firstQuery,
    probePass: performance.now() - pass,
    fingerprint: embedder.fingerprint ?? null,
  }
  console.log(JSON.stringify(turn))
} else {
  const turns = Number(args.turns)
  if (!Number.isInteger(turns) || turns < 1) throw new Error('--turns takes a positive integer')
  const roots = [
    { name: 'this checkout', root: resolve(fileURLToPath(new URL('..', import.meta.url))) },
    ...(args.before !== undefined ? [{ name: 'before', root: resolve(args.before) }] : []),
  ]
  const results = new Map<string, Turn[]>(roots.map(({ name }) => [name, []]))
  for (let turn = 0; turn < turns; turn++) {
    for (const { name, root } of roots) {
      const out = execFileSync(
        process.execPath,
        ['--import', 'tsx', fileURLToPath(import.meta.url), '--child', root],
        { encoding: 'utf8', cwd: root },
      )
      results.get(name)!.push(JSON.parse(out.trim().split('\n').at(-1)!))
    }
  }
  const median = (values: number[]) => [...values].sort((a, b) => a - b)[values.length >> 1]!
  const ms = (values: number[]) =>
    `median ${median(values).toFixed(1)} ms (${values.map((value) => value.toFixed(1)).join(', ')})`
  console.log(
    `use-lite load, ${turns} processes each, load ${loadavg()
      .map((value) => value.toFixed(2))
      .join(' ')}`,
  )
  for (const [name, list] of results) {
    console.log(`${name} (fingerprint ${list[0]!.fingerprint ?? 'none'}):`)
    console.log(`  load + warm-up: ${ms(list.map((turn) => turn.load))}`)
    console.log(`  first query:    ${ms(list.map((turn) => turn.firstQuery))}`)
    console.log(`  probe texts, warm: ${ms(list.map((turn) => turn.probePass))}`)
  }
}
