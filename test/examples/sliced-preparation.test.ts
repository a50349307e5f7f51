/**
 * #10 hardening: a library's usage examples are parsed, de-duplicated, hashed, indexed (BM25
 * expansion, nearest-example memory, word pairs) and prepared (self-check, co-occurrence) in
 * slices that yield to the event loop, with the same results as the synchronous code.
 */
import { describe, expect, it } from 'vitest'
import { toolCooccurrence, ToolCooccurrence } from '../../src/examples/example-cooccurrence.ts'
import { exampleExpansions, exampleExpansionsSliced } from '../../src/examples/example-expansion.ts'
import { ExampleMemory, withWordPairs } from '../../src/examples/example-memory.ts'
import { ExampleSet } from '../../src/examples/example-set.ts'
import {
  DEFAULT_EXAMPLE_MEMORY_OPTIONS,
  cachedSelfCheck,
  memorySelfCheck,
  memorySelfCheckSliced,
  prepareExampleMemorySliced,
} from '../../src/examples/memory-selection.ts'
import { parseExamplesBytesSliced, parseExamplesText } from '../../src/examples/usage-example.ts'
import { defaultConfig } from '../../src/config/schema.ts'
import { runStepsSliced, type Steps } from '../../src/time-slicer.ts'
import { SAMPLE_TOOLS } from '../helpers/sample-tools.ts'
import { syntheticExamples } from '../helpers/synthetic-examples.ts'

/** Whether something scheduled on the event loop ran while `work` was still going. */
async function yieldsWhile<T>(work: () => Promise<T>): Promise<{ value: T; yielded: boolean }> {
  let done = false
  let yielded = false
  setImmediate(() => (yielded = !done))
  const value = await work()
  done = true
  return { value, yielded }
}

const examples = syntheticExamples(3000)
const set = ExampleSet.of(examples)
const QUERIES = ['send mail to Ann about the weather', 'book a hotel and a flight', 'play a song']

describe('sliced work gives the synchronous results', () => {
  it('runStepsSliced yields between steps once the slice is spent, and stops when aborted', async () => {
    function* steps(): Steps<number> {
      for (let step = 0; step < 5; step += 1) yield
      return 42
    }
    const { value, yielded } = await yieldsWhile(() => runStepsSliced(steps(), undefined, 0))
    expect(value).toBe(42)
    expect(yielded).toBe(true)
    const controller = new AbortController()
    controller.abort(new Error('gone'))
    await expect(runStepsSliced(steps(), controller.signal, 0)).rejects.toMatchObject({
      code: 'ABORTED',
    })
  })

  it('builds the same memory, word pairs or not, and yields meanwhile', async () => {
    for (const wordPairs of [false, true]) {
      const sync = ExampleMemory.build(set.examples, { wordPairs })
      const { value: sliced, yielded } = await yieldsWhile(() =>
        ExampleMemory.buildSliced(set.examples, { wordPairs }),
      )
      expect(yielded).toBe(true)
      for (const query of [...QUERIES, set.examples[17].instruction])
        expect(sliced.neighbors(query, 10)).toEqual(sync.neighbors(query, 10))
    }
  })

  it('replays the same self-check and counts the same co-occurrence', async () => {
    const options = DEFAULT_EXAMPLE_MEMORY_OPTIONS
    const sync = memorySelfCheck(ExampleMemory.build(set.examples), options)
    const memory = ExampleMemory.build(set.examples)
    const { value: sliced, yielded } = await yieldsWhile(() =>
      memorySelfCheckSliced(memory, options),
    )
    expect(yielded).toBe(true)
    expect(sliced).toEqual(sync)
    expect(cachedSelfCheck(memory, options)).toBe(sliced)

    const counted = new ToolCooccurrence(set.examples)
    const slicedCounts = await ToolCooccurrence.buildSliced(set.examples)
    for (const { id } of SAMPLE_TOOLS) {
      expect(slicedCounts.uses(id)).toBe(counted.uses(id))
      expect(slicedCounts.meanSize(id)).toBe(counted.meanSize(id))
      for (const other of SAMPLE_TOOLS)
        expect(slicedCounts.conditional(id, other.id)).toBe(counted.conditional(id, other.id))
    }
  })

  it('prepares a memory ahead of requests: self-check, co-occurrence and word pairs cached', async () => {
    const memory = ExampleMemory.build(set.examples)
    const config = defaultConfig().examples
    await prepareExampleMemorySliced({ memory }, { ...config, minPrecision: 0 })
    // Cached: the synchronous accessors return the objects the preparation built.
    const pairs = withWordPairs(memory)
    expect(withWordPairs(memory)).toBe(pairs)
    expect(toolCooccurrence(memory)).toBe(toolCooccurrence(memory))
    expect(pairs.neighbors(QUERIES[0], 5)).toEqual(
      ExampleMemory.build(set.examples, { wordPairs: true }).neighbors(QUERIES[0], 5),
    )
  })

  it('parses, de-duplicates, hashes and writes the examples alike', async () => {
    const text = set.toJsonLines()
    const bytes = Buffer.from(`${text}${text}`)
    const parsed = await parseExamplesBytesSliced(bytes, 'examples.jsonl')
    expect(parsed).toEqual(parseExamplesText(`${text}${text}`, 'examples.jsonl'))
    const reread = await ExampleSet.ofSliced(parsed, { version: 3, normalized: true })
    expect(reread.examples).toEqual(ExampleSet.of(parsed).examples)
    expect(reread.version).toBe(3)
    expect(Buffer.concat(await reread.toJsonLineChunksSliced()).toString()).toBe(text)
    expect(await reread.contentHashSliced()).toBe(set.contentHash)
    expect(await exampleExpansionsSliced(set.examples, 8, 2)).toEqual(
      exampleExpansions(set.examples, 8, 2),
    )
  })

  it('names the line of a bad record, sliced or not', async () => {
    const text = `${set.toJsonLines()}{"instruction": "x", "tools": []}\n`
    const sync = (() => {
      try {
        parseExamplesText(text, 'ex.jsonl')
      } catch (error) {
        return (error as Error).message
      }
    })()
    expect(sync).toContain('line 3001')
    await expect(parseExamplesBytesSliced(Buffer.from(text), 'ex.jsonl')).rejects.toThrow(sync)
  })

  it('parses bytes as their UTF-8 text: byte-order mark, arrays, CRLF, bad bytes, errors', async () => {
    const line = (instruction: string, tools = ['t']) =>
      `${JSON.stringify({ instruction, tools })}\n`
    const files = [
      Buffer.from(`\uFEFF${line('a')}${line('b  c')}`),
      Buffer.from(`\n  \r\n${line('é ü 日本')}\r\n${line('x', ['t', 't', 'u'])}\n\n`),
      Buffer.from(`  [${JSON.stringify({ instruction: 'a', tools: ['t'] })}]`),
      Buffer.from(`\uFEFF [{"instruction":"a","tools":["t"]}]`),
      Buffer.from(`\u00A0${line('nbsp first')}`),
      Buffer.concat([
        Buffer.from('{"instruction":"bad '),
        Buffer.from([0xe6, 0x97]),
        Buffer.from('","tools":["t"]}\n'),
      ]),
      Buffer.from('   \n\t\n'),
      Buffer.from(''),
      Buffer.from(`${line('a')}{"instruction": "x", "tools": []}\n`),
      Buffer.from(`${line('a')}not json\n${line('b')}`),
      Buffer.from(`${line('a')}{"instruction": "x"`),
      Buffer.from('{"instruction":"a","tools":["t"]}'),
    ]
    for (const bytes of files) {
      const text = bytes.toString('utf8')
      let expected: unknown
      try {
        expected = parseExamplesText(text, 'f.jsonl')
      } catch (error) {
        expected = error
      }
      const sliced = parseExamplesBytesSliced(bytes, 'f.jsonl')
      if (expected instanceof Error) await expect(sliced).rejects.toThrow(expected.message)
      else expect(await sliced).toEqual(expected)
    }
  })
})
