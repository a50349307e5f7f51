/**
 * Which tools a library's usage examples use together: per tool, how many examples used it and
 * the mean size of their tool sets; per pair, how many used both; per exact set, how many used
 * it. Built once per memory (every example write builds a new memory) and cached. Features of
 * the example-aware decision read it (example-decision.ts): a tool that past requests used with
 * the tools already chosen, and a set whose tools were used together, or whose size is what
 * requests for those tools needed.
 * @module
 */
import type { ExampleMemory } from './example-memory.ts'
import { runSteps, runStepsSliced, type Steps } from '../time-slicer.ts'
import type { UsageExample } from './usage-example.ts'

const pairKey = (a: string, b: string) => (a < b ? `${a}\u0001${b}` : `${b}\u0001${a}`)
export const toolSetKey = (tools: readonly string[]) => [...tools].sort().join('\u0001')

/** What a ToolCooccurrence counted (four maps of a few thousand entries: cheap to copy). */
export interface CooccurrenceCounts {
  readonly uses: Map<string, number>
  readonly sizes: Map<string, number>
  readonly pairs: Map<string, number>
  readonly sets: Map<string, number>
}

export class ToolCooccurrence {
  readonly #uses: Map<string, number>
  readonly #sizes: Map<string, number>
  readonly #pairs: Map<string, number>
  readonly #sets: Map<string, number>

  constructor(examples: readonly UsageExample[], counts?: CooccurrenceCounts) {
    this.#uses = counts?.uses ?? new Map()
    this.#sizes = counts?.sizes ?? new Map()
    this.#pairs = counts?.pairs ?? new Map()
    this.#sets = counts?.sets ?? new Map()
    if (!counts) runSteps(this.#count(examples))
  }

  /** The co-occurrence made of `counts` (another one's `counts`, e.g. from a worker thread). */
  static fromCounts(counts: CooccurrenceCounts): ToolCooccurrence {
    return new ToolCooccurrence([], counts)
  }

  /** What was counted. */
  get counts(): CooccurrenceCounts {
    return { uses: this.#uses, sizes: this.#sizes, pairs: this.#pairs, sets: this.#sets }
  }

  /** `new ToolCooccurrence(examples)`, yielding to the event loop every few milliseconds. */
  static async buildSliced(
    examples: readonly UsageExample[],
    signal?: AbortSignal,
  ): Promise<ToolCooccurrence> {
    const cooccurrence = new ToolCooccurrence([])
    await runStepsSliced(cooccurrence.#count(examples), signal)
    return cooccurrence
  }

  *#count(examples: readonly UsageExample[]): Steps<void> {
    for (const { tools } of examples) {
      for (let i = 0; i < tools.length; i += 1) {
        const id = tools[i]
        this.#uses.set(id, (this.#uses.get(id) ?? 0) + 1)
        this.#sizes.set(id, (this.#sizes.get(id) ?? 0) + tools.length)
        for (let j = i + 1; j < tools.length; j += 1) {
          const key = pairKey(id, tools[j])
          this.#pairs.set(key, (this.#pairs.get(key) ?? 0) + 1)
        }
      }
      const key = toolSetKey(tools)
      this.#sets.set(key, (this.#sets.get(key) ?? 0) + 1)
      yield
    }
  }

  /** Examples that used `id`. */
  uses(id: string): number {
    return this.#uses.get(id) ?? 0
  }

  /** Mean tool-set size of the examples that used `id` (0 for a tool without examples). */
  meanSize(id: string): number {
    const uses = this.#uses.get(id)
    return uses ? this.#sizes.get(id)! / uses : 0
  }

  /** Share of the examples using `given` that also used `id` (0 when `given` has none). */
  conditional(id: string, given: string): number {
    if (id === given) return 0
    const uses = this.#uses.get(given)
    return uses ? (this.#pairs.get(pairKey(id, given)) ?? 0) / uses : 0
  }

  /** Examples whose tool set is exactly `tools`. */
  setUses(tools: readonly string[]): number {
    return this.#sets.get(toolSetKey(tools)) ?? 0
  }
}

const built = new WeakMap<ExampleMemory, ToolCooccurrence>()

/** The co-occurrence of `memory`'s examples (built on first use, then cached with the memory). */
export function toolCooccurrence(memory: ExampleMemory): ToolCooccurrence {
  let cooccurrence = built.get(memory)
  if (!cooccurrence) built.set(memory, (cooccurrence = new ToolCooccurrence(memory.examples)))
  return cooccurrence
}

/** The co-occurrence of `memory` if it was built already (builds nothing). */
export function cachedToolCooccurrence(memory: ExampleMemory): ToolCooccurrence | undefined {
  return built.get(memory)
}

/** Caches `cooccurrence` (counted from `memory`'s examples elsewhere, e.g. on a worker thread). */
export function adoptToolCooccurrence(memory: ExampleMemory, cooccurrence: ToolCooccurrence): void {
  if (!built.has(memory)) built.set(memory, cooccurrence)
}

/** `toolCooccurrence`, built yielding to the event loop (see `ToolCooccurrence.buildSliced`). */
export async function toolCooccurrenceSliced(
  memory: ExampleMemory,
  signal?: AbortSignal,
): Promise<ToolCooccurrence> {
  if (!built.has(memory)) {
    const cooccurrence = await ToolCooccurrence.buildSliced(memory.examples, signal)
    if (!built.has(memory)) built.set(memory, cooccurrence)
  }
  return built.get(memory)!
}
