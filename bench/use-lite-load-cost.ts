/**
 * What loading the use-lite embedder (or `--embedder onnx:<dir>`) costs a process, as a dense
 * index build or load pays it (store/create-configured-embedder.ts: the weights, then one warm-up
 * forward pass unless the load ran one), what the first query embedded after it costs, and the
 * first documents after that (4 passes' worth: with use-lite `--threads N` > 0 they go to the
 * worker threads, which start then and take their first pass; a query never does). Since round 36 the load also probes the weights'
 * vectors (models/vector-probe.ts: the probe texts in one forward pass, once per process): run
 * it with `--root` on a checkout from before to see what the probe adds. Since round 37 a load
 * that probed is not warmed up again (`warmedUp`): `--before` on a round-36 checkout shows it;
 * since round 38 neither is an onnx load (its dimension probe is a pass). Each turn is a new
 * process (`--turns`); the two checkouts alternate when `--before` is given. "probe texts, warm"
 * is the probe's forward pass timed again after the load: what it costs once warm.
 *
 *   node --import tsx bench/use-lite-load-cost.ts [--turns 7] [--before /work/ci-base]
 *     [--embedder use-lite | onnx:<dir> | static:glove-100d] [--threads 0]
 * @module
 */
import { execFileSync } from 'node:child_process'
import { join, resolve } from 'node:path'
import { fileURLToPath, pathToFileURL } from 'node:url'
import { benchArgs } from './bench-args.ts'
import { loadAverage, medianAndEachMs } from './lib/measure.ts'

const { values: args } = benchArgs(import.meta.url, {
  options: {
    turns: { type: 'string', default: '7' },
    before: { type: 'string' },
    child: { type: 'string' },
    embedder: { type: 'string', default: 'use-lite' },
    threads: { type: 'string', default: '0' },
  },
})

/** 64 tool descriptions (4 use-lite passes), embedded as documents after the first query. */
const DOCUMENTS = Array.from(
  { length: 64 },
  (_, index) => `tool ${index}: sends a message of kind ${index % 7} to a contact list`,
)

interface Turn {
  load: number
  firstQuery: number
  /** The probe texts embedded once more after the load (what the probe's pass costs warm). */
  probePass: number
  /** DOCUMENTS embedded as documents, after the first query (the worker pool's first use). */
  firstDocuments: number
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
  const embedderId = resolveEmbedder(args.embedder)
  const threads = Number(args.threads)
  const dense = parseConfig({
    retrieve: {
      dense: { embedder: embedderId, ...(embedderId === 'use-lite' && { threads }) },
    },
  }).retrieve.dense
  const started = performance.now()
  const embedder = await createConfiguredEmbedder(dense)
  const load = performance.now() - started
  const query = performance.now()
  await embedder.embed(['send an email to the whole team about the launch'], { kind: 'query' })
  const firstQuery = performance.now() - query
  const documents = performance.now()
  await embedder.embed(DOCUMENTS, { kind: 'document' })
  const firstDocuments = performance.now() - documents
  const pass = performance.now()
  await embedder.embed(VECTOR_PROBE_TEXTS, { kind: 'query' })
  const turn: Turn = {
    load,
    firstQuery,
    probePass: performance.now() - pass,
    firstDocuments,
    fingerprint: embedder.fingerprint ?? null,
  }
  await (embedder as { close?: () => Promise<void> }).close?.()
  console.log(JSON.stringify(turn))
} else {
  const turns = Number(args.turns)
  if (!Number.isInteger(turns) || turns < 1) throw new Error('--turns takes a positive integer')
  const threads = Number(args.threads)
  if (!Number.isInteger(threads) || threads < 0 || threads > 16)
    throw new Error('--threads takes an integer from 0 to 16')
  const roots = [
    { name: 'this checkout', root: resolve(fileURLToPath(new URL('..', import.meta.url))) },
    ...(args.before !== undefined ? [{ name: 'before', root: resolve(args.before) }] : []),
  ]
  const results = new Map<string, Turn[]>(roots.map(({ name }) => [name, []]))
  for (let turn = 0; turn < turns; turn++) {
    for (const { name, root } of roots) {
      const out = execFileSync(
        process.execPath,
        [
          '--import',
          'tsx',
          fileURLToPath(import.meta.url),
          '--child',
          root,
          '--embedder',
          resolveEmbedder(args.embedder),
          '--threads',
          args.threads,
        ],
        { encoding: 'utf8', cwd: root },
      )
      results.get(name)!.push(JSON.parse(out.trim().split('\n').at(-1)!))
    }
  }
  console.log(
    `${args.embedder} load (threads ${args.threads}), ${turns} processes each, load ${loadAverage()}`,
  )
  for (const [name, list] of results) {
    console.log(`${name} (fingerprint ${list[0]!.fingerprint ?? 'none'}):`)
    console.log(`  load + warm-up: ${medianAndEachMs(list.map((turn) => turn.load))}`)
    console.log(`  first query:    ${medianAndEachMs(list.map((turn) => turn.firstQuery))}`)
    console.log(`  probe texts, warm: ${medianAndEachMs(list.map((turn) => turn.probePass))}`)
    console.log(`  first documents: ${medianAndEachMs(list.map((turn) => turn.firstDocuments))}`)
  }
}

/** `onnx:<dir>` with the directory made absolute (the children run in each checkout's root). */
function resolveEmbedder(id: string): string {
  return id.startsWith('onnx:') ? `onnx:${resolve(id.slice('onnx:'.length))}` : id
}
