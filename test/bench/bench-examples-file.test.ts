/**
 * `toolsel bench --suite file:<test> --examples file:<train>`: the user's own training split as
 * the library's usage examples (before, only `none` or `train`, which for a file suite is 5-fold
 * of its own queries, were accepted: `--examples file:…` was INVALID_INPUT). An evaluated query is
 * never its own example: an example with the same instruction (case and whitespace aside) is
 * dropped, and the command and summary.md say so; a tool id the library lacks refuses the file.
 */
import { mkdtemp, readFile, writeFile } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { beforeAll, describe, expect, it } from 'vitest'
import { runCli } from '../cli/run-cli.ts'

const TOOLS = [
  { name: 'send_sms', description: 'Send a text message to a phone number' },
  { name: 'send_email', description: 'Send an email to an address' },
  { name: 'get_weather', description: 'Get the weather forecast for a city' },
]
const TEST = [
  { instruction: 'text my mom that I will be late', gold: ['send_sms'] },
  { instruction: 'will it rain in London today', gold: ['get_weather'] },
]
const TRAIN = [
  { id: 't1', instruction: 'Text  my MOM that I will be late', tools: ['send_sms'] },
  { id: 't2', instruction: 'ping my brother on his phone', tools: ['send_sms'] },
  { id: 't3', instruction: 'is it going to be sunny in Rome', tools: ['get_weather'] },
  { id: 't4', instruction: 'mail the invoice to Bob', tools: ['send_email'] },
]

let dir: string
const jsonl = (records: object[]) => records.map((record) => JSON.stringify(record)).join('\n')
beforeAll(async () => {
  dir = await mkdtemp(join(tmpdir(), 'toolsel-bench-examples-file-'))
  await writeFile(join(dir, 'tools.json'), JSON.stringify(TOOLS))
  await writeFile(
    join(dir, 'test.jsonl'),
    jsonl(TEST.map((record) => ({ ...record, library: 'tools.json' }))),
  )
  await writeFile(join(dir, 'train.jsonl'), jsonl(TRAIN))
  await writeFile(
    join(dir, 'typo.jsonl'),
    jsonl([...TRAIN, { instruction: 'call Ann', tools: ['make_call'] }]),
  )
})

const bench = (out: string, examples: string, suite = `file:${join(dir, 'test.jsonl')}`) =>
  runCli(['bench', '--suite', suite, '--examples', examples, '--out', join(dir, out)])

describe('bench --examples file:<path>', () => {
  it("gives the library the file's examples, less those whose instruction is an evaluated query", async () => {
    const run = await bench('run', `file:${join(dir, 'train.jsonl')}`)
    expect(run.code).toBe(0)
    const note = `usage examples: 3 of ${join(dir, 'train.jsonl')}; 1 dropped, each the instruction of an evaluated query (a query is never its own example)`
    expect(run.stderr).toContain(`file:test/all: ${note}`)
    const summary = await readFile(join(dir, 'run', 'summary.md'), 'utf8')
    expect(summary).toContain(`usage examples: file \`${join(dir, 'train.jsonl')}\``)
    expect(summary).toContain(note)
    const report = JSON.parse(await readFile(join(dir, 'run', 'report.json'), 'utf8')) as {
      settings: { examples: string; examplesFile: string }
      suites: Array<{ splits: Array<{ examples: { source: string; counts: number[] } }> }>
    }
    expect(report.settings).toMatchObject({
      examples: 'train',
      examplesFile: join(dir, 'train.jsonl'),
    })
    expect(report.suites[0].splits[0].examples).toEqual({
      source: `file:${join(dir, 'train.jsonl')}`,
      counts: [3],
    })
  })

  it('refuses a file naming a tool the library lacks, and a run of every suite', async () => {
    const typo = await bench('typo', `file:${join(dir, 'typo.jsonl')}`)
    expect(typo.code).toBe(2)
    expect(typo.stderr).toContain('make_call')
    const all = await bench('all', `file:${join(dir, 'train.jsonl')}`, 'all')
    expect(all.code).toBe(2)
    expect(all.stderr).toContain('--examples file:<path>')
  })
})
