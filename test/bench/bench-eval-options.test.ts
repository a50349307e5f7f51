/**
 * Evaluating a model checkpoint with `toolsel bench --planner llm:openai:…` against the
 * protocol-speaking fake server: per-query timeouts, bounded concurrency, resumable runs, and the
 * token/latency table in summary.md and report.html.
 */
import { mkdtemp, readFile, writeFile } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { main } from '../../src/main.ts'
import { toolbenchQueries } from '../helpers/toolbench-queries.ts'
import {
  completion,
  startFakeChatServer,
  type FakeChatServer,
  type RecordedRequest,
} from '../models/openai/fake-chat-server.ts'

const QUERIES = toolbenchQueries([
  ['Get the weather forecast for Oslo', 'Weather', 'forecast'],
  ['Send an email to Ann about lunch', 'Mail', 'send email'],
  ['Search flights from Paris to Rome (slow)', 'Flights', 'search flights'],
  ['Book a hotel room in Lisbon', 'Hotels', 'book hotel'],
  ['Get the stock price for ACME', 'Stocks', 'stock quote'],
  ['Play a song by Nina Simone', 'Music', 'play song'],
])

const FAST_MS = 150
const TIMEOUT_MS = 1000

let server: FakeChatServer
let dir: string
let queriesFile: string
const arrivals: Array<{ at: number; slow: boolean }> = []

/** The checkpoint under test: plans the instruction as one step; one query is too slow. */
function reply(request: RecordedRequest) {
  const messages = request.body.messages as Array<{ content: string }>
  const instruction = messages.at(-1)!.content
  const slow = instruction.includes('(slow)')
  arrivals.push({ at: performance.now(), slow })
  return {
    body: completion(JSON.stringify([instruction])),
    delayMs: slow ? 3 * TIMEOUT_MS : FAST_MS,
  }
}

beforeAll(async () => {
  server = await startFakeChatServer()
  dir = await mkdtemp(join(tmpdir(), 'toolsel-bench-eval-'))
  queriesFile = join(dir, 'queries.json')
  await writeFile(queriesFile, JSON.stringify(QUERIES))
})
afterAll(() => server?.close())

async function bench(out: string, extra: string[] = []) {
  const requestsBefore = server.requests.length
  server.reply(...Array.from({ length: 12 }, () => reply))
  let stdout = ''
  let stderr = ''
  const code = await main(
    [
      'bench',
      '--suite',
      'toolbench-g1',
      '--queries',
      queriesFile,
      '--planner',
      'llm:openai:checkpoint',
      '--selector',
      'top1',
      '--out',
      out,
      '--query-timeout',
      String(TIMEOUT_MS),
      '--concurrency',
      '3',
      ...extra,
    ],
    {
      stdout: (text) => (stdout += text),
      stderr: (text) => (stderr += text),
      env: { TOOLSEL_OPENAI_BASE_URL: server.baseUrl, TOOLSEL_LOG_LEVEL: 'silent' },
    },
  )
  const calls = server.requests.length - requestsBefore
  // Drop replies this run did not use, so the next run starts from a clean queue.
  while (server.requests.length - requestsBefore < 12) {
    const response = await fetch(`${server.baseUrl}/chat/completions`, {
      method: 'POST',
      body: JSON.stringify({ messages: [{ content: 'drain' }] }),
    })
    await response.text()
  }
  return { code, stdout, stderr, calls }
}

async function readReport(out: string) {
  return JSON.parse(await readFile(join(out, 'report.json'), 'utf8'))
}

describe('toolsel bench with an OpenAI-compatible checkpoint', () => {
  let out: string
  let report: any

  beforeAll(async () => {
    out = join(dir, 'full')
    arrivals.length = 0
    const run = await bench(out)
    expect(run.code, run.stderr).toBe(0)
    report = await readReport(out)
  }, 60_000)

  it('stops a query at --query-timeout and counts it as a TIMEOUT miss', () => {
    const { metrics, splits } = report.suites[0]
    expect(metrics.queries).toBe(6)
    expect(metrics.errors).toBe(1)
    expect(metrics.timeouts).toBe(1)
    const slow = splits[0].queries.find((query: { id: string }) => query.id === '3')
    expect(slow.error.code).toBe('TIMEOUT')
    expect(slow.timings.totalMs).toBeLessThan(3 * TIMEOUT_MS)
    expect(report.settings).toMatchObject({ queryTimeoutMs: TIMEOUT_MS, concurrency: 3 })
  })

  it('runs at most --concurrency queries at once, and does run them in parallel', () => {
    const fast = arrivals.filter((arrival) => !arrival.slow).slice(0, 5)
    const intervals = arrivals
      .slice(0, 6)
      .map(({ at, slow }) => [at, at + (slow ? TIMEOUT_MS : FAST_MS)] as const)
    const overlap = intervals.map(
      ([start]) => intervals.filter(([from, to]) => from <= start && start < to).length,
    )
    expect(fast.length).toBe(5)
    expect(Math.max(...overlap)).toBeLessThanOrEqual(3)
    expect(Math.max(...overlap)).toBeGreaterThanOrEqual(2)
  })

  it('reports tokens and latency per query in summary.md and a row in report.html', async () => {
    const { tokens } = report.suites[0].metrics
    // Five answered model calls of 42 prompt and 7 completion tokens (the fake server's usage).
    expect(tokens).toMatchObject({ input: 5 * 42, output: 5 * 7 })
    const summary = await readFile(join(out, 'summary.md'), 'utf8')
    expect(summary).toContain('## Model usage and latency')
    expect(summary).toMatch(
      /\| toolbench-g1 \| llm\(openai:checkpoint\) → top1 \| 6 \| 35\.0 \| 5\.8 \| [\d.]+ \| [\d.]+ \| [\d.]+ \| 1 \| 1 \| 0\/0 \|/,
    )
    const html = await readFile(join(out, 'report.html'), 'utf8')
    expect(html).toContain('<h2>Model usage and latency</h2>')
    expect(html).toMatch(
      /<tr class="suite"><td>toolbench-g1<\/td><td>llm\(openai:checkpoint\) → top1<\/td><td>6<\/td><td>35\.0<\/td>/,
    )
  })

  it('resumes an interrupted run: only unfinished queries call the model, same report', async () => {
    const progressFile = join(out, 'progress.jsonl')
    const lines = (await readFile(progressFile, 'utf8')).trim().split('\n')
    expect(lines).toHaveLength(1 + 6)
    // An interruption after three queries, the last line cut mid-write.
    await writeFile(progressFile, `${lines.slice(0, 4).join('\n')}\n${lines[4].slice(0, 20)}`)
    const resumed = await bench(out, ['--resume'])
    expect(resumed.code, resumed.stderr).toBe(0)
    expect(resumed.stderr).toContain('3 queries already scored')
    const kept = lines.slice(1, 4).map((line) => JSON.parse(line).query.id)
    expect(resumed.calls).toBe(6 - kept.length)
    const again = await readReport(out)
    expect(again.suites[0].metrics).toEqual(report.suites[0].metrics)
    expect(again.suites[0].splits[0].queries.map((query: any) => query.predicted)).toEqual(
      report.suites[0].splits[0].queries.map((query: any) => query.predicted),
    )
  }, 60_000)

  it('refuses to resume a run with other options, naming them', async () => {
    const run = await bench(out, ['--resume', '--k', '5'])
    expect(run.code).toBe(2)
    expect(run.stderr).toContain('settings.k')
    expect(run.stderr).toContain('config.retrieve')
    expect(run.calls).toBe(0)
  })
})
