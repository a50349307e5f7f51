/**
 * Why a model's planned answer loses to its own `--planner none` answer on a suite: aggregate
 * counts only (no query id, text or prediction is printed). Runs the suite twice through the
 * bench machinery (rule planner, then `--planner none`) with `explain`, and for the single-tool
 * queries that one planner answers right and the other wrong, compares the two picks' features
 * in the PLANNED run: mean feature values, and each feature's share of the logit difference
 * (weight × standardised difference) between the planned pick and the tool the none-planner
 * picked (the gold). A feature with a large negative share is what pushes the right tool down.
 *
 *   npx tsx bench/plan-gap.ts --model /tmp/ld.json [--suite taskbench-huggingface] [--data ../shared/data]
 * @module
 */
import { benchArgs, usageError } from './bench-args.ts'
import type { BenchRunSettings } from '../src/bench/bench-report.ts'
import type { CaseRunner } from '../src/bench/case-runner.ts'
import type { StepResult } from '../src/pipeline.ts'

const { values } = benchArgs(import.meta.url, {
  options: {
    model: { type: 'string' },
    suite: { type: 'string', default: 'taskbench-huggingface' },
    data: { type: 'string', default: '../shared/data' },
  },
})
// What it measures only once the flags are good: --help and a bad flag answer without it.
const { createComponents } = await import('../src/components.ts')
const { loadConfig } = await import('../src/config/load-config.ts')
const { readLearnedModelSync } = await import('../src/learn/learned-model.ts')
const { createLogger } = await import('../src/log.ts')
const { ToolselService } = await import('../src/service/toolsel-service.ts')
const { runBench } = await import('../src/bench/run-bench.ts')
const { caseComponents } = await import('../src/bench/case-runner.ts')
if (!values.model) usageError(import.meta.url, '--model <file> is required')
const model = readLearnedModelSync(values.model)
const { features: names } = model
const { weights, scale } = model.model

interface Answer {
  predicted: string[]
  gold: string[]
  steps: StepResult[]
}

async function run(planner: 'rule' | 'none'): Promise<Map<string, Answer>> {
  const config = await loadConfig({
    flags: {
      'bench.dataDir': values.data,
      'plan.planner': planner,
      'select.selector': `learned:${values.model}`,
      'log.level': 'warn',
    },
  })
  const logger = createLogger('warn', (line) => process.stderr.write(`${line}\n`))
  const service = new ToolselService(config, logger, createComponents(config, logger))
  const answers = new Map<string, Answer>()
  let index = 0
  const request = {
    retriever: config.retrieve.retriever,
    k: config.retrieve.k,
    planner,
    selector: config.select.selector,
    explain: true,
  }
  const runner: CaseRunner = {
    components: (indexed) => caseComponents(service, request, indexed),
    async run(instruction, gold, indexed) {
      const result = await service.select({ ...request, instruction }, undefined, indexed)
      const predicted = result.tools.map((tool) => tool.id)
      answers.set(String(index++), { predicted, gold: [...gold], steps: result.steps })
      return {
        predicted,
        steps: result.steps,
        timings: result.timings,
        fallbacks: result.components.fallbacks,
        usage: result.usage,
      }
    },
  }
  const settings: BenchRunSettings = {
    suite: values.suite!,
    name: `plan-gap-${planner}`,
    dataDir: values.data!,
    libraryMode: 'union',
    unmappable: 'drop',
    planner,
    selector: config.select.selector,
    retriever: config.retrieve.retriever,
    k: config.retrieve.k,
    tau: config.retrieve.bm25.tau,
    examples: 'none',
    compact: true,
    concurrency: 1,
  } as BenchRunSettings
  await runBench({ settings, config, runner })
  return answers
}

const right = (answer: Answer) =>
  answer.predicted.length === answer.gold.length &&
  answer.gold.every((id) => answer.predicted.includes(id))

/** A candidate's explained features in a run (the first step that lists it). */
function featuresOf(answer: Answer, id: string): Record<string, number> | undefined {
  for (const step of answer.steps)
    for (const candidate of step.candidates ?? [])
      if (candidate.id === id && candidate.features) return candidate.features
  return undefined
}

const planned = await run('rule')
const none = await run('none')
const table: Record<string, { queries: number; planned: number; none: number }> = {}
const add = (key: string, a: Answer, b: Answer) => {
  const row = (table[key] ??= { queries: 0, planned: 0, none: 0 })
  row.queries += 1
  row.planned += right(a) ? 1 : 0
  row.none += right(b) ? 1 : 0
}
const losses: Array<{ pick: Record<string, number>; gold: Record<string, number> }> = []
let goldMissing = 0
// One-tool queries where the plan kept two tools: is the gold among them, and the more probable?
const twoPicks = { queries: 0, goldIn: 0, goldFirst: 0, noneRight: 0, otherP: [] as number[] }
const probabilityOf = (answer: Answer, id: string) => featuresOf(answer, id)?.probability ?? 0
for (const [key, a] of planned) {
  const b = none.get(key)!
  const clauses = a.steps.filter((step) => step.text !== undefined).length
  const single = a.gold.length === 1
  add(
    `${single ? 'one-tool' : 'multi-tool'} gold, ${Math.min(clauses, 3)}${clauses >= 3 ? '+' : ''} request(s), ${a.predicted.length} picked`,
    a,
    b,
  )
  if (single && a.predicted.length === 2) {
    twoPicks.queries += 1
    twoPicks.noneRight += right(b) ? 1 : 0
    if (a.predicted.includes(a.gold[0])) {
      twoPicks.goldIn += 1
      const other = a.predicted.find((id) => id !== a.gold[0])!
      const p = probabilityOf(a, other)
      twoPicks.otherP.push(Math.round(p * 100) / 100)
      if (probabilityOf(a, a.gold[0]) > probabilityOf(a, other)) twoPicks.goldFirst += 1
    }
  }
  if (single && right(b) && !right(a) && a.predicted.length === 1) {
    const pick = featuresOf(a, a.predicted[0])
    const gold = featuresOf(a, a.gold[0])
    if (pick && gold) losses.push({ pick, gold })
    else goldMissing += 1
  }
}
console.log(
  `suite ${values.suite}, model ${values.model}: queries by gold size, requests the selector saw (clauses + the whole instruction), tools picked`,
)
console.log('| group | queries | planned right | none right |')
console.log('| --- | ---: | ---: | ---: |')
for (const [key, row] of Object.entries(table).sort())
  console.log(`| ${key} | ${row.queries} | ${row.planned} | ${row.none} |`)
const total = [...planned.values()]
console.log(
  `| all | ${total.length} | ${total.filter(right).length} | ${[...none.values()].filter(right).length} |`,
)
console.log(
  `\nOne-tool queries where the plan kept two tools: ${twoPicks.queries}; the gold among them ${twoPicks.goldIn}, the more probable of the two ${twoPicks.goldFirst}; none-planner right ${twoPicks.noneRight}; the other pick's probability, sorted: ${twoPicks.otherP.sort((x, y) => x - y).join(' ')}`,
)
console.log(
  `One-tool queries the none-planner gets right and the plan gets wrong with one tool: ${losses.length} (+${goldMissing} whose gold the plan never retrieved)`,
)
console.log(
  'Planned run: mean feature value of the wrong pick and of the gold, and the mean logit share of (gold − pick)',
)
console.log('| feature | pick | gold | logit share |')
console.log('| --- | ---: | ---: | ---: |')
const shares = names.map((name, index) => {
  const mean = (key: 'pick' | 'gold') =>
    losses.reduce((sum, loss) => sum + (loss[key][name] ?? 0), 0) / Math.max(1, losses.length)
  const share = ((mean('gold') - mean('pick')) * weights[index]) / scale[index]
  return { name, pick: mean('pick'), gold: mean('gold'), share }
})
for (const row of [...shares].sort((x, y) => x.share - y.share))
  if (Math.abs(row.share) >= 0.05)
    console.log(
      `| ${row.name} | ${row.pick.toFixed(3)} | ${row.gold.toFixed(3)} | ${row.share.toFixed(2)} |`,
    )
