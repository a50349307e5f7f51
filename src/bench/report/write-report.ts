/**
 * Writes a run's three files: report.json (everything), summary.md and report.html.
 * @module
 */
import { mkdir, writeFile } from 'node:fs/promises'
import { join } from 'node:path'
import type { BenchReport } from '../bench-report.ts'
import { renderHtml } from './render-html.ts'
import { renderSummary } from './render-summary.ts'

export const REPORT_FILES = {
  json: 'report.json',
  summary: 'summary.md',
  html: 'report.html',
} as const

/** Writes the files into `dir` (created if needed) and returns their paths. */
export async function writeReport(report: BenchReport, dir: string): Promise<string[]> {
  await mkdir(dir, { recursive: true })
  const files: Array<[string, string]> = [
    [REPORT_FILES.json, stringifyReport(report)],
    [REPORT_FILES.summary, renderSummary(report)],
    [REPORT_FILES.html, renderHtml(report)],
  ]
  for (const [name, text] of files) await writeFile(join(dir, name), text)
  return files.map(([name]) => join(dir, name))
}

/**
 * JSON with one line per query record: indented where there is structure to read, compact where
 * there are thousands of records (a line per query also keeps diffs of committed baselines small).
 */
export function stringifyReport(report: BenchReport): string {
  const lists: unknown[][] = []
  const text = JSON.stringify(
    report,
    (key, value: unknown) => {
      if (key !== 'queries' || !Array.isArray(value)) return value
      lists.push(value)
      return `\u0000queries:${lists.length - 1}`
    },
    1,
  )
  const expanded = text.replace(/"\\u0000queries:(\d+)"/g, (_match, index: string) => {
    const lines = lists[Number(index)].map((query) => JSON.stringify(query))
    return lines.length === 0 ? '[]' : `[\n${lines.join(',\n')}\n]`
  })
  return `${expanded}\n`
}
