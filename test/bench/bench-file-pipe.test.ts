import { spawn, execFileSync } from 'node:child_process'
import { mkdtemp, readFile, rm, writeFile } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { runCli } from '../cli/run-cli.ts'

const tools = [
  { name: 'get_weather', description: 'Get the current weather for a city', parameters: {} },
  { name: 'send_email', description: 'Send an email to a person', parameters: {} },
]
const queries = [
  { instruction: 'What is the weather in Paris?', tools, gold: ['get_weather'] },
  { instruction: 'Email Ann that I am late', tools, gold: ['send_email'] },
]

let dir: string
beforeAll(async () => {
  dir = await mkdtemp(join(tmpdir(), 'toolsel-bench-pipe-'))
})
afterAll(() => rm(dir, { recursive: true, force: true }))

describe('toolsel bench --suite file:<pipe>', () => {
  it('reads a FIFO once: its writer writes the queries, the run scores them all', async () => {
    const source = join(dir, 'queries.jsonl')
    await writeFile(source, queries.map((query) => JSON.stringify(query)).join('\n') + '\n')
    const fifo = join(dir, 'queries.fifo')
    execFileSync('mkfifo', [fifo])
    // A real writer in another process, as `cat queries.jsonl > fifo` in a script: it blocks
    // until the pipe is opened for reading, writes and closes (a second open gets no writer).
    const writer = spawn('sh', ['-c', 'cat "$1" > "$2"', 'sh', source, fifo], { stdio: 'ignore' })
    const wrote = new Promise<number | null>((resolve) => writer.once('exit', resolve))
    try {
      const out = join(dir, 'run')
      const result = await runCli(['bench', '--suite', `file:${fifo}`, '--out', out, '--json'])
      // Was: exit 2, "Cannot read benchmark file …: it is not a regular file" (and the check
      // before the read opened and closed the pipe, so its text was gone).
      expect(result.code, result.stderr).toBe(0)
      expect(await wrote).toBe(0)
      const report = JSON.parse(await readFile(join(out, 'report.json'), 'utf8'))
      expect(
        report.suites.map((suite: { metrics: { queries: number } }) => suite.metrics.queries),
      ).toEqual([2])
      expect(JSON.parse(result.stdout).suites).toHaveLength(1)
    } finally {
      writer.kill()
    }
  })
})

describe('toolsel bench --examples file:<pipe>', () => {
  it('reads a FIFO of usage examples once for a suite of several splits', async () => {
    await writeFile(join(dir, 'tools.json'), JSON.stringify(tools))
    // Two categories: two splits over one library, each given the file's examples.
    const suite = join(dir, 'two-splits.jsonl')
    await writeFile(
      suite,
      [
        { instruction: 'What is the weather in Paris?', gold: ['get_weather'], category: 'a' },
        { instruction: 'Email Ann that I am late', gold: ['send_email'], category: 'b' },
      ]
        .map((query) => JSON.stringify({ ...query, library: 'tools.json' }))
        .join('\n') + '\n',
    )
    const source = join(dir, 'train.jsonl')
    await writeFile(
      source,
      [
        { instruction: 'will it rain in Rome', tools: ['get_weather'] },
        { instruction: 'mail the invoice to Bob', tools: ['send_email'] },
      ]
        .map((example) => JSON.stringify(example))
        .join('\n') + '\n',
    )
    const fifo = join(dir, 'train.fifo')
    execFileSync('mkfifo', [fifo])
    const writer = spawn('sh', ['-c', 'cat "$1" > "$2"', 'sh', source, fifo], { stdio: 'ignore' })
    const wrote = new Promise<number | null>((resolve) => writer.once('exit', resolve))
    try {
      const out = join(dir, 'run-examples')
      const run = runCli([
        'bench',
        '--suite',
        `file:${suite}`,
        '--examples',
        `file:${fifo}`,
        '--out',
        out,
      ])
      // Was: the check before the run opened and closed the pipe (its writer gone, the run's
      // own open then waited for a writer for ever); and the file was read once per split.
      const result = await Promise.race([
        run,
        new Promise<undefined>((resolve) => setTimeout(resolve, 60_000)),
      ])
      expect(result, 'bench did not finish in 60 s').toBeDefined()
      expect(result!.code, result!.stderr).toBe(0)
      expect(await wrote).toBe(0)
      const report = JSON.parse(await readFile(join(out, 'report.json'), 'utf8')) as {
        suites: Array<{ splits: Array<{ name: string; examples: { counts: number[] } }> }>
      }
      expect(report.suites[0].splits.map((split) => [split.name, split.examples.counts])).toEqual([
        ['file:two-splits/a', [2]],
        ['file:two-splits/b', [2]],
      ])
    } finally {
      writer.kill()
      // A run still waiting on the pipe's open: a writer that ends it.
      spawn('sh', ['-c', ': > "$1"', 'sh', fifo], { stdio: 'ignore' })
    }
  }, 90_000)
})
