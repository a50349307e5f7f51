/**
 * BM25 at scale, side by side in one process (not a test): builds and saves a library of real
 * ToolBench API names (bench/perf/synthetic-library.ts), loads it back, then scores the 1,339
 * rule-planned steps of the StableToolBench instructions with MaxScore pruning and exhaustively,
 * checking that both give the same answers.
 *
 *   node --expose-gc --import tsx bench/bm25-scale.ts [tools=100000] [data dir=../shared/data]
 *
 * Prints build, save and load time, the JS heap the loaded library adds, and p50 / p90 / p99 of
 * each query's fastest of 5 runs (the minimum filters out other processes on a shared machine).
 * @module
 */
import { mkdtemp, rm } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import type { Bm25Retriever } from '../src/retrieve/bm25/bm25-retriever.ts'
import { benchArgs, usageError } from './bench-args.ts'

const { positionals: args } = benchArgs(import.meta.url, { options: {}, allowPositionals: true })
// What it measures only once the flags are good: --help and a bad flag answer without it.
const { defaultConfig } = await import('../src/config/schema.ts')
const { ToolLibrary } = await import('../src/library/tool-library.ts')
const { RulePlanner } = await import('../src/plan/rule-planner.ts')
const { buildIndexedLibrary, loadIndexedLibrary, saveIndexedLibrary } =
  await import('../src/store/library-lifecycle.ts')
const { buildSyntheticLibrary, loadBenchmarkQueries } = await import('./perf/synthetic-library.ts')
const size = Number(args[0] ?? 100_000)
if (!Number.isFinite(size) || size < 1)
  usageError(import.meta.url, `<size> (first argument) must be a positive number, got "${args[0]}"`)
const dataDir = args[1] ?? join('..', 'shared', 'data')
const gc = (globalThis as { gc?: () => void }).gc ?? (() => undefined)
const seconds = (since: number) => ((performance.now() - since) / 1000).toFixed(2)
const mib = (bytes: number) => (bytes / 2 ** 20).toFixed(0)

const config = defaultConfig()
const out = await mkdtemp(join(tmpdir(), 'toolsel-bm25-scale-'))
try {
  let dir: string
  {
    const { tools } = await buildSyntheticLibrary(dataDir, size)
    let started = performance.now()
    const indexed = await buildIndexedLibrary(new ToolLibrary(`scale-${size}`, tools), config)
    console.log(`${size} tools: build ${seconds(started)} s`)
    started = performance.now()
    dir = await saveIndexedLibrary(out, indexed)
    console.log(`save ${seconds(started)} s`)
  }
  gc()
  const heapBefore = process.memoryUsage().heapUsed
  const started = performance.now()
  const loaded = await loadIndexedLibrary(dir, config)
  const loadSeconds = seconds(started)
  gc()
  const memory = process.memoryUsage()
  console.log(
    `load ${loadSeconds} s; JS heap +${mib(memory.heapUsed - heapBefore)} MiB, RSS ${mib(memory.rss)} MiB`,
  )

  const steps = (await loadBenchmarkQueries(dataDir)).flatMap((instruction) =>
    new RulePlanner().split(instruction),
  )
  const pruned = loaded.retrievers.get('bm25') as Bm25Retriever
  const exhaustive = pruned.withoutPruning()
  const { k, bm25 } = config.retrieve
  const fastest = { pruned: new Map<string, number>(), exhaustive: new Map<string, number>() }
  for (let round = 0; round < 5; round += 1) {
    for (const step of steps) {
      for (const [name, retriever] of [
        ['pruned', pruned],
        ['exhaustive', exhaustive],
      ] as const) {
        const start = performance.now()
        retriever.search(step, k, bm25.tau)
        const ms = performance.now() - start
        fastest[name].set(step, Math.min(fastest[name].get(step) ?? Infinity, ms))
      }
      if (round === 0) {
        const a = JSON.stringify(pruned.search(step, k, bm25.tau))
        if (a !== JSON.stringify(exhaustive.search(step, k, bm25.tau)))
          throw new Error(`MaxScore and exhaustive scoring differ on: ${step}`)
      }
    }
  }
  const quantile = (values: number[], q: number) =>
    [...values].sort((a, b) => a - b)[Math.floor(q * (values.length - 1))].toFixed(3)
  for (const name of ['pruned', 'exhaustive'] as const) {
    const values = [...fastest[name].values()]
    console.log(
      `${name}: p50 ${quantile(values, 0.5)} / p90 ${quantile(values, 0.9)} / p99 ${quantile(values, 0.99)} ms (${values.length} distinct steps, same answers)`,
    )
  }
} finally {
  await rm(out, { recursive: true, force: true })
}
