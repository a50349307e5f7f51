/**
 * `GET /metrics` under a real `toolsel serve --workers 2` when a worker's part of a scrape goes
 * wrong: its metrics fail, never come, or cannot be summed; or the primary answers nothing. Each
 * scrape ends (200 with the workers that answered, `toolsel_workers_scraped` counting them; a
 * 500 `{error:{code,message}}` when the primary does not answer), and no process dies: the same
 * two workers and the primary serve on. The faults are made by the test-only
 * TOOLSEL_TEST_METRICS_FAULT_FILE (cluster-metrics.ts), read at each scrape by the real processes.
 * Before cluster-metrics.ts handled them, a failing worker died of the unhandled rejection (and was
 * replaced), and metrics that could not be summed stopped the primary.
 *
 * The same server (one start: these tests are slow) serves an index whose tool ids hold a bidi
 * override: the load warning of it is logged once, not once per worker, and again by the worker
 * that replaces the one that logged it (a new process), not by the other. A PUT the other worker
 * fails to apply (the test-only TOOLSEL_TEST_SYNC_FAULT) is logged with the PUT's request id.
 */
import { readFileSync } from 'node:fs'
import { mkdtemp, rm, writeFile } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { afterAll, describe, expect, it } from 'vitest'
import { LOAD_WARNINGS_ENV } from '../../src/config/env-vars.ts'
import { defaultConfig } from '../../src/config/schema.ts'
import { ToolLibrary } from '../../src/library/tool-library.ts'
import { buildIndexedLibrary, saveIndexedLibrary } from '../../src/store/library-lifecycle.ts'
import { callFresh as call } from '../helpers/fresh-request.ts'
import { startServe, workerPids, type RunningServe } from '../helpers/start-serve.ts'

let server: RunningServe | undefined
let root: string | undefined

afterAll(async () => {
  await server?.stop()
  if (root) await rm(root, { recursive: true, force: true })
})

describe('toolsel serve --workers 2: a scrape that goes wrong', () => {
  it('always ends: 200 with the workers that answered, or a 500 error; no process dies', async () => {
    root = await mkdtemp(join(tmpdir(), 'toolsel-metrics-fault-'))
    const faultFile = join(root, 'fault')
    await writeFile(faultFile, '')
    const indexDir = join(root, 'indexes')
    const odd = new ToolLibrary(
      'odd',
      ['ok', 'rtl\u202etxt.exe'].map((id) => ({
        id,
        name: id,
        description: `The ${id} tool`,
        parameters: { type: 'object' },
      })),
    )
    await saveIndexedLibrary(indexDir, await buildIndexedLibrary(odd, defaultConfig()))
    server = await startServe(['--workers', '2'], {
      env: { TOOLSEL_TEST_METRICS_FAULT_FILE: faultFile, TOOLSEL_TEST_SYNC_FAULT: 'faulty' },
      indexDir,
    })
    const { url, logs, child } = server
    const workerSeries = (text: string) =>
      text
        .split('\n')
        .filter((line) => line.startsWith('toolsel_worker'))
        .join('\n')
    /**
     * Two scrapes at once on fresh connections, each timed: the cluster hands them to the two
     * workers in turn (one each), so a wait the fault makes (2 s, 5 s) is waited once, not twice.
     */
    const scrapeTwice = () =>
      Promise.all(
        [0, 1].map(async () => {
          const started = Date.now()
          const { status, text } = await call(url, 'GET', '/metrics')
          return { status, text, ms: Date.now() - started }
        }),
      )

    for (const scrape of await scrapeTwice()) {
      expect(scrape.status, scrape.text).toBe(200)
      expect(workerSeries(scrape.text)).toBe(
        'toolsel_workers 2\ntoolsel_worker_restarts_total 0\ntoolsel_workers_scraped 2',
      )
    }

    // Worker 2's metrics fail (reject), never come (hang), or cannot be summed (malformed): the
    // scrape answers the others'. A failure is answered at once; a worker that never answers is
    // waited for 2 s.
    for (const fault of ['reject', 'malformed', 'hang']) {
      await writeFile(faultFile, fault)
      for (const scrape of await scrapeTwice()) {
        expect(scrape.status, `${fault}: ${scrape.text}`).toBe(200)
        expect(workerSeries(scrape.text), fault).toBe(
          'toolsel_workers 2\ntoolsel_worker_restarts_total 0\ntoolsel_workers_scraped 1',
        )
        expect(scrape.text, fault).toMatch(/^toolsel_ready 1$/m)
        if (fault === 'hang') expect(scrape.ms).toBeGreaterThanOrEqual(1900)
        else expect(scrape.ms, fault).toBeLessThan(1900)
      }
    }

    // The primary answers no worker: the scrape ends after 5 s with a 500 and a JSON error.
    await writeFile(faultFile, 'primary-silent')
    for (const scrape of await scrapeTwice()) {
      expect(scrape.status, scrape.text).toBe(500)
      expect(JSON.parse(scrape.text)).toEqual({
        error: {
          code: 'INTERNAL',
          message:
            "The primary process did not answer with the workers' metrics within 5 s; the next scrape tries again.",
        },
      })
      expect(scrape.ms).toBeGreaterThanOrEqual(4900)
    }

    // All well again: every worker answers, none was replaced, the primary is the same process.
    await writeFile(faultFile, '')
    for (const scrape of await scrapeTwice()) {
      expect(scrape.status, scrape.text).toBe(200)
      expect(workerSeries(scrape.text)).toBe(
        'toolsel_workers 2\ntoolsel_worker_restarts_total 0\ntoolsel_workers_scraped 2',
      )
    }
    expect(child.exitCode).toBeNull()
    expect(logs()).not.toMatch(/exited|Unhandled|unhandled/)
  }, 120_000)

  it('logs the load warning of odd tool ids once, not once per worker', () => {
    const warnings = server!.logs().match(WARNING)
    expect(warnings, server!.logs()).toHaveLength(1)
  })

  // The other worker fails to apply a PUT of library "faulty" (TOOLSEL_TEST_SYNC_FAULT): the
  // ERROR line of the worker that took the PUT names its request. Before round 37 it had none.
  it('names the request whose library change another worker could not apply', async () => {
    const { url, logs } = server!
    const tools = [{ name: 'lookup_parcel', description: 'Track a parcel by its tracking number.' }]
    const put = await call(url, 'PUT', '/v1/libraries/faulty', JSON.stringify(tools), {
      'x-request-id': 'sync-fault-put',
    })
    expect(put.status, put.text).toBe(201)
    const notApplied = () =>
      logs()
        .split('\n')
        .filter((line) => line.includes('not applied'))
    const deadline = Date.now() + 10_000
    while (notApplied().length === 0 && Date.now() < deadline)
      await new Promise((resolve) => setTimeout(resolve, 50))
    const lines = notApplied()
    expect(lines, logs()).toHaveLength(1)
    expect(lines[0]).toMatch(
      /ERROR Library change not applied: worker \d+, library "faulty": test fault: TOOLSEL_TEST_SYNC_FAULT names it/,
    )
    expect(lines[0]).toContain('"requestId":"sync-fault-put"')
  })

  it('gives the warning role to the worker that replaces the one holding it', async () => {
    const { child, logs } = server!
    const [warner, other] = workerPids(child.pid!).sort(
      (one, two) => Number(warnsLoad(two)) - Number(warnsLoad(one)),
    )
    expect([warnsLoad(warner!), warnsLoad(other!)]).toEqual([true, false])
    const readyBefore = readyLines(logs())
    process.kill(warner!, 'SIGKILL')
    const deadline = Date.now() + 60_000
    while (readyLines(logs()) <= readyBefore) {
      if (Date.now() > deadline) throw new Error(`no worker after the kill:\n${logs()}`)
      await new Promise((resolve) => setTimeout(resolve, 50))
    }
    const now = workerPids(child.pid!)
    expect(now).toHaveLength(2)
    expect(now).toContain(other)
    const replacement = now.find((pid) => pid !== other)!
    // The replacement warns (a new process, the same library), the other worker still does not.
    expect(warnsLoad(replacement)).toBe(true)
    expect(logs().match(WARNING), logs()).toHaveLength(2)
  }, 90_000)
})

const WARNING = / WARN Library "odd" \([^)]*\): 1 tool id\(s\) hold/g

const readyLines = (logs: string) => (logs.match(/Ready: libraries/g) ?? []).length

/** Whether the worker `pid` was started with the load-warning role (its environment, Linux). */
function warnsLoad(pid: number): boolean {
  return readFileSync(`/proc/${pid}/environ`, 'utf8').split('\0').includes(`${LOAD_WARNINGS_ENV}=1`)
}
