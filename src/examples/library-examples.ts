/**
 * What an indexed library holds of its usage examples: the set (stored with the index), the
 * nearest-example memory built from it and, with `examples.denseMap`, the library's own dense
 * space learned from them (example-dense-map.ts).
 * @module
 */
import type { ExamplesConfig } from '../config/schema.ts'
import { denseToolVectors } from '../learn/dense-encoder.ts'
import type { ToolLibrary } from '../library/tool-library.ts'
import { ExampleDenseSpace, learnExampleMap } from './example-dense-map.ts'
import { ExampleMemory } from './example-memory.ts'
import { buildMemoryOnWorker, WORKER_MIN_EXAMPLES } from './memory-build-thread.ts'
import { prepareExampleMemorySliced } from './memory-selection.ts'
import type { ExampleSet } from './example-set.ts'

export interface LibraryExamples {
  readonly set: ExampleSet
  readonly memory: ExampleMemory
  /**
   * The library's own dense space (`examples.denseMap`), when its examples taught one (the
   * map's held-out check passed) and the word vectors are available.
   */
  readonly dense?: ExampleDenseSpace
}

/**
 * The library's examples with, when `config.denseMap` is on, its own dense space: learned from
 * the examples before the version is served (deterministic, so a restart or a reload learns the
 * same map; the trainer yields to the event loop between batches). Without it the library's
 * tools are not read (a large library's tools stay out of the heap). The example memory is built
 * and prepared (self-check, co-occurrence, word pairs) on a worker thread from
 * WORKER_MIN_EXAMPLES examples (memory-build-thread.ts), below that on the main thread yielding
 * to the event loop every few milliseconds (`prepareExampleMemorySliced`), so a write of usage
 * examples, a start-up load or another worker's change never stalls the requests being served
 * meanwhile; what is returned is ready.
 */
export async function learnLibraryExamples(
  set: ExampleSet,
  library: ToolLibrary,
  config: ExamplesConfig,
  options: { signal?: AbortSignal } = {},
): Promise<LibraryExamples> {
  const memory =
    set.size >= WORKER_MIN_EXAMPLES
      ? await buildMemoryOnWorker(set.examples, config, options.signal)
      : await ExampleMemory.buildSliced(set.examples, { signal: options.signal })
  let dense: ExampleDenseSpace | undefined
  if (config.denseMap && set.size > 0) {
    const vectors = await denseToolVectors()
    if (vectors) {
      const tools = library.tools
      const { map } = await learnExampleMap(tools, set.examples, vectors)
      if (map) dense = new ExampleDenseSpace(tools, map, vectors)
    }
  }
  const examples: LibraryExamples = { set, memory, ...(dense && { dense }) }
  await prepareExampleMemorySliced(examples, config, options.signal)
  return examples
}
