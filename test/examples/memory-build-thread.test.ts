/**
 * #10 hardening: a library's example memory built on a worker thread (memory-build-thread.ts,
 * build-worker.ts) is the memory the main thread builds (same parts, same self-check,
 * co-occurrence and word-pair memory, same neighbours); an abort stops it; a worker that dies
 * fails the build with INTERNAL, and the next build starts a new one.
 */
import { describe, expect, it } from 'vitest'
import { parseConfig } from '../../src/config/load-config.ts'
import { packCounts, unpackCounts, unpackExamples } from '../../src/examples/build-worker.ts'
import {
  cachedToolCooccurrence,
  ToolCooccurrence,
} from '../../src/examples/example-cooccurrence.ts'
import { cachedWordPairs, ExampleMemory } from '../../src/examples/example-memory.ts'
import { ExampleSet } from '../../src/examples/example-set.ts'
import {
  buildMemoryOnWorker,
  busyBuildWorker,
  packExamples,
} from '../../src/examples/memory-build-thread.ts'
import {
  cachedSelfCheck,
  exampleMemoryFor,
  memorySelfCheck,
} from '../../src/examples/memory-selection.ts'
import { runSteps } from '../../src/time-slicer.ts'
import { syntheticExamples } from '../helpers/synthetic-examples.ts'

const config = parseConfig({}).examples
const EXAMPLES = ExampleSet.of(syntheticExamples(3000), { cap: 20_000 }).examples

describe('the example memory built on a worker thread', () => {
  it('is the memory built on the main thread, with its preparation cached', async () => {
    const memory = await buildMemoryOnWorker(EXAMPLES, config)
    const local = ExampleMemory.build(EXAMPLES)
    expect(memory.examples).toBe(EXAMPLES)
    expect(memory.parts).toEqual(local.parts)
    const options = exampleMemoryFor({ memory }, config)!.options
    expect(cachedSelfCheck(memory, options)).toEqual(memorySelfCheck(local, options))
    expect(cachedToolCooccurrence(memory)!.counts).toEqual(new ToolCooccurrence(EXAMPLES).counts)
    const pairs = cachedWordPairs(memory)!
    expect(pairs.parts).toEqual(ExampleMemory.build(EXAMPLES, { wordPairs: true }).parts)
    for (const query of ['send mail to ann', 'weather forecast in paris tomorrow', 'zzz']) {
      expect(memory.neighbors(query, 20)).toEqual(local.neighbors(query, 20))
      expect(pairs.neighbors(query, 20)).toEqual(
        ExampleMemory.build(EXAMPLES, { wordPairs: true }).neighbors(query, 20),
      )
    }
  }, 60_000)

  it('gets the examples packed, every character and tool id intact', () => {
    const odd = [
      { instruction: 'çà et là 🚀 "quoted" \\ back \ud800 lone', tools: ['a\nb', 'ünï'] },
      { instruction: 'x', tools: ['a\nb'] },
      { instruction: '', tools: [] },
    ]
    expect(unpackExamples(runSteps(packExamples(odd)))).toEqual(odd)
    const counts = new Map([
      ['a\u0001b', 2],
      ['', 1],
      ['🚀 \udc00', 0.5],
    ])
    expect([...runSteps(unpackCounts(packCounts(counts)))]).toEqual([...counts])
  })

  it('stops on abort, and the next build goes through', async () => {
    const controller = new AbortController()
    const build = buildMemoryOnWorker(EXAMPLES, config, controller.signal)
    while (!busyBuildWorker()) await new Promise((resolve) => setImmediate(resolve))
    controller.abort()
    await expect(build).rejects.toMatchObject({ code: 'ABORTED' })
    const memory = await buildMemoryOnWorker(EXAMPLES, config)
    expect(memory.size).toBe(EXAMPLES.length)
  }, 60_000)

  it('fails with INTERNAL when its thread dies, and the next build starts another', async () => {
    const build = buildMemoryOnWorker(EXAMPLES, config)
    while (!busyBuildWorker()) await new Promise((resolve) => setImmediate(resolve))
    const thread = busyBuildWorker()!
    await thread.terminate()
    await expect(build).rejects.toMatchObject({ code: 'INTERNAL' })
    const memory = await buildMemoryOnWorker(EXAMPLES, config)
    expect(memory.parts).toEqual(ExampleMemory.build(EXAMPLES).parts)
    expect(busyBuildWorker()).toBeUndefined()
  }, 60_000)
})
