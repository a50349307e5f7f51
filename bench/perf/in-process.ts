/** The in-process half of bench/perf.ts: build, memory, BM25 and selectTools latency for one size. */
import { readFile, stat, writeFile } from 'node:fs/promises'
import { join } from 'node:path'
import { defaultConfig } from '../../src/config/schema.ts'
import { ToolLibrary } from '../../src/library/tool-library.ts'
import { selectTools, type SelectToolsOptions } from '../../src/pipeline.ts'
import { RulePlanner } from '../../src/plan/rule-planner.ts'
import { loadDefaultModel } from '../../src/learn/learned-model.ts'
import { LearnedSelector } from '../../src/select/learned-selector.ts'
import type { Selector } from '../../src/contracts.ts'
import { loadIndexedLibrary } from '../../src/store/index-store.ts'
import { buildIndexedLibrary, saveIndexedLibrary } from '../../src/store/library-lifecycle.ts'
import { collectGarbage, rssMiB, summarize, timeCalls } from '../lib/measure.ts'
import type { LatencySummary } from '../lib/measure.ts'
import { buildSyntheticLibrary, loadBenchmarkQueries } from './synthetic-library.ts'

export interface InProcessResult {
  tools: number
  library: string
  withRealDescription: number
  buildSeconds: number
  rssBeforeBuildMiB: number
  rssAfterBuildMiB: number
  indexFileMiB: number
  stepQueries: number
  bm25: LatencySummary
  selectTools: LatencySummary
}

/**
 * Builds and saves a `size`-tool library under `work` (measureInProcess) for a benchmark that
 * loads it back the way `toolsel serve` holds it: its folder and the benchmark instructions.
 */
export async function savedBenchmarkLibrary(
  dataDir: string,
  size: number,
  work: string,
): Promise<{ dir: string; instructions: string[] }> {
  process.stderr.write(`Building ${size} tools…\n`)
  const built = await measureInProcess(dataDir, size, work)
  const instructions = JSON.parse(
    await readFile(join(work, 'instructions.json'), 'utf8'),
  ) as string[]
  return { dir: join(work, built.library), instructions }
}

/**
 * savedBenchmarkLibrary loaded back as `toolsel serve` holds it, with the options a
 * `selectTools` call over it takes (rule planner, its BM25, `selector`, the default k).
 */
export async function savedBenchmarkSelection(
  dataDir: string,
  size: number,
  work: string,
  selector: Selector,
): Promise<{ instructions: string[]; options: SelectToolsOptions }> {
  const { dir, instructions } = await savedBenchmarkLibrary(dataDir, size, work)
  const config = defaultConfig()
  const indexed = await loadIndexedLibrary(dir, config)
  const options = {
    library: indexed.library,
    planner: new RulePlanner(),
    retriever: indexed.retrievers.get('bm25')!,
    selector,
    k: config.retrieve.k,
  }
  return { instructions, options }
}

export async function measureInProcess(
  dataDir: string,
  size: number,
  out: string,
): Promise<InProcessResult> {
  const config = defaultConfig()
  const { tools, stats } = await buildSyntheticLibrary(dataDir, size)
  const instructions = await loadBenchmarkQueries(dataDir)
  const library = new ToolLibrary(`perf-${size}`, tools)
  collectGarbage()
  const rssBeforeBuildMiB = rssMiB()

  const started = performance.now()
  const indexed = await buildIndexedLibrary(library, config)
  const buildSeconds = (performance.now() - started) / 1000
  collectGarbage()
  const rssAfterBuildMiB = rssMiB()

  const planner = new RulePlanner()
  const steps = instructions.flatMap((instruction) => planner.split(instruction))
  const bm25 = indexed.retrievers.get('bm25')!
  const options = { k: config.retrieve.k }
  await timeCalls(steps, 1, (step) => bm25.retrieve(step, options)) // warm-up
  const bm25Samples = await timeCalls(steps, 3, (step) => bm25.retrieve(step, options))

  const pipeline = {
    library,
    planner,
    retriever: bm25,
    // The default embedded path: rule planner, BM25, the learned selector (which also retrieves
    // the whole instruction when the plan splits it).
    selector: new LearnedSelector(loadDefaultModel()),
    k: config.retrieve.k,
  }
  await timeCalls(instructions, 1, (instruction) => selectTools(instruction, pipeline))
  const selectSamples = await timeCalls(instructions, 3, (instruction) =>
    selectTools(instruction, pipeline),
  )

  const dir = await saveIndexedLibrary(out, indexed)
  await writeFile(join(out, 'instructions.json'), JSON.stringify(instructions))
  const indexFileMiB =
    ((await stat(join(dir, 'bm25.bin'))).size + (await stat(join(dir, 'tools.jsonl'))).size) /
    2 ** 20
  return {
    tools: stats.tools,
    library: library.name,
    withRealDescription: stats.withRealDescription,
    buildSeconds,
    rssBeforeBuildMiB,
    rssAfterBuildMiB,
    indexFileMiB,
    stepQueries: steps.length,
    bm25: summarize(bm25Samples),
    selectTools: summarize(selectSamples),
  }
}
