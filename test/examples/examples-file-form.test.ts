/**
 * "Is this examples file a JSON array" is one decision (`isExamplesArray`): the line limit of the
 * reading (`exampleLineLimit`), the records (`readExamples`) and a saved index's examples
 * (`parseExamplesText`, `parseExamplesBytesSliced`) no longer each decide it their own way.
 * Real files, read as `toolsel index --examples` reads them.
 */
import { mkdtemp, rm, writeFile } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { readDataLines } from '../../src/bench/suites/read-data-file.ts'
import {
  isExamplesArray,
  MAX_EXAMPLE_LINE_BYTES,
  parseExamplesBytesSliced,
  parseExamplesText,
  readExamples,
} from '../../src/examples/usage-example.ts'

let dir: string
beforeAll(async () => {
  dir = await mkdtemp(join(tmpdir(), 'toolsel-examples-form-'))
})
afterAll(async () => {
  await rm(dir, { recursive: true, force: true })
})

/** `count` examples as JSON, joined by `separator`. */
function examples(count: number, separator: string): string {
  return Array.from({ length: count }, (_, index) =>
    JSON.stringify({ instruction: `send report number ${index}`, tools: ['mail.send_email'] }),
  ).join(separator)
}

/** The examples of `content` written to a file and read as `toolsel index --examples` does. */
async function readFile(name: string, content: string | Buffer) {
  const file = join(dir, name)
  await writeFile(file, content)
  const read = []
  for await (const batch of readExamples(readDataLines(file, '--examples file'), file)) {
    read.push(...batch.map((placed) => placed.where))
  }
  return read
}

describe('one decision: is an examples file a JSON array', () => {
  it('an array whose "[" is on its own line after a BOM, spaces and blank lines, with a long line of items', async () => {
    // 2 MiB of examples on the array's second line: within the array's 16 MiB, past 1 MiB.
    const items = examples(40_000, ',')
    expect(items.length).toBeGreaterThan(2 * MAX_EXAMPLE_LINE_BYTES)
    const places = await readFile('split-array.json', `\ufeff  \n\r\n \t\n[\n${items}\n]\n`)
    expect(places).toHaveLength(40_000)
    expect(places.at(-1)).toBe('item 40000')
  })

  it('a JSON Lines file with a long line that starts with "[" is held to the line limit', async () => {
    const long = `[${examples(40_000, ',')}]`
    const file = join(dir, 'lines-then-array.jsonl')
    await expect(
      readFile('lines-then-array.jsonl', `${examples(2, '\n')}\n${long}\n`),
    ).rejects.toThrow(
      `Cannot read --examples file "${file}": line 3 is longer than ${MAX_EXAMPLE_LINE_BYTES} bytes: more than one usage example takes`,
    )
  })

  it('an array split over many lines and one on a single line read alike', async () => {
    const split = await readFile('many-lines.json', `\n\n[\n${examples(300, ',\n')}\n]`)
    const one = await readFile('one-line.json', `[${examples(300, ',')}]`)
    expect(split).toEqual(one)
    expect(one).toHaveLength(300)
  })

  it('text and bytes, whole or line by line, get the same answer', () => {
    const cases = [
      '',
      '\n\n  \r\n',
      '\ufeff[',
      '\ufeff \n\t[1]',
      '  {"instruction":"x"}',
      // Not JSON's spaces: the file is not an array, wherever "[" comes after.
      '\u00a0[',
      '\v[',
      '\ufeff\ufeff[',
    ]
    const answers = cases.map((text) => isExamplesArray(text))
    expect(answers).toEqual([undefined, undefined, true, true, false, false, false, false])
    expect(cases.map((text) => isExamplesArray(Buffer.from(text)))).toEqual(answers)
  })

  it("a saved index's examples: text and bytes agree on a file whose first character is not JSON's space", async () => {
    const text = `\u00a0[${examples(2, ',')}]`
    expect(() => parseExamplesText(text, 'examples.jsonl')).toThrow('examples.jsonl line 1')
    await expect(parseExamplesBytesSliced(Buffer.from(text), 'examples.jsonl')).rejects.toThrow(
      'examples.jsonl line 1',
    )
    const array = `\r\n\t[${examples(2, ',')}]\n`
    expect(parseExamplesText(array, 'examples.jsonl')).toHaveLength(2)
    expect(await parseExamplesBytesSliced(Buffer.from(array), 'examples.jsonl')).toHaveLength(2)
  })
})
