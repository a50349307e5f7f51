/**
 * Usage examples files from elsewhere (`toolsel index --examples`, `toolsel train --examples`,
 * `train-data --examples`): /dev/zero, a file past the limit, bytes that are not UTF-8. Run as
 * child processes: before the limit, /dev/zero was read to V8's string limit (700 MB).
 */
import { mkdtemp, readFile, rm, writeFile } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { MAX_EXAMPLES_ARRAY_CHARS } from '../../src/examples/usage-example.ts'
import { runToolselChild } from '../helpers/run-toolsel-child.ts'
import { ROOT } from '../helpers/start-serve.ts'

const CALENDAR = join(ROOT, 'src/library/demo/servers/calendar.json')
let root: string

beforeAll(async () => {
  root = await mkdtemp(join(tmpdir(), 'toolsel-hostile-examples-'))
})

afterAll(async () => {
  await rm(root, { recursive: true, force: true })
})

const index = (examples: string) =>
  runToolselChild([
    'index',
    CALENDAR,
    '--name',
    'cal',
    '--index-dir',
    join(root, 'indexes'),
    '--examples',
    examples,
  ])

describe('hostile usage examples files', () => {
  it('/dev/zero is refused after 256 MiB, naming the file and the limit', async () => {
    const indexed = await index('/dev/zero')
    expect(indexed.stderr).toContain(
      'Cannot read --examples file "/dev/zero": it is larger than 268435456 bytes, more than a usage examples file holds; nothing was read',
    )
    expect(indexed.code).toBe(2)
    const trained = await runToolselChild([
      'train',
      '--examples',
      '/dev/zero',
      '--library',
      CALENDAR,
      '--out',
      join(root, 'model.json'),
    ])
    expect(trained.stderr).toContain(
      'Cannot read examples file "/dev/zero": it is larger than 268435456 bytes',
    )
    expect(trained.code).toBe(2)
  }, 90_000)

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
    const run = await index(file)
    expect(run.stderr).toContain(
      `Cannot read --examples file "${file}": line 3 is not UTF-8 text (save it as UTF-8)`,
    )
    expect(run.code).toBe(2)
  }, 60_000)

  it('a file of 1,000,000 examples: train refuses it at the 200,001st, index keeps the newest 20,000, in bounded memory', async () => {
    // Before: the whole file was parsed first (3,000,000 lines: 1.7-2.1 GB RSS); under a 256 MB
    // heap this one ran out of memory in both commands.
    const file = join(root, 'million.jsonl')
    const ids = ['calendar.create_event', 'calendar.list_events']
    const lines: string[] = []
    for (let at = 0; at < 1_000_000; at += 1)
      lines.push(`{"instruction":"meet team ${at}","tools":["${ids[at % 2]}"]}`)
    await writeFile(file, `${lines.join('\n')}\n`)
    lines.length = 0
    const small = { NODE_OPTIONS: '--max-old-space-size=256' }
    const trained = await runToolselChild(
      ['train', '--examples', file, '--library', CALENDAR, '--out', join(root, 'million.json')],
      { env: small, timeoutMs: 60_000 },
    )
    expect(trained.stderr).toContain(
      `Examples file "${file}" holds more than 200000 examples (at line 200001); at most 200000 are accepted. Nothing past that was read.`,
    )
    expect(trained.code).toBe(2)
    const indexed = await runToolselChild(
      [
        'index',
        CALENDAR,
        '--name',
        'cal',
        '--index-dir',
        join(root, 'million'),
        '--examples',
        file,
      ],
      { env: small, timeoutMs: 120_000 },
    )
    expect(indexed.stderr).toContain(
      `Read 1000000 usage examples from ${file} (20000 kept: duplicates removed, the newest 20000 kept)`,
    )
    expect(indexed.code).toBe(0)
    const kept = await readFile(join(root, 'million', 'cal', 'examples.jsonl'), 'utf8')
    expect(kept.split('\n')[0]).toContain('"meet team 980000"')
  }, 240_000)

  it('a JSON array of examples is read whole only up to 64 MiB; JSON Lines are asked for', async () => {
    const file = join(root, 'array.json')
    const bytes = Buffer.alloc(MAX_EXAMPLES_ARRAY_CHARS + 16, 0x20)
    bytes[0] = 0x5b // "["
    await writeFile(file, bytes)
    const run = await index(file)
    expect(run.stderr).toContain(
      `Invalid usage examples at ${file}: a JSON array of examples is read whole, and this one is larger than ${MAX_EXAMPLES_ARRAY_CHARS} characters; write JSON Lines (one example a line)`,
    )
    expect(run.code).toBe(2)
  }, 60_000)
})
