import { spawnSync } from 'node:child_process'
import { existsSync } from 'node:fs'
import { mkdtemp, rm, stat } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { pathToFileURL } from 'node:url'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import type { BenchReport } from '../../../src/bench/bench-report.ts'
import {
  CHART_TITLES,
  renderHtml,
  renderSummary,
  writeReport,
} from '../../../src/bench/report/index.ts'
import { FIXTURES, runFixtureBench } from '../fixture-bench.ts'

const CHROMIUM = '/usr/bin/chromium'
const CHROMIUM_FLAGS = [
  '--headless',
  '--no-sandbox',
  '--disable-gpu',
  '--disable-background-networking',
  '--disable-component-update',
  '--disable-sync',
  '--no-first-run',
  '--hide-scrollbars',
  '--enable-logging=stderr',
  '--v=0',
]

let report: BenchReport
let dir: string
beforeAll(async () => {
  // Two suites, so the charts compare suites (gold sizes 1 and 2).
  const g2 = await runFixtureBench()
  const tf = await runFixtureBench({
    suite: 'gorilla-tensorflow',
    queries: `${FIXTURES}/gorilla/tensorflowhub_eval.jsonl`,
    tools: `${FIXTURES}/gorilla/tensorflowhub_api.jsonl`,
  })
  report = { ...g2, suites: [...g2.suites, ...tf.suites], skipped: [...g2.skipped, ...tf.skipped] }
  dir = await mkdtemp(join(tmpdir(), 'toolsel-report-'))
  await writeReport(report, dir)
})
afterAll(async () => {
  await rm(dir, { recursive: true, force: true })
})

describe('renderHtml', () => {
  it('is one self-contained page with the four SVG charts', () => {
    const html = renderHtml(report)
    expect(html.match(/<svg /g)).toHaveLength(4)
    for (const title of Object.values(CHART_TITLES))
      expect(html).toContain(`<title>${title}</title>`)
    expect(html).not.toMatch(/<script|<link|<img|@import|url\(|src=/i)
    expect(
      html.match(/https?:\/\/[^"]*/g)?.every((url) => url === 'http://www.w3.org/2000/svg'),
    ).toBe(true)
  })

  it('escapes names in the page', () => {
    const html = renderHtml({ ...report, settings: { ...report.settings, name: '<b>&"x"' } })
    expect(html).toContain('Benchmark: &#60;b&#62;&#38;&#34;x&#34;')
  })
})

describe('renderSummary', () => {
  it('has the results table, the gold-size table and the skipped splits', () => {
    const summary = renderSummary(report)
    expect(summary).toMatch(
      /\| suite \| queries \| EM \| EM filtered \| P \| R \| F1 \| pool recall \| R@5 \| R@15 \| planner-reward F1 \| p50 ms \| p95 ms \|/,
    )
    expect(summary).toMatch(/\| \*\*gorilla-tensorflow\*\* \| 2 \|/)
    expect(summary).toMatch(/\| \*\*mean of suites\*\* \| 4 \|/)
    expect(summary).toMatch(/## Exact match by gold-set size/)
    expect(summary).toMatch(/- toolbench-g2\/G2_category: not found: /)
    expect(summary).toMatch(/- \*\*gorilla-tensorflow\/tensorflowhub_eval\*\*: 2 of 2 records;/)
  })

  it('a --limit run says how many queries of the split it ran (was: "2 of 2 records" for 1 run)', async () => {
    const limited = await runFixtureBench({
      suite: 'gorilla-tensorflow',
      queries: `${FIXTURES}/gorilla/tensorflowhub_eval.jsonl`,
      tools: `${FIXTURES}/gorilla/tensorflowhub_api.jsonl`,
      limit: 1,
    })
    expect(renderSummary(limited)).toMatch(
      /- \*\*gorilla-tensorflow\/tensorflowhub_eval\*\*: first 1 of 2 queries run \(--limit\), from 2 records;/,
    )
    expect(renderHtml(limited)).toContain(
      '<b>gorilla-tensorflow/tensorflowhub_eval</b> (first 1 of 2 queries run (--limit), from 2 records)',
    )
  })
})

describe('renderSummary with --examples train', () => {
  it('says that the libraries had usage examples, and where they came from', async () => {
    // Before: only report.json's settings said so; summary.md of a run with examples read like
    // one without.
    const withExamples = await runFixtureBench({
      suite: 'gorilla-tensorflow',
      queries: `${FIXTURES}/gorilla/tensorflowhub_eval.jsonl`,
      tools: `${FIXTURES}/gorilla/tensorflowhub_api.jsonl`,
      examples: 'train',
    })
    const summary = renderSummary(withExamples)
    expect(summary).toContain(' · usage examples: train (per split below)')
    expect(summary).toMatch(
      /; usage examples: 5-fold by query: each query's library holds the other folds' queries and gold \(\d+(-\d+)? in each fold's library\)/,
    )
    expect(renderSummary(report)).not.toContain('usage examples')
  })
})

describe.skipIf(!existsSync(CHROMIUM))(
  'report.html in headless Chromium (skipped: no /usr/bin/chromium)',
  () => {
    const run = (args: string[]) =>
      spawnSync(CHROMIUM, [...CHROMIUM_FLAGS, `--user-data-dir=${join(dir, 'profile')}`, ...args], {
        encoding: 'utf8',
        timeout: 30_000,
      })

    it('renders: the DOM holds the four titled charts and the page logs no console error', () => {
      const result = run(['--dump-dom', pathToFileURL(join(dir, 'report.html')).href])
      expect(result.status).toBe(0)
      const dom = result.stdout
      expect(dom.match(/<svg /g)).toHaveLength(4)
      for (const title of Object.values(CHART_TITLES)) expect(dom).toContain(title)
      expect(dom).toContain('<table>')
      expect(result.stderr).not.toMatch(/CONSOLE.*(error|Uncaught)|Uncaught/i)
    })

    it('renders to a screenshot', async () => {
      const png = join(dir, 'report.png')
      const result = run([
        '--window-size=1200,1600',
        `--screenshot=${png}`,
        pathToFileURL(join(dir, 'report.html')).href,
      ])
      expect(result.status).toBe(0)
      expect((await stat(png)).size).toBeGreaterThan(20_000)
    })
  },
)
