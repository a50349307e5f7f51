import { describe, expect, it, vi } from 'vitest'
import { ExampleSet, normalizeEach } from '../../src/examples/example-set.ts'
import { runStepsSliced } from '../../src/time-slicer.ts'
import { isToolselError } from '../../src/errors.ts'
import {
  assertKnownTools,
  assertKnownToolsSliced,
  exampleKey,
  normalizeExample,
  parseExamplesText,
  readExamples,
} from '../../src/examples/usage-example.ts'

/** The examples of `text` read as a file's lines are (readExamples), with their places. */
async function examplesWithPlaces(text: string, source: string) {
  const examples = []
  const places = []
  for await (const batch of readExamples(
    (async function* () {
      yield text.split('\n')
    })(),
    source,
  )) {
    for (const { example, where } of batch) {
      examples.push(example)
      places.push(where)
    }
  }
  return { examples, from: { source, places } }
}

const example = (instruction: string, ...tools: string[]) => ({ instruction, tools })

describe('ExampleSet', () => {
  it('de-duplicates by instruction (case and spacing folded) and tool set, and counts versions', () => {
    const empty = ExampleSet.empty(10)
    expect(empty.version).toBe(0)
    const { set, change } = empty.with([
      example('Send  the report', 'mail.send', 'files.get'),
      example('send the report ', 'files.get', 'mail.send'),
      example('send the report', 'mail.send'),
    ])
    expect(change).toEqual({ added: 2, duplicates: 1, evicted: 0 })
    expect(set.version).toBe(1)
    expect(set.examples).toEqual([
      { instruction: 'Send the report', tools: ['mail.send', 'files.get'] },
      { instruction: 'send the report', tools: ['mail.send'] },
    ])
    const again = set.with([example('SEND THE REPORT', 'mail.send')])
    expect(again.set).toBe(set)
    expect(again.change).toEqual({ added: 0, duplicates: 1, evicted: 0 })
  })

  it('de-duplicates long examples as short ones: case and spacing folded, every code unit kept', async () => {
    // Keys past 64 characters are digests since round 50 (ex54): the same duplicates as keying
    // by exampleKey itself, whether the set is made whole, sliced or written to.
    const long = 'x'.repeat(70)
    const instructions = [
      `Send ${long}`,
      `send  ${long} `,
      `SEND ${long.toUpperCase()}`,
      `send ${long} \ud800`,
      `send ${long} \ufffd`,
      `send ${long} \udc00`,
      `send ${long} \ud800`,
      `${'a'.repeat(40)}`,
      `${'A'.repeat(40)} `,
      `é${'ü'.repeat(80)}`,
      `É${'Ü'.repeat(80)}`,
    ]
    const examples = instructions.flatMap((instruction) => [
      example(instruction, 't1'),
      example(instruction, 't1', 't2'),
      example(instruction, 't2', 't1'),
    ])
    const expected = new Map<string, ReturnType<typeof normalizeExample>>()
    for (const one of examples.map(normalizeExample)) {
      if (!expected.has(exampleKey(one))) expected.set(exampleKey(one), one)
    }
    expect(expected.size).toBe(2 * 6)
    const whole = ExampleSet.of(examples)
    expect(whole.examples).toEqual([...expected.values()])
    expect((await ExampleSet.ofSliced(examples)).examples).toEqual(whole.examples)
    const written = ExampleSet.empty().withEach(
      [examples.slice(0, 9), await runStepsSliced(normalizeEach(examples.slice(9)))].map((write) =>
        write.map(normalizeExample),
      ),
      { normalized: true },
    )
    expect(written.set.examples).toEqual(whole.examples)
    expect(written.changes.map((change) => change.duplicates)).toEqual([7, 14])
    expect(whole.with(examples).change).toEqual({
      added: 0,
      duplicates: examples.length,
      evicted: 0,
    })
  })

  it('drops the oldest beyond the cap', () => {
    const start = ExampleSet.of([example('a', 't1'), example('b', 't1')], { cap: 3 })
    const { set, change } = start.with([example('c', 't1'), example('d', 't2'), example('e', 't2')])
    expect(change).toEqual({ added: 3, duplicates: 0, evicted: 2 })
    expect(set.examples.map((item) => item.instruction)).toEqual(['c', 'd', 'e'])
    expect(set.version).toBe(2)
    // More new examples than the cap: only the newest `cap` are added.
    const flood = ExampleSet.empty(2).with([
      example('x', 't'),
      example('y', 't'),
      example('z', 't'),
    ])
    expect(flood.change).toEqual({ added: 2, duplicates: 0, evicted: 1 })
    expect(flood.set.withCap(1).examples).toEqual([example('z', 't')])
  })

  it('keeps its keys across writes: an evicted example is new again, a kept one a duplicate', () => {
    // Each `with` hands its keys to the next set (no re-keying of the whole set per write): the
    // answers must be those of a set keyed afresh.
    let set = ExampleSet.of([example('a', 't'), example('b', 't')], { cap: 3 })
    set = set.with([example('c', 't')]).set
    set = set.with([example('d', 't')]).set // evicts a
    expect(set.examples.map((item) => item.instruction)).toEqual(['b', 'c', 'd'])
    const readd = set.with([example('A', 't'), example('c ', 't'), example('a', 't')])
    expect(readd.change).toEqual({ added: 1, duplicates: 2, evicted: 1 })
    expect(readd.set.examples.map((item) => item.instruction)).toEqual(['c', 'd', 'A'])
    // The earlier set is unchanged by the later writes (sets are immutable, keys included).
    expect(set.with([example('b', 't')]).change.duplicates).toBe(1)
    expect(set.with([example('a', 't')]).change.added).toBe(1)
    const capped = ExampleSet.of([example('x', 't'), example('y', 't'), example('x', 't')], {
      cap: 1,
    })
    expect(capped.with([example('x', 't')]).change).toEqual({ added: 1, duplicates: 0, evicted: 1 })
  })

  it('answers as a set keyed afresh over many writes (its key changes folded every 32)', () => {
    let set = ExampleSet.of([example('w0', 't')], { cap: 5 })
    for (let write = 1; write <= 120; write += 1) {
      const batch = [example(`w${(write * 7) % 11}`, 't'), example(`W${(write * 3) % 13}`, 't')]
      const next = set.with(batch)
      const reference = ExampleSet.of(set.examples, { cap: 5 }).with(batch)
      expect(next.change).toEqual(reference.change)
      expect(next.set.examples).toEqual(reference.set.examples)
      set = next.set
    }
  })

  it('applies a batch of writes as that many writes would, each with its own change', () => {
    // withEach (a batch of example writes, toolsel-service.ts) against `with` one write at a
    // time on a set keyed afresh: evictions, duplicates within and across writes, re-adds of an
    // example evicted earlier in the batch, writes larger than the cap, empty writes.
    for (const cap of [1, 3, 5, 8]) {
      let set = ExampleSet.of([example('w0', 't'), example('w1', 't')], { cap })
      for (let round = 0; round < 12; round += 1) {
        const writes = Array.from({ length: 1 + (round % 5) }, (_, at) =>
          Array.from({ length: (round + at) % 4 }, (_, one) =>
            example(`${one % 2 ? 'W' : 'w'}${(round * 5 + at * 3 + one) % 9}`, 't'),
          ),
        )
        const batch = set.withEach(writes)
        let reference = ExampleSet.of(set.examples, { cap, version: set.version })
        const changes = writes.map((write) => {
          const next = reference.with(write)
          reference = next.set
          return next.change
        })
        expect(batch.changes).toEqual(changes)
        expect(batch.set.examples).toEqual(reference.examples)
        expect(batch.set.version).toBe(reference.version)
        // Its keys answer as those of a set keyed afresh.
        const probe = [example('w3', 't'), example('W4', 't'), example('w8', 't')]
        expect(batch.set.with(probe).change).toEqual(
          ExampleSet.of(batch.set.examples, { cap }).with(probe).change,
        )
        set = batch.set
      }
    }
    const same = ExampleSet.of([example('a', 't')])
    expect(same.withEach([[example('A', 't')], []]).set).toBe(same)
  })

  it('applies a batch in steps, one per example, ending with what withEach gives (round 55; fails before: no withEachSteps)', async () => {
    const set = ExampleSet.of([example('a', 't'), example('b', 't')], { cap: 4 })
    const writes = [
      [example('c', 't'), example('A', 't')],
      [],
      [example('d', 't'), example('e', 't')],
    ]
    let steps = 0
    const counted = function* () {
      const inner = set.withEachSteps(writes)
      for (;;) {
        const step = inner.next()
        if (step.done) return step.value
        steps += 1
        yield
      }
    }
    // Sliced with a 0 ms slice: a turn of the loop between every two examples.
    const sliced = await runStepsSliced(counted(), undefined, 0)
    const whole = set.withEach(writes)
    expect(steps).toBe(4)
    expect(sliced.changes).toEqual(whole.changes)
    expect(sliced.set.examples).toEqual(whole.set.examples)
    expect(sliced.set.version).toBe(whole.set.version)
  })

  it('checks known tools in slices with the error of the check in one piece, hint and subject included (round 55; fails before: no hint, no subject)', async () => {
    const examples = [example('a', 't'), example('b', 'gone.one'), example('c', 'gone.two')]
    const has = (id: string) => id === 't'
    const hint = (unknown: readonly string[]) => `(${unknown.length} unknown, a hint)`
    let whole: unknown
    try {
      assertKnownTools('lib', examples, has, undefined, hint, 'Feedback names')
    } catch (error) {
      whole = error
    }
    const sliced = await assertKnownToolsSliced(
      'lib',
      examples,
      has,
      undefined,
      hint,
      'Feedback names',
    ).then(
      () => undefined,
      (error: unknown) => error,
    )
    expect(isToolselError(whole)).toBe(true)
    expect(isToolselError(sliced)).toBe(true)
    if (!isToolselError(whole) || !isToolselError(sliced)) return
    expect(sliced.code).toBe(whole.code)
    expect(sliced.message).toBe(whole.message)
    expect(sliced.message).toContain('Feedback names')
    expect(sliced.message).toContain('a hint')
    await expect(assertKnownToolsSliced('lib', examples.slice(0, 1), has)).resolves.toBeUndefined()
  })

  it('copies the set once for a batch of writes, not once per write', () => {
    // Until round 45 each write of a batch copied the whole set: 1,000 feedback writes queued
    // behind a rebuild on a set of 20,000 held the event loop for seconds in one piece.
    const size = 20_000
    const set = ExampleSet.of(
      Array.from({ length: size }, (_, at) => example(`known request ${at}`, 't')),
      { cap: size },
    )
    const writes = Array.from({ length: 1_000 }, (_, at) => [example(`new request ${at}`, 't')])
    set.with(writes[0]) // keys the set (once per set, in either case)
    // Counted, not timed: a timing bound (100 times one write) failed at load >= 10 (round 49).
    // withEach copies with Array.prototype.slice only: the elements its slices copy.
    const copied = (work: () => void) => {
      let count = 0
      const slice = Array.prototype.slice
      const spy = vi.spyOn(Array.prototype, 'slice').mockImplementation(function (
        this: unknown[],
        ...args: [number?, number?]
      ) {
        const copy = slice.apply(this, args)
        count += copy.length
        return copy
      })
      try {
        work()
      } finally {
        spy.mockRestore()
      }
      return count
    }
    const one = copied(() => set.with(writes[1]))
    let batch: ReturnType<ExampleSet['withEach']> | undefined
    const all = copied(() => (batch = set.withEach(writes)))
    expect(batch!.set.size).toBe(size)
    expect(batch!.set.examples.at(-1)?.instruction).toBe('new request 999')
    // One write to a full set copies it (and drops the oldest); the batch copies about as much
    // (plus its own 1,000), where a copy per write would be 1,000 times that (40 million).
    expect(one).toBeGreaterThanOrEqual(size)
    expect(all).toBeLessThan(2 * one)
  })

  it('writes the same bytes sliced as in one piece', async () => {
    const set = ExampleSet.of(
      Array.from({ length: 600 }, (_, at) => example(`é ${at} "q" \ud83d\ude00`, `t${at % 7}`)),
    )
    const chunks = await set.toJsonLineChunksSliced()
    // Chunks of 256 lines, never concatenated in the save.
    expect(chunks.map((chunk) => chunk.toString().split('\n').length - 1)).toEqual([256, 256, 88])
    expect(Buffer.concat(chunks).equals(Buffer.from(set.toJsonLines()))).toBe(true)
  })

  it('prunes tool ids a replaced library lacks and drops examples left without tools', () => {
    const set = ExampleSet.of([
      example('a', 'keep', 'gone'),
      example('b', 'gone'),
      example('c', 'keep'),
    ])
    const pruned = set.prune((id) => id === 'keep')
    expect(pruned.removedToolIds).toEqual(['gone'])
    expect(pruned.droppedExamples).toBe(1)
    expect(pruned.set.examples).toEqual([example('a', 'keep'), example('c', 'keep')])
    expect(pruned.set.version).toBe(set.version + 1)
    expect(set.prune(() => true).set).toBe(set)
  })

  it('writes JSON Lines that parse back to the same set (same hash)', () => {
    const set = ExampleSet.of([example('a "quoted"\nline', 't1', 't2'), example('b', 't3')])
    const back = ExampleSet.of(parseExamplesText(set.toJsonLines(), 'x'))
    expect(back.contentHash).toBe(set.contentHash)
  })
})

describe('parseExamplesText and assertKnownTools', () => {
  it('reads JSON Lines and JSON arrays', () => {
    const lines = '{"instruction":"a","tools":["t"]}\n\n{"instruction":"b","tools":["t","t"]}\n'
    expect(parseExamplesText(lines, 'f')).toEqual([example('a', 't'), example('b', 't')])
    expect(parseExamplesText('[{"instruction":"a","tools":["t"]}]', 'f')).toEqual([
      example('a', 't'),
    ])
    expect(parseExamplesText('  ', 'f')).toEqual([])
  })

  it('reads a file with a byte-order mark and CRLF line ends (index --examples from Windows)', () => {
    const lines = '\uFEFF{"instruction":"a","tools":["t"]}\r\n{"instruction":"b","tools":["t"]}\r\n'
    expect(parseExamplesText(lines, 'f')).toEqual([example('a', 't'), example('b', 't')])
    expect(parseExamplesText('\uFEFF[{"instruction":"a","tools":["t"]}]', 'f')).toEqual([
      example('a', 't'),
    ])
  })

  it('names the line and field of a bad record', () => {
    const fail = (text: string) => {
      try {
        parseExamplesText(text, 'ex.jsonl')
      } catch (error) {
        if (isToolselError(error, 'INVALID_INPUT')) return error.message
      }
      throw new Error('expected INVALID_INPUT')
    }
    expect(fail('{"instruction":"a","tools":["t"]}\n{"instruction":"b","tools":[]}')).toContain(
      'ex.jsonl line 2: field "tools"',
    )
    expect(fail('{"instruction":"a"')).toContain('ex.jsonl line 1: not JSON')
    expect(fail('{"instruction":"a","tools":["t"],"extra":1}')).toContain('line 1')
  })

  it('refuses unknown tool ids, naming all of them', () => {
    expect(() =>
      assertKnownTools(
        'lib',
        [example('a', 'ok', 'x'), example('b', 'y', 'x')],
        (id) => id === 'ok',
      ),
    ).toThrow('Usage examples name tools that library "lib" does not have: "x", "y".')
  })

  it('names the file and the lines of every unknown tool id in a file of examples', async () => {
    const lines = [
      '{"instruction":"a","tools":["ok"]}',
      '',
      '{"instruction":"b","tools":["ok","x"]}',
      '{"instruction":"c","tools":["y","x"]}',
    ].join('\n')
    const { examples, from } = await examplesWithPlaces(lines, 'ex.jsonl')
    expect(examples).toEqual(parseExamplesText(lines, 'ex.jsonl'))
    expect(from.places).toEqual(['line 1', 'line 3', 'line 4'])
    expect(() => assertKnownTools('lib', examples, (id) => id === 'ok', from)).toThrow(
      'Invalid usage examples in ex.jsonl: library "lib" has no tool "x" (line 3, line 4), "y" (line 4). Name tools by their ids in the library, as `toolsel select "<instruction>" --library lib --json` shows them. None of the file was used.',
    )
    const array = await examplesWithPlaces('[{"instruction":"a","tools":["z"]}]', 'ex.json')
    expect(() => assertKnownTools('lib', array.examples, () => false, array.from)).toThrow(
      'Invalid usage examples in ex.json: library "lib" has no tool "z" (item 1). Name tools',
    )
  })
})
