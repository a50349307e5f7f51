/**
 * Resumable benchmark runs: each scored query is appended to `<out>/progress.jsonl` as soon as it
 * is done, after a first line that records what the run is (settings and config). `--resume`
 * reads the file back, refuses it when the run differs, and hands the finished queries to the
 * runner so only the rest are run. A line cut short by a crash is ignored.
 * @module
 */
import { appendFileSync } from 'node:fs'
import { mkdir, readFile, writeFile } from 'node:fs/promises'
import { join } from 'node:path'
import type { Config } from '../config/schema.ts'
import { ToolselError } from '../errors.ts'
import type { BenchRunSettings } from './bench-report.ts'
import type { CaseResult } from './run-split.ts'

export const PROGRESS_FILE = 'progress.jsonl'

export interface RunProgress {
  file: string
  /** Finished queries by split name, then `caseKey`. */
  completed: Map<string, Map<string, CaseResult>>
  /** Queries found in the file. */
  resumed: number
  append(result: CaseResult & { split: string; key: string }): void
}

/** What identifies a run: everything that changes results (not its name or concurrency). */
function runIdentity(settings: BenchRunSettings, config: Config) {
  const { name: _name, concurrency: _concurrency, ...rest } = settings
  return { settings: rest, config }
}

export async function openRunProgress(
  dir: string,
  settings: BenchRunSettings,
  config: Config,
  resume: boolean,
): Promise<RunProgress> {
  const file = join(dir, PROGRESS_FILE)
  const identity = runIdentity(settings, config)
  const completed = new Map<string, Map<string, CaseResult>>()
  let resumed = 0
  const existing = resume ? await readIfExists(file) : undefined
  if (existing !== undefined) {
    const [header, ...lines] = existing.split('\n')
    const previous = parseLine(header) as { run?: unknown } | undefined
    const differences = differingKeys(previous?.run, identity)
    if (differences.length > 0) {
      throw new ToolselError(
        'INVALID_INPUT',
        `--resume: ${file} belongs to a different run (differs in ${differences.join(', ')}); rerun without --resume or with the same options.`,
        { details: { file, differences } },
      )
    }
    for (const line of lines) {
      const record = parseLine(line) as (CaseResult & { split: string; key: string }) | undefined
      if (!record?.query || !record.scored) continue
      const split = completed.get(record.split) ?? new Map<string, CaseResult>()
      split.set(record.key, { query: record.query, scored: record.scored })
      completed.set(record.split, split)
      resumed += 1
    }
  } else {
    await mkdir(dir, { recursive: true })
    await writeFile(file, `${JSON.stringify({ run: identity })}\n`)
  }
  return {
    file,
    completed,
    resumed,
    append: (result) => appendFileSync(file, `${JSON.stringify(result)}\n`),
  }
}

async function readIfExists(file: string): Promise<string | undefined> {
  try {
    return await readFile(file, 'utf8')
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === 'ENOENT') return undefined
    throw error
  }
}

function parseLine(line: string | undefined): unknown {
  if (!line) return undefined
  try {
    return JSON.parse(line)
  } catch {
    return undefined
  }
}

/** Dotted paths (two levels deep) where the recorded run and this one differ. */
function differingKeys(previous: unknown, current: { settings: object; config: object }): string[] {
  if (typeof previous !== 'object' || previous === null) return ['the header (not a progress file)']
  const differences: string[] = []
  for (const [section, value] of Object.entries(current)) {
    const before = (previous as Record<string, unknown>)[section] ?? {}
    const keys = new Set([...Object.keys(value), ...Object.keys(before as object)])
    for (const key of keys) {
      const a = JSON.stringify((before as Record<string, unknown>)[key])
      const b = JSON.stringify((value as Record<string, unknown>)[key])
      if (a !== b) differences.push(`${section}.${key}`)
    }
  }
  return differences
}
