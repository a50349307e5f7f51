/**
 * Usage examples files from elsewhere (`toolsel index --examples`, `toolsel train --examples`,
 * `train-data --examples`): /dev/zero, a file past the limit, bytes that are not UTF-8. Run as
 * child processes where the input could read forever or exhaust memory (each under a heap limit
 * of its own): before the limit, /dev/zero was read to V8's string limit (700 MB). Small files
 * are read in this process (src/main.ts, as the child runs it): a child's start only adds a
 * second of CPU, five or more at load 10.
 */
import { mkdtemp, readFile, rm, truncate, writeFile } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import {
  MAX_EXAMPLE_LINE_BYTES,
  MAX_EXAMPLES_ARRAY_BYTES,
} from '../../src/examples/usage-example.ts'
import { expectExit, runToolselChild, type ChildRun } from '../helpers/run-toolsel-child.ts'
import { ROOT } from '../helpers/start-serve.ts'
import { runCli } from '../cli/run-cli.ts'

const CALENDAR = join(ROOT, 'src/library/demo/servers/calendar.json')
let root: string

beforeAll(async () => {
  root = await mkdtemp(join(tmpdir(), 'toolsel-hostile-examples-'))
})

afterAll(async () => {
  await rm(root, { recursive: true, force: true })
})

/** `toolsel <argv>` in this process, for a small file: what it printed and its exit code. */
const here = async (argv: string[]): Promise<ChildRun> => ({
  ...(await runCli(argv)),
  signal: null,
})

/** `toolsel index CALENDAR --examples <examples>`'s words. */
const indexArgv = (examples: string) => [
  'index',
  CALENDAR,
  '--name',
  'cal',
  '--index-dir',
  join(root, 'indexes'),
  '--examples',
  examples,
]

/** That command in this process (a small file). */
const indexHere = (examples: string) => here(indexArgv(examples))

// 90 s: on a loaded machine (the full suite beside other work) a run took past the default 30.
const index = (examples: string) => runToolselChild(indexArgv(examples), { timeoutMs: 90_000 })

describe('hostile usage examples files', () => {
  it('/dev/zero is refused within its first lines of bytes: line 1 is longer than an example takes', async () => {
    // Before: read to the 256 MiB file limit first (348 MB RSS), "larger than 268435456 bytes".
    // Both children side by side.
    const [indexed, trained] = await Promise.all([
      index('/dev/zero'),
      runToolselChild(
        [
          'train',
          '--examples',
          '/dev/zero',
          '--library',
          CALENDAR,
          '--out',
          join(root, 'model.json'),
        ],
        { timeoutMs: 90_000 },
      ),
    ])
    expectExit(
      indexed,
      `Cannot read --examples file "/dev/zero": line 1 is longer than ${MAX_EXAMPLE_LINE_BYTES} bytes: more than one usage example takes (an instruction of at most 8000 characters and 64 tool ids); nothing past it was read`,
    )
    expectExit(
      trained,
      `Cannot read examples file "/dev/zero": line 1 is longer than ${MAX_EXAMPLE_LINE_BYTES} bytes`,
    )
  }, 200_000)

  it('a 200 MB file without a line break is refused at its first MiB, not read whole', async () => {
    // Before: read whole (under the 256 MiB file limit) and decoded as one 200 MB string (an
    // external string, off the heap: no heap limit catches it; about 0.5 GB RSS), then refused
    // as "not JSON".
    const file = join(root, 'no-newline.jsonl')
    await writeFile(file, '{"instruction": "')
    await truncate(file, 200_000_000)
    const small = { NODE_OPTIONS: '--max-old-space-size=128' }
    // Side by side (each child has its own heap limit): one after another took ~1.8 s in CI.
    const argvs = [
      ['index', CALENDAR, '--name', 'cal', '--index-dir', join(root, 'nl'), '--examples', file],
      ['train', '--examples', file, '--library', CALENDAR, '--out', join(root, 'nl.json')],
      [
        'train-data',
        'selector',
        '--examples',
        file,
        '--library',
        CALENDAR,
        '--out',
        join(root, 'nl'),
      ],
    ]
    const runs = await Promise.all(
      argvs.map((argv) => runToolselChild(argv, { env: small, timeoutMs: 60_000 })),
    )
    for (const run of runs)
      expectExit(run, `: line 1 is longer than ${MAX_EXAMPLE_LINE_BYTES} bytes`)
  }, 180_000)

  it('bytes that are not UTF-8 are refused naming the line, not read as U+FFFD', async () => {
    const file = join(root, 'latin1.jsonl')
    const good = JSON.stringify({
      instruction: 'create an event',
      tools: ['calendar.create_event'],
    })
    await writeFile(
      file,
      Buffer.concat([
        Buffer.from(`${good}\n\n`),
        Buffer.from(
          '{"instruction": "caf\xe9 meeting", "tools": ["calendar.create_event"]}\n',
          'latin1',
        ),
      ]),
    )
    const run = await indexHere(file)
    expectExit(
      run,
      `Cannot read --examples file "${file}": line 3 is not UTF-8 text (save it as UTF-8)`,
    )
  }, 120_000)

  it('a file of 300,000 examples: train refuses it at the 200,001st, index keeps the newest 20,000, in bounded memory', async () => {
    // Before: the whole file was parsed first (3,000,000 lines: 1.7-2.1 GB RSS). Every example
    // kept to the end (that defect rebuilt in round 53) runs out of an 80 MB heap on this file, from
    // dist/ (96 MB too) or through tsx; index as it is keeps the newest 20,000 within 56 MB. Was
    // 1,000,000 lines under 256 MB: 24-29 s for index alone, 13 s now (load 10-15).
    const file = join(root, 'many.jsonl')
    const ids = ['calendar.create_event', 'calendar.list_events']
    const lines: string[] = []
    for (let at = 0; at < 300_000; at += 1)
      lines.push(`{"instruction":"meet team ${at}","tools":["${ids[at % 2]}"]}`)
    await writeFile(file, `${lines.join('\n')}\n`)
    lines.length = 0
    const small = { NODE_OPTIONS: '--max-old-space-size=80' }
    // train holds the 200,000 examples it accepts before it refuses the 200,001st: about 72 MB of
    // heap through tsx (it ran out of 72 MB once in three runs, of 64 MB always), so 80 MB left it
    // ~10% to spare. Its own 96 MB; the defect rebuilt above is index's, checked at 80 MB.
    const trainHeap = { NODE_OPTIONS: '--max-old-space-size=96' }
    // Side by side, each under its own heap limit.
    const [trained, indexed] = await Promise.all([
      runToolselChild(
        ['train', '--examples', file, '--library', CALENDAR, '--out', join(root, 'many.json')],
        { env: trainHeap, timeoutMs: 60_000 },
      ),
      runToolselChild(
        ['index', CALENDAR, '--name', 'cal', '--index-dir', join(root, 'many'), '--examples', file],
        { env: small, timeoutMs: 120_000 },
      ),
    ])
    expectExit(
      trained,
      `Examples file "${file}" holds more than 200000 examples (at line 200001); at most 200000 are accepted (--max-examples <n> raises it, up to 1000000). Nothing past that was read.`,
    )
    expectExit(
      indexed,
      `Read 300000 usage examples from ${file} (20000 kept: 280000 older past library.maxExamples (20000) dropped)`,
      0,
    )
    const kept = await readFile(join(root, 'many', 'cal', 'examples.jsonl'), 'utf8')
    expect(kept.split('\n')[0]).toContain('"meet team 280000"')
  }, 240_000)

  it('a JSON array of examples is read whole only up to 16 MiB, on one line or many; JSON Lines are asked for', async () => {
    // Before: a one-line array was gathered whole before it was measured (94 MB: 433 MB RSS),
    // and up to 64 MiB was parsed whole. Under a 128 MB heap the one-line one ran out of memory.
    const oneLine = join(root, 'array.json')
    const record = JSON.stringify({
      instruction: 'create an event',
      tools: ['calendar.create_event'],
    })
    const records = Array.from({ length: Math.ceil(40_000_000 / record.length) }, () => record)
    await writeFile(oneLine, `[${records.join(',')}]\n`)
    const small = { NODE_OPTIONS: '--max-old-space-size=128' }
    // The same array, one record a line: refused when the lines add up past the limit.
    const lines = join(root, 'array-lines.json')
    await writeFile(lines, `[\n${records.join(',\n')}\n]\n`)
    // Both children side by side.
    const [run, split] = await Promise.all([
      runToolselChild(
        [
          'index',
          CALENDAR,
          '--name',
          'cal',
          '--index-dir',
          join(root, 'arr'),
          '--examples',
          oneLine,
        ],
        { env: small, timeoutMs: 60_000 },
      ),
      index(lines),
    ])
    expectExit(
      run,
      `Cannot read --examples file "${oneLine}": line 1 is longer than ${MAX_EXAMPLES_ARRAY_BYTES} bytes: a JSON array of examples is read whole, at most ${MAX_EXAMPLES_ARRAY_BYTES} bytes; write JSON Lines (one example a line), which are read a line at a time`,
    )
    expectExit(
      split,
      `Invalid usage examples at ${lines}: a JSON array of examples is read whole, at most ${MAX_EXAMPLES_ARRAY_BYTES} bytes; write JSON Lines`,
    )
    // Within the limit, a one-line array longer than an example line is read.
    const within = join(root, 'array-small.json')
    await writeFile(within, `[${records.slice(0, 30_000).join(',')}]`)
    const read = await indexHere(within)
    expectExit(read, `Read 30000 usage examples from ${within} (1 kept`, 0)
  }, 300_000)

  it('index --examples keeps the first 20 examples naming unknown tools for the error and counts the rest', async () => {
    // Before: every such example was kept for the message (and each id with its places): a file
    // of 1,000,000 of them ran out of a 128 MB heap; this one, of 300,000, runs out of 64 MB so
    // (rebuilt in round 53, from dist/ and through tsx), and is refused within 48 MB as it is.
    // Was 1,000,000 lines under 128 MB: 18 s for the child, 6-11 s now (load 10-15).
    const file = join(root, 'unknown.jsonl')
    const lines: string[] = []
    for (let at = 0; at < 300_000; at += 1)
      lines.push(`{"instruction":"meet team ${at}","tools":["calendar.nope_${at}"]}`)
    await writeFile(file, `${lines.join('\n')}\n`)
    lines.length = 0
    const run = await runToolselChild(
      ['index', CALENDAR, '--name', 'cal', '--index-dir', join(root, 'unk'), '--examples', file],
      { env: { NODE_OPTIONS: '--max-old-space-size=64' }, timeoutMs: 120_000 },
    )
    expectExit(
      run,
      `Invalid usage examples in ${file}: library "cal" has no tool "calendar.nope_0" (line 1), "calendar.nope_1" (line 2),`,
    )
    expect(run.stderr).toContain(
      '"calendar.nope_19" (line 20). 299980 more example(s) after line 20 name tools it lacks (not listed).',
    )
  }, 180_000)

  it('train and train-data take --max-examples: the count a file may hold, 1 to 1,000,000', async () => {
    const file = join(root, 'ten.jsonl')
    const ids = ['calendar.create_event', 'calendar.list_events']
    await writeFile(
      file,
      Array.from(
        { length: 10 },
        (_, at) => `{"instruction":"meet team ${at}","tools":["${ids[at % 2]}"]}\n`,
      ).join(''),
    )
    const run = (command: string[], max: string, out: string) =>
      here([
        ...command,
        '--examples',
        file,
        '--library',
        CALENDAR,
        '--max-examples',
        max,
        '--out',
        join(root, out),
      ])
    const trained = await run(['train'], '4', 'ten.json')
    expectExit(
      trained,
      `Examples file "${file}" holds more than 4 examples (at line 5); at most 4 are accepted (--max-examples <n> raises it, up to 1000000). Nothing past that was read.`,
    )
    const data = await run(['train-data', 'selector'], '9', 'ten-data')
    expectExit(data, `holds more than 9 examples (at line 10)`)
    for (const value of ['0', '1000001']) {
      const bad = await run(['train-data', 'selector'], value, 'ten-bad')
      expectExit(bad, `--max-examples expects a whole number from 1 to 1000000, got "${value}".`)
    }
  }, 120_000)
})
