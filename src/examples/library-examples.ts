/**
 * What an indexed library holds of its usage examples: the set (stored with the index) and the
 * nearest-example memory built from it.
 * @module
 */
import { ExampleMemory } from './example-memory.ts'
import type { ExampleSet } from './example-set.ts'

export interface LibraryExamples {
  readonly set: ExampleSet
  readonly memory: ExampleMemory
}

export function createLibraryExamples(set: ExampleSet): LibraryExamples {
  return { set, memory: ExampleMemory.build(set.examples) }
}
