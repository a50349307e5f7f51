/**
 * What kind of wrong answer each suite's misses are (#10, round 20), from a `toolsel bench` run's
 * per-query gold and predicted ids only (no query text is read): % of the suite's queries that are
 *
 * - `exact`: the gold set;
 * - `missing`: a strict subset of the gold set (too few tools, every one right; none: `none`);
 * - `extra`: a strict superset (every gold tool and more);
 * - `swap`: as many tools as gold, one or more wrong (one-tool gold: the one pick is wrong);
 * - `short-wrong` / `long-wrong`: fewer / more tools than gold, one or more wrong.
 *
 *   npx tsx bench/miss-classes.ts <run dir or report.json>
 * @module
 */
import { readFile } from 'node:fs/promises'
import { benchArgs, usageError } from './bench-args.ts'

interface Report {
  suites: Array<{
    name: string
    splits?: Array<{ queries?: Array<{ gold: string[]; predicted: Array<string | null> }> }>
  }>
}

const CLASSES = ['exact', 'none', 'missing', 'extra', 'swap', 'short-wrong', 'long-wrong'] as const
type MissClass = (typeof CLASSES)[number]

/** The class of one answer (`predicted` may hold nulls: steps that got no tool). */
export function missClass(gold: readonly string[], predicted: ReadonlyArray<string | null>) {
  const want = new Set(gold)
  const got = new Set(predicted.filter((id): id is string => id !== null))
  const wrong = [...got].filter((id) => !want.has(id)).length
  const left = [...want].filter((id) => !got.has(id)).length
  if (wrong === 0 && left === 0) return 'exact'
  if (got.size === 0) return 'none'
  if (wrong === 0) return 'missing'
  if (left === 0) return 'extra'
  if (got.size === want.size) return 'swap'
  return got.size < want.size ? 'short-wrong' : 'long-wrong'
}

const { positionals: args } = benchArgs(import.meta.url, { options: {}, allowPositionals: true })
const path = args[0]
if (path === undefined) {
  console.error('Usage: npx tsx bench/miss-classes.ts <run dir or report.json>')
  process.exit(2)
}
const file = path.endsWith('.json') ? path : `${path.replace(/\/$/, '')}/report.json`
const report = JSON.parse(await readFile(file, 'utf8')) as Report
console.log(`| suite | queries | ${CLASSES.join(' | ')} |`)
console.log(`| --- | ---: | ${CLASSES.map(() => '---:').join(' | ')} |`)
for (const suite of report.suites) {
  const counts = new Map<MissClass, number>(CLASSES.map((name) => [name, 0]))
  let queries = 0
  for (const split of suite.splits ?? []) {
    for (const query of split.queries ?? []) {
      const kind = missClass(query.gold, query.predicted)
      counts.set(kind, counts.get(kind)! + 1)
      queries += 1
    }
  }
  const cells = CLASSES.map((name) => ((100 * counts.get(name)!) / Math.max(1, queries)).toFixed(1))
  console.log(`| ${suite.name} | ${queries} | ${cells.join(' | ')} |`)
}
