/**
 * Imports refuse a tool id longer than MAX_TOOL_ID_CHARS (500): no request could name it
 * (GET …/tools/:id, get_tool_schemas, examples and feedback take ids of at most 500). Real files
 * in a scratch directory, imported as `toolsel index` and PUT /v1/libraries import them.
 */
import { mkdir, mkdtemp, rm, writeFile } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { importToolsFromPath, importToolsFromText } from '../../../src/library/importers/index.ts'
import { MAX_TOOL_ID_CHARS } from '../../../src/library/tool-id-limit.ts'
import { expectToolselError, expectToolselErrorAsync } from './expect-toolsel-error.ts'

const fn = (name: string) => ({ name, description: 'Compute an area.', parameters: {} })
const limit = (length: number) =>
  `is ${length} characters long; a tool id has at most ${MAX_TOOL_ID_CHARS}: shorten the name or id it is made from`

let scratch: string
beforeAll(async () => {
  scratch = await mkdtemp(join(tmpdir(), 'toolsel-id-length-'))
})
afterAll(async () => {
  await rm(scratch, { recursive: true, force: true })
})

describe('tool ids longer than 500 characters', () => {
  it('are refused with IMPORT_FAILED naming the record, the id (escaped, cut) and the limit', async () => {
    const long = `\u202e${'a'.repeat(MAX_TOOL_ID_CHARS)}`
    const file = join(scratch, 'fns.json')
    await writeFile(file, JSON.stringify([fn('area'), fn('volume'), fn(long)]))
    // Was: imported, an id no request could name.
    const error = await expectToolselErrorAsync(
      () => importToolsFromPath(file),
      'IMPORT_FAILED',
      `fns.json: record 2: tool id "\\u202e${'a'.repeat(63)}"… ${limit(MAX_TOOL_ID_CHARS + 1)}`,
    )
    expect(error.details).toMatchObject({ record: 2, maxToolIdChars: MAX_TOOL_ID_CHARS })
    expect(error.message.length).toBeLessThan(scratch.length + 300)
  })

  it('takes an id of exactly 500; refuses one that a rename makes longer', () => {
    const edge = 'b'.repeat(MAX_TOOL_ID_CHARS)
    const result = importToolsFromText(JSON.stringify([fn(edge)]), { fileName: 'fns.json' })
    expect(result.tools.map((tool) => tool.id)).toEqual([edge])

    const near = 'c'.repeat(MAX_TOOL_ID_CHARS - 1)
    const twice = JSON.stringify([fn(near), { ...fn(near), description: 'Another.' }])
    expect(
      importToolsFromText(twice, { fileName: 'fns.json', onDuplicate: 'first' }).tools,
    ).toHaveLength(1)
    expectToolselError(
      () => importToolsFromText(twice, { fileName: 'fns.json', onDuplicate: 'rename' }),
      'IMPORT_FAILED',
      `fns.json: record 1: tool id "${'c'.repeat(64)}"… is ${MAX_TOOL_ID_CHARS + 1} characters long; a tool id has at most ${MAX_TOOL_ID_CHARS} once renamed (--on-duplicate rename adds _N to a repeated id): shorten`,
    )
  })

  it('a directory refuses an id that a rename across its files makes longer', async () => {
    const dir = join(scratch, 'two-files')
    await mkdir(dir)
    const near = 'd'.repeat(MAX_TOOL_ID_CHARS - 1)
    await writeFile(join(dir, 'a.json'), JSON.stringify([fn(near)]))
    await writeFile(join(dir, 'b.json'), JSON.stringify([{ ...fn(near), description: 'Other.' }]))
    expect((await importToolsFromPath(dir, { onDuplicate: 'last' })).tools).toHaveLength(1)
    await expectToolselErrorAsync(
      () => importToolsFromPath(dir, { onDuplicate: 'rename' }),
      'IMPORT_FAILED',
      `b.json: tool id "${'d'.repeat(64)}"… is ${MAX_TOOL_ID_CHARS + 1} characters long; a tool id has at most ${MAX_TOOL_ID_CHARS} once renamed (--on-duplicate rename adds _N to a repeated id)`,
    )
  })
})
