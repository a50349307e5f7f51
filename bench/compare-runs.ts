/**
 * Compares `toolsel bench` runs query by query: exact match per suite for each run, the mean of
 * the suites without `demo` (the benchmark's "mean of the 9 suites"), and, against the first run,
 * how many queries each later run gained and lost per suite with a two-sided sign test, so that a
 * difference of a point can be told from noise. Reads each run's report.json (compact or not).
 *
 *   npx tsx bench/compare-runs.ts <run dir or report.json> <run> [<run> …]
 * @module
 */
import { readFile } from 'node:fs/promises'
import { benchArgs, usageError } from './bench-args.ts'
import { markdownTable } from './lib/measure.ts'

interface Report {
  suites: Array<{
    name: string
    metrics?: { exactMatch: number }
    splits?: Array<{
      name: string
      queries?: Array<{ id: string; metrics: { exactMatch: number } }>
    }>
  }>
}

async function readReport(path: string): Promise<Report> {
  const file = path.endsWith('.json') ? path : `${path.replace(/\/$/, '')}/report.json`
  return JSON.parse(await readFile(file, 'utf8')) as Report
}

/** Per-query exact match, keyed by suite, split and query id. */
function perQuery(report: Report): Map<string, Map<string, number>> {
  const out = new Map<string, Map<string, number>>()
  for (const suite of report.suites) {
    const queries = new Map<string, number>()
    for (const split of suite.splits ?? []) {
      for (const query of split.queries ?? []) {
        queries.set(`${split.name}\u0000${query.id}`, query.metrics.exactMatch)
      }
    }
    out.set(suite.name, queries)
  }
  return out
}

// Piped into `head`: stop quietly when the reader goes away.
process.stdout.on('error', (error: NodeJS.ErrnoException) => {
  if (error.code === 'EPIPE') process.exit(0)
  throw error
})

const { positionals: args } = benchArgs(import.meta.url, { options: {}, allowPositionals: true })
const paths = args
if (paths.length < 2) {
  console.error('Usage: npx tsx bench/compare-runs.ts <run> <run> [<run> …]')
  process.exit(2)
}
// The statistics only once the arguments are good: --help answers without them.
const { signTestP } = await import('../src/bench/metrics/sign-test.ts')
const reports = await Promise.all(paths.map(readReport))
const suites = [...new Set(reports.flatMap((report) => report.suites.map((suite) => suite.name)))]
const em = (report: Report, suite: string) =>
  report.suites.find((entry) => entry.name === suite)?.metrics?.exactMatch
const pct = (value: number | undefined) => (value === undefined ? '–' : (100 * value).toFixed(1))

const header = ['suite', ...paths.map((path, index) => `run ${index + 1}`)]
const rows = suites.map((suite) => [suite, ...reports.map((report) => pct(em(report, suite)))])
const meanOf = (report: Report) => {
  const values = suites
    .filter((suite) => suite !== 'demo')
    .map((suite) => em(report, suite))
    .filter((value): value is number => value !== undefined)
  return values.length === 0
    ? undefined
    : values.reduce((sum, value) => sum + value, 0) / values.length
}
rows.push([
  'mean without demo',
  ...reports.map((report) => {
    const mean = meanOf(report)
    return mean === undefined ? '–' : (100 * mean).toFixed(2)
  }),
])
console.log(markdownTable(header, rows, '---').join('\n'))
paths.forEach((path, index) => console.log(`run ${index + 1}: ${path}`))

const base = perQuery(reports[0])
reports.slice(1).forEach((report, index) => {
  console.log(`\nrun ${index + 2} against run 1 (queries gained / lost, two-sided sign test):`)
  for (const [suite, queries] of perQuery(report)) {
    const before = base.get(suite)
    if (before === undefined || queries.size === 0) continue
    let gained = 0
    let lost = 0
    for (const [key, value] of queries) {
      const old = before.get(key)
      if (old === undefined) continue
      if (value > old) gained += 1
      else if (value < old) lost += 1
    }
    console.log(
      `  ${suite.padEnd(24)} +${String(gained).padStart(3)} −${String(lost).padStart(3)}  p = ${signTestP(gained, lost).toFixed(2)}`,
    )
  }
})
