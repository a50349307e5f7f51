import { mkdir, mkdtemp, readFile, rm, writeFile } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { main } from '../../src/main.ts'
import { pathExists } from '../../src/store/path-exists.ts'
import { DATA_DIR, hasData } from '../helpers/data-dir.ts'
import { FIXTURES } from './fixture-bench.ts'

function capture() {
  const out: string[] = []
  const err: string[] = []
  return {
    io: {
      stdout: (text: string) => out.push(text),
      stderr: (text: string) => err.push(text),
      env: {},
    },
    stdout: () => out.join(''),
    stderr: () => err.join(''),
  }
}

let dir: string
beforeAll(async () => {
  dir = await mkdtemp(join(tmpdir(), 'toolsel-bench-'))
})
afterAll(async () => {
  await rm(dir, { recursive: true, force: true })
})

describe('toolsel bench', () => {
  it('writes report.json, summary.md and report.html and prints the summary', async () => {
    const run = capture()
    const out = join(dir, 'g2')
    const code = await main(
      ['bench', '--suite', 'toolbench-g2', '--data', `${FIXTURES}/data`, '--out', out],
      run.io,
    )
    expect(code).toBe(0)
    expect(run.stdout()).toMatch(/\| \*\*toolbench-g2\*\* \| 2 \|/)
    expect(run.stderr()).toMatch(/bench toolbench-g2: 2\/2 \(100%\)/)
    const report = JSON.parse(await readFile(join(out, 'report.json'), 'utf8'))
    expect(report.settings).toMatchObject({
      suite: 'toolbench-g2',
      libraryMode: 'union',
      planner: 'rule',
    })
    expect(report.config.bench.dataDir).toBe(`${FIXTURES}/data`)
    expect(await readFile(join(out, 'summary.md'), 'utf8')).toMatch(/^# Benchmark: /)
    expect(await readFile(join(out, 'report.html'), 'utf8')).toMatch(/<svg/)
  })

  it('prints report.json with --json and trims per-query records with --compact', async () => {
    const run = capture()
    const args = [
      'bench',
      '--suite',
      'toolbench-g2',
      '--data',
      `${FIXTURES}/data`,
      '--json',
      '--compact',
    ]
    expect(await main([...args, '--out', join(dir, 'json')], run.io)).toBe(0)
    const [query] = JSON.parse(run.stdout()).suites[0].splits[0].queries
    expect(query.instruction).toBeUndefined()
    expect(query.timings).toBeUndefined()
    expect(query.steps[0].candidates).toBeUndefined()
  })

  it('exits 1 and names the reason when a suite has no queries', async () => {
    const run = capture()
    const tools = `${FIXTURES}/gorilla/huggingface_api.jsonl`
    const args = [
      'bench',
      '--suite',
      'gorilla-huggingface',
      '--data',
      `${FIXTURES}/data`,
      '--tools',
      tools,
    ]
    expect(await main([...args, '--out', join(dir, 'hf')], run.io)).toBe(1)
    expect(run.stdout()).toMatch(/No suite ran/)
    expect(run.stdout()).toMatch(/gorilla-huggingface\/huggingface_train: no queries available/)
  })

  it('says where it looked and what to do when no suite has its data (a wrong or empty data directory)', async () => {
    const empty = join(dir, 'empty-data')
    await mkdir(empty)
    const run = capture()
    const args = ['bench', '--suite', 'toolbench-g1', '--data', empty, '--out', join(dir, 'nodata')]
    expect(await main(args, run.io)).toBe(1)
    expect(run.stdout()).toMatch(/toolbench-g1\/G1_instruction: not found/)
    // Was: the report's "Skipped" paths alone, nothing saying which setting to change.
    expect(run.stderr()).toContain(`No suite ran: none of its data is under "${empty}"`)
    expect(run.stderr()).toContain('Point --data (or TOOLSEL_DATA_DIR) at the directory')
    expect(run.stderr()).toContain('or run --suite demo, which needs none')
  })

  it('says so when --suite all found no data and ran the demo alone', async () => {
    const empty = join(dir, 'empty-data-all')
    await mkdir(empty)
    const run = capture()
    const args = ['bench', '--suite', 'all', '--data', empty, '--out', join(dir, 'alldemo')]
    expect(await main(args, run.io)).toBe(0)
    expect(run.stdout()).toMatch(/toolbench-g1\/G1_instruction: not found/)
    // Was: the demo's scores and 20 "not found" lines, exit 0, nothing naming the setting.
    expect(run.stderr()).toContain(
      `Only the demo suite ran: none of the other suites' data is under "${empty}" (bench.dataDir, resolved from ${process.cwd()}). Point --data (or TOOLSEL_DATA_DIR) at the directory that holds the benchmark data (bench/README.md).\n`,
    )
  })

  it('refuses a file: suite it cannot read or parse in one line, exit 2, leaving no output directory', async () => {
    const folder = join(dir, 'a-folder')
    await mkdir(folder)
    const notJson = join(dir, 'not-json.jsonl')
    await writeFile(notJson, 'not json\n')
    for (const [file, message] of [
      [
        join(dir, 'missing.jsonl'),
        `Cannot read benchmark file "${join(dir, 'missing.jsonl')}": no such file or directory`,
      ],
      [folder, `Cannot read benchmark file "${folder}": it is a directory; name a file`],
      [notJson, `Benchmark file "${notJson}" line 1 is not JSON`],
    ]) {
      const run = capture()
      const out = join(dir, 'refused-run')
      const code = await main(['bench', '--suite', `file:${file}`, '--out', out], run.io)
      expect(code, run.stderr()).toBe(2)
      expect(run.stderr()).toContain(`error [INVALID_INPUT]: ${message}`)
      expect(run.stderr().trim().split('\n')).toHaveLength(1)
      expect(run.stdout()).toBe('')
      // Was: a report of no queries for a missing file; progress.jsonl alone for the others.
      expect(await pathExists(out), file).toBe(false)
    }
  })

  it('refuses an unknown planner or selector before any query: exit 2, one line, no output directory', async () => {
    for (const [flag, id, kind] of [
      ['--selector', 'lerned', 'selector'],
      ['--planner', 'rules', 'planner'],
    ]) {
      const run = capture()
      const out = join(dir, `unknown-${kind}`)
      const code = await main(['bench', '--suite', 'demo', flag, id, '--out', out], run.io)
      expect(code, run.stderr()).toBe(2)
      expect(run.stderr()).toContain(`error [UNKNOWN_COMPONENT]: No such ${kind}: "${id}"`)
      // Was: every one of the demo suite's 79 queries run and failed first (their progress
      // lines), then the error, and progress.jsonl left in the output directory.
      expect(run.stderr().trim().split('\n')).toHaveLength(1)
      expect(await pathExists(out), kind).toBe(false)
    }
  })

  it('refuses an --out that names a file: exit 2, one line that says so, the file left as it was', async () => {
    const file = join(dir, 'out-is-a-file.txt')
    await writeFile(file, 'mine')
    const run = capture()
    expect(await main(['bench', '--suite', 'demo', '--out', file], run.io)).toBe(2)
    // Was: error [EEXIST]: EEXIST: file already exists, mkdir '…' and exit 1.
    expect(run.stderr()).toBe(
      `error [INVALID_INPUT]: The report directory "${file}" is a file, not a directory: name a directory (or one to create) with --out. See: toolsel bench --help\n`,
    )
    expect(await readFile(file, 'utf8')).toBe('mine')
  })

  it('rejects unknown suites, bad modes and --queries with --suite all', async () => {
    const cases: Array<[string[], RegExp]> = [
      [['--suite', 'nope'], /Unknown benchmark suite "nope" \(available: all, toolbench-g1/],
      [
        ['--library-mode', 'open'],
        /--library-mode must be one of closed, union, corpus, got "open"/,
      ],
      [['--queries', 'x.json'], /--queries and --tools name one suite's files/],
      [['--limit', '0'], /--limit expects a positive integer, got "0"/],
    ]
    for (const [args, message] of cases) {
      const run = capture()
      expect(await main(['bench', ...args], run.io)).toBe(2)
      expect(run.stderr()).toMatch(message)
    }
  })

  it.skipIf(!hasData('toolbench'))(
    'runs a real suite with --limit (skipped: no toolbench data)',
    async () => {
      const run = capture()
      const args = [
        'bench',
        '--suite',
        'toolbench-g3',
        '--data',
        DATA_DIR,
        '--limit',
        '3',
        '--library-mode',
        'corpus',
      ]
      expect(await main([...args, '--out', join(dir, 'g3')], run.io)).toBe(0)
      const report = JSON.parse(await readFile(join(dir, 'g3', 'report.json'), 'utf8'))
      expect(
        report.suites[0].splits.map((split: { queries: unknown[] }) => split.queries.length),
      ).toEqual([3, 3, 2])
      expect(report.suites[0].splits[0].library.tools).toBe(1415)
    },
  )
})
