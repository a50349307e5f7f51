/**
 * Usage examples files from elsewhere (`toolsel index --examples`, `toolsel train --examples`,
 * `train-data --examples`): /dev/zero, a file past the limit, bytes that are not UTF-8. Run as
 * child processes: before the limit, /dev/zero was read to V8's string limit (700 MB).
 */
import { mkdtemp, rm, writeFile } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
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
})
