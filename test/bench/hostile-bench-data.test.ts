/**
 * `toolsel bench` over data from elsewhere (`--data <dir>`, `--queries`, `--tools`: benchmark
 * archives are downloaded): a FIFO in place of a query or tool file, names holding terminal
 * escape sequences and HTML. Run as child processes: a FIFO without a writer hung the run.
 */
import { execFileSync } from 'node:child_process'
import { mkdtemp, readFile, rm, writeFile } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { runToolselChild } from '../helpers/run-toolsel-child.ts'

let root: string

beforeAll(async () => {
  root = await mkdtemp(join(tmpdir(), 'toolsel-hostile-bench-'))
})

afterAll(async () => {
  await rm(root, { recursive: true, force: true })
})

const bench = (...argv: string[]) =>
  runToolselChild(['bench', '--suite', 'demo', '--limit', '2', ...argv], { timeoutMs: 30_000 })

describe('hostile benchmark data', () => {
  it('a FIFO as the query file or the tool file is refused at once, unread', async () => {
    // Before: the open waited for a writer; the run hung until killed.
    const fifo = join(root, 'fifo.jsonl')
    execFileSync('mkfifo', [fifo])
    const queries = await bench('--queries', fifo, '--out', join(root, 'out-q'))
    expect(queries.signal).toBeNull()
    expect(queries.stderr).toContain(
      `Cannot read benchmark file "${fifo}": it is not a regular file (a device, pipe, socket or directory); nothing was read`,
    )
    expect(queries.code).toBe(2)
    const tools = await bench('--tools', fifo, '--out', join(root, 'out-t'))
    expect(tools.signal).toBeNull()
    expect(tools.stderr).toContain(
      `Cannot read tool file "${fifo}": it is not a regular file (a device, pipe, socket or directory); nothing was read`,
    )
    // The same exit as the query file (was 1: a tool file that cannot be read was IMPORT_FAILED).
    expect(tools.code).toBe(2)
  }, 90_000)

  it('escape sequences in a file name reach neither the terminal nor summary.md; the HTML escapes it', async () => {
    // Before: the progress lines and the summary printed ESC]0;…BEL (retitles the terminal).
    const name = '<img src=x onerror=alert(1)>\u001b]0;pwned\u0007\u001b[31mRED'
    const queries = join(root, `${name}.jsonl`)
    const tools = [
      { name: 'send_mail', description: 'Send an email message to a recipient' },
      { name: 'get_weather', description: 'Get the weather forecast for a city' },
    ]
    await writeFile(
      queries,
      ['email my boss the report', 'what is the weather in Paris']
        .map((instruction, index) =>
          JSON.stringify({ instruction, tools, gold: [tools[index].name] }),
        )
        .join('\n'),
    )
    const out = join(root, 'out-escapes')
    const run = await runToolselChild(['bench', '--suite', `file:${queries}`, '--out', out])
    expect(run.code).toBe(0)
    expect(run.stdout).toContain('\\x1b]0;pwned\\x07\\x1b[31mRED')
    expect(run.stdout + run.stderr).not.toMatch(/[\u0007\u001b]/)
    const summary = await readFile(join(out, 'summary.md'), 'utf8')
    expect(summary).toContain('\\x1b]0;pwned')
    expect(summary).not.toMatch(/[\u0007\u001b]/)
    const html = await readFile(join(out, 'report.html'), 'utf8')
    expect(html).toContain('&#60;img src=x onerror=alert(1)&#62;')
    expect(html).not.toContain('<img src=x')
  }, 90_000)
})
