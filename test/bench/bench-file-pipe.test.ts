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
