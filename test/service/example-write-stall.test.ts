/**
 * #10 hardening ("nobody who reaches the port can freeze the process"): a write of usage
 * examples to a library with thousands of them rebuilds and prepares the new version while the
 * service keeps answering from the old one; the swap happens once the new version is ready, and
 * a write that fails (aborted) leaves the old version served.
 */
import { readFileSync } from 'node:fs'
import { join } from 'node:path'
import { describe, expect, it } from 'vitest'
import { ExampleSet } from '../../src/examples/example-set.ts'
import { ExampleMemory } from '../../src/examples/example-memory.ts'
import { busyBuildWorker } from '../../src/examples/memory-build-thread.ts'
import { prepareExampleMemory } from '../../src/examples/memory-selection.ts'
import { ToolLibrary } from '../../src/library/tool-library.ts'
import { LibraryRegistry } from '../../src/service/library-registry.ts'
import { buildIndexedLibrary, loadIndexedLibrary } from '../../src/store/library-lifecycle.ts'
import { SAMPLE_TOOLS } from '../helpers/sample-tools.ts'
import { syntheticExamples } from '../helpers/synthetic-examples.ts'
import { createTestApp } from '../server/test-service.ts'

const EXAMPLES = syntheticExamples(12_000)

async function serviceWithExamples() {
  const { service } = await createTestApp({ start: false })
  const indexed = await buildIndexedLibrary(
    new ToolLibrary('sample', SAMPLE_TOOLS),
    service.config,
    {
      examples: ExampleSet.of(EXAMPLES, { cap: service.config.library.maxExamples }),
    },
  )
  await service.start([indexed])
  return service
}

/** This thread's CPU time in ms (/proc/thread-self/schedstat), else the wall clock. */
function threadClockMs(): number {
  try {
    return Number(readFileSync('/proc/thread-self/schedstat', 'utf8').split(' ')[0]) / 1e6
  } catch {
    return performance.now()
  }
}

const versionOf = (service: Awaited<ReturnType<typeof serviceWithExamples>>) =>
  service.library('sample').examples!.set.version

describe('a usage-example write on a large library', () => {
  it('keeps answering from the old version while the new one is built, then swaps', async () => {
    const service = await serviceWithExamples()
    const before = versionOf(service)
    // What the preparation costs in one piece (the stall before the fix).
    const started = performance.now()
    const memory = ExampleMemory.build(service.library('sample').examples!.set.examples)
    prepareExampleMemory({ memory }, service.config.examples)
    const synchronousMs = performance.now() - started

    // The longest the event loop went without running a task (an immediate chain ticking apart),
    // counted in this thread's CPU time where Linux tells it: on a loaded machine the wall clock
    // also counts the waits for a core (and the build worker's thread is one more to share with).
    let longestStall = 0
    let pending = true
    let last = threadClockMs()
    const tick = () => {
      const now = threadClockMs()
      longestStall = Math.max(longestStall, now - last)
      last = now
      if (pending) setImmediate(tick)
    }
    setImmediate(tick)
    const write = service
      .addExamples('sample', [
        { instruction: 'wake me at six tomorrow', tools: ['weather.get_forecast'] },
      ])
      .finally(() => (pending = false))
    const seen: number[] = []
    while (pending) {
      // A client's next request arrives as a new event-loop task.
      await new Promise((resolve) => setImmediate(resolve))
      await service.select({ instruction: 'send mail to Ann about the weather', library: 'sample' })
      if (pending) seen.push(versionOf(service))
    }
    const result = await write
    expect(seen.length).toBeGreaterThan(0)
    // The old version until the new one is committed; the new one from then on (it is swapped
    // in at the commit, under the library's lock, a little before the write's call returns).
    expect(seen[0]).toBe(before)
    expect(seen).toEqual([...seen].sort((a, b) => a - b))
    expect(
      [...new Set(seen)].every((version) => version === before || version === before + 1),
    ).toBe(true)
    expect(result).toMatchObject({ added: 1, version: before + 1, examples: EXAMPLES.length + 1 })
    expect(versionOf(service)).toBe(before + 1)
    // Slices of ~10 ms (and the collector's pauses): far below the work done in one piece (before
    // the fix the write stalled for about half of it: 445 ms of 740 here). A loose bound for a
    // busy machine (2 shared cores: 87-123 ms measured).
    expect(longestStall).toBeLessThan(Math.max(250, synchronousMs / 3))
  }, 60_000)

  it('leaves the old version served when the write fails (aborted mid-build)', async () => {
    const service = await serviceWithExamples()
    const before = service.library('sample')
    const controller = new AbortController()
    const write = service.addExamples(
      'sample',
      [{ instruction: 'order a pizza for tonight', tools: ['weather.get_forecast'] }],
      { signal: controller.signal },
    )
    setTimeout(() => controller.abort(), 20)
    await expect(write).rejects.toMatchObject({ code: 'ABORTED' })
    expect(service.library('sample')).toBe(before)
    expect(service.listLibraries()[0].examples.count).toBe(EXAMPLES.length)
    // The next write goes through.
    const next = await service.addExamples('sample', [
      { instruction: 'order a pizza for tonight', tools: ['weather.get_forecast'] },
    ])
    expect(next).toMatchObject({ added: 1, version: before.examples!.set.version + 1 })
  }, 60_000)

  it('answers INTERNAL and leaves the old version served and saved when the build worker dies', async () => {
    const service = await serviceWithExamples()
    await service.addExamples('sample', [
      { instruction: 'a first saved write', tools: ['weather.get_forecast'] },
    ])
    const before = service.library('sample')
    const saved = () =>
      loadIndexedLibrary(join(service.config.library.indexDir, 'sample'), service.config)
    const savedBefore = (await saved()).manifest.examples
    const write = service.addExamples('sample', [
      { instruction: 'lost with its worker', tools: ['weather.get_forecast'] },
    ])
    while (!busyBuildWorker()) await new Promise((resolve) => setImmediate(resolve))
    await busyBuildWorker()!.terminate()
    await expect(write).rejects.toMatchObject({ code: 'INTERNAL' })
    expect(service.library('sample')).toBe(before)
    expect((await saved()).manifest.examples).toEqual(savedBefore)
    const next = await service.addExamples('sample', [
      { instruction: 'lost with its worker', tools: ['weather.get_forecast'] },
    ])
    expect(next).toMatchObject({ added: 1, version: before.examples!.set.version + 1 })
  }, 60_000)
})

describe('example writes that arrive during a write', () => {
  it('are applied together by one rebuild, each answered with its own change', async () => {
    const service = await serviceWithExamples()
    const before = versionOf(service)
    const lines = (service.logger as unknown as { lines: string[] }).lines
    const rebuilds = () => lines.filter((line) => line.includes('usage examples updated')).length
    const first = service.addExamples('sample', [
      { instruction: 'first write of the burst', tools: ['weather.get_forecast'] },
    ])
    // The first write is being built; these wait for it, then go together.
    await new Promise((resolve) => setImmediate(resolve))
    const burst = [
      service.addExamples('sample', [
        { instruction: 'second write of the burst', tools: ['weather.get_forecast'] },
      ]),
      service.addExamples('sample', [{ instruction: 'bad write', tools: ['no.such_tool'] }]),
      service.addExamples('sample', [
        { instruction: 'third write of the burst', tools: ['weather.get_forecast'] },
        { instruction: 'Second  write of the BURST', tools: ['weather.get_forecast'] },
      ]),
    ]
    const settled = await Promise.allSettled([first, ...burst])
    expect(settled[0]).toMatchObject({
      status: 'fulfilled',
      value: { added: 1, version: before + 1, examples: EXAMPLES.length + 1 },
    })
    const together = { version: before + 3, examples: EXAMPLES.length + 3 }
    expect(settled[1]).toMatchObject({ status: 'fulfilled', value: { added: 1, ...together } })
    expect(settled[2]).toMatchObject({ status: 'rejected', reason: { code: 'INVALID_INPUT' } })
    expect(settled[3]).toMatchObject({
      status: 'fulfilled',
      value: { added: 1, duplicates: 1, ...together },
    })
    expect(rebuilds()).toBe(2)
    expect(versionOf(service)).toBe(before + 3)
    expect(service.library('sample').examples!.set.size).toBe(EXAMPLES.length + 3)
  }, 60_000)
})

describe('LibraryRegistry.set', () => {
  it('keeps the old version when preparing the new one throws', async () => {
    const { service } = await createTestApp({ start: false })
    const build = () => buildIndexedLibrary(new ToolLibrary('sample', SAMPLE_TOOLS), service.config)
    let failing = false
    const registry = new LibraryRegistry({
      prepare: () => {
        if (failing) throw new Error('prepare failed')
      },
    })
    const first = await build()
    registry.set(first)
    failing = true
    expect(() => registry.set({ ...first })).toThrow('prepare failed')
    expect(registry.get('sample')).toBe(first)
  })
})
