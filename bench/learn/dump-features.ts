/**
 * Research helper: writes the candidate features of every training and benchmark query to a JSON
 * cache (default /tmp/toolsel-learn-features.json) so that model experiments need not re-run
 * retrieval. Usage: npx tsx bench/learn/dump-features.ts [--data ../shared/data] [--out file]
 */
import { writeFileSync } from 'node:fs'
import { benchArgs } from '../bench-args.ts'
import type { Tool } from '../../src/library/tool.ts'
import type { QueryRow, SetDump } from './feature-dump.ts'

const { values } = benchArgs(import.meta.url, {
  options: {
    data: { type: 'string', default: '../shared/data' },
    out: { type: 'string', default: '/tmp/toolsel-learn-features.json' },
    k: { type: 'string', default: '15' },
    tau: { type: 'string', default: '3' },
    kwhole: { type: 'string', default: '15' },
  },
})
// What it measures only once the flags are good: --help and a bad flag answer without it.
const { parseConfig } = await import('../../src/config/load-config.ts')
const { RulePlanner } = await import('../../src/plan/rule-planner.ts')
const { Bm25Retriever } = await import('../../src/retrieve/bm25/bm25-retriever.ts')
const { expandHeadVerb } = await import('../../src/retrieve/bm25/query-expansion.ts')
const { bm25Settings } = await import('../../src/store/kinds/bm25-kind.ts')
const { resolveSuites } = await import('../../src/bench/suites/suite-registry.ts')
const { extractCandidateFeatures } = await import('../../src/learn/candidate-features.ts')
const { extractStepFeatures } = await import('./step-features.ts')
const { loadToolLensTrain, loadToolPlannerG3 } = await import('../../src/learn/training-data.ts')
const dataDir = values.data!
const k = Number(values.k)
const config = parseConfig({})
const planner = new RulePlanner()

function dumpSet(
  name: string,
  kind: 'train' | 'eval',
  tools: Tool[],
  cases: Array<{ id: string; instruction: string; gold: string[] }>,
  keyOf: (id: string) => string,
): SetDump {
  const retriever = Bm25Retriever.build(tools, bm25Settings(config))
  const byId = new Map(tools.map((tool) => [tool.id, tool]))
  const search = (text: string) => retriever.search(expandHeadVerb(text), k, Number(values.tau))
  const queries: QueryRow[] = []
  for (const benchCase of cases) {
    const goldTools = benchCase.gold.flatMap((id) => byId.get(id) ?? [])
    const local =
      goldTools.length > 0 ? Bm25Retriever.build(goldTools, bm25Settings(config)) : undefined
    const clauses = planner.split(benchCase.instruction)
    const whole = retriever.search(
      expandHeadVerb(benchCase.instruction),
      Number(values.kwhole),
      Number(values.tau),
    )
    const steps = clauses.map((text) => ({ text, candidates: search(text) }))
    const features = extractCandidateFeatures({
      instruction: benchCase.instruction,
      whole,
      steps,
      tool: (id) => byId.get(id)!,
    })
    queries.push({
      id: benchCase.id,
      gold: [...new Set(benchCase.gold.map(keyOf))],
      steps: clauses.length,
      ids: features.map((f) => keyOf(f.id)),
      x: features.map((f) => f.values.map((v) => Math.round(v * 1e5) / 1e5)),
      stepX: extractStepFeatures(steps),
      stepY: steps.map((step) =>
        local && local.search(expandHeadVerb(step.text), 1, 3).length > 0 ? 1 : 0,
      ),
      ranks: features.map((f) =>
        steps.map((step) => step.candidates.findIndex((c) => c.id === f.id)),
      ),
      wholeTop: whole[0] ? keyOf(whole[0].id) : null,
      wholeTopScore: whole[0]?.score ?? 0,
    })
  }
  console.error(`${name}: ${queries.length} queries`)
  return { name, kind, queries }
}

/**
 * Single-need queries made from multi-tool training queries: each request clause on its own,
 * labelled with the gold tool it matches best (BM25 over the gold tools only, above tau).
 */
function singleClauseCases(
  tools: Tool[],
  cases: Array<{ id: string; instruction: string; gold: string[] }>,
) {
  const byId = new Map(tools.map((tool) => [tool.id, tool]))
  const out: Array<{ id: string; instruction: string; gold: string[] }> = []
  for (const benchCase of cases) {
    const goldTools = benchCase.gold.map((id) => byId.get(id)!)
    const local = Bm25Retriever.build(goldTools, bm25Settings(config))
    planner.split(benchCase.instruction).forEach((clause, index) => {
      const [first, second] = local.search(expandHeadVerb(clause), 2, 3)
      if (first === undefined || (second !== undefined && second.score >= first.score * 0.8)) return
      out.push({ id: `${benchCase.id}#${index}`, instruction: clause, gold: [first.id] })
    })
  }
  return out
}

const sets: SetDump[] = []
for (const load of [loadToolPlannerG3, loadToolLensTrain]) {
  const set = await load(dataDir)
  sets.push(dumpSet(set.name, 'train', set.tools, set.cases, (id) => id))
  if (set.name === 'toolplanner-g3') {
    const single = singleClauseCases(set.tools, set.cases)
    sets.push(dumpSet(`${set.name}-single`, 'train', set.tools, single, (id) => id))
  }
}
for (const [mode, suiteName] of [
  ['union', 'all'],
  ['corpus', 'toolbench-g3'],
] as const) {
  for (const suite of resolveSuites(suiteName)) {
    const { splits } = await suite.load({ dataDir, libraryMode: mode, unmappable: 'drop' })
    for (const split of splits) {
      const keys = new Map(split.tools.map((tool) => [tool.id, split.matchKey?.(tool) ?? tool.id]))
      const name = mode === 'corpus' ? `${split.name}#corpus` : split.name
      sets.push(dumpSet(name, 'eval', split.tools, split.cases, (id) => keys.get(id) ?? id))
    }
  }
}
writeFileSync(values.out!, JSON.stringify(sets))
console.error(`wrote ${values.out}`)
