import { mkdtemp, rm, writeFile } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { afterAll, describe, expect, it } from 'vitest'
import { readJsonRecords } from '../../src/bench/suites/read-data-file.ts'

const dir = await mkdtemp(join(tmpdir(), 'toolsel-read-data-'))
afterAll(() => rm(dir, { recursive: true, force: true }))

async function records(name: string, text: string) {
  const file = join(dir, name)
  await writeFile(file, text)
  return readJsonRecords(file)
}

describe('readJsonRecords', () => {
  it('reads JSON Lines of one record (toolsel train --examples with one example)', async () => {
    const record = { instruction: 'text mom', tools: ['send_sms'] }
    expect(await records('one.jsonl', `${JSON.stringify(record)}\n`)).toEqual([record])
    expect(
      await records('two.jsonl', `${JSON.stringify(record)}\n${JSON.stringify(record)}\n`),
    ).toHaveLength(2)
    expect(await records('array.json', JSON.stringify([record]))).toEqual([record])
  })

  it('reads a file a Windows editor saved: byte-order mark and CRLF line ends', async () => {
    // Before: "line 1 is not JSON: Unexpected token '\uFEFF'".
    const record = { instruction: 'text mom', tools: ['send_sms'] }
    const line = JSON.stringify(record)
    expect(await records('bom.jsonl', `\uFEFF${line}\r\n${line}\r\n`)).toEqual([record, record])
    expect(await records('bom.json', `\uFEFF${JSON.stringify([record])}`)).toEqual([record])
  })

  it('still refuses a JSON document that is not a list of records', async () => {
    await expect(records('object.json', '{\n  "queries": []\n}\n')).rejects.toThrow(
      'is not a JSON array or JSON Lines',
    )
    await expect(records('number.json', '42')).rejects.toThrow('is not a JSON array or JSON Lines')
  })
})
