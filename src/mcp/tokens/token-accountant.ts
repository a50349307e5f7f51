/**
 * What iterative tool loading saves: tokens of every tool listing in scope (what an agent pays
 * when a client puts all tools in its context) against tokens of what a response actually
 * loaded. Per-tool counts are cached by content hash, so a re-synced library only re-counts the
 * tools that changed.
 * @module
 */
import { toolContentHash, type Tool } from '../../library/tool.ts'
import type { ToolLibrary } from '../../library/tool-library.ts'
import { createTimeSlicer } from '../../time-slicer.ts'
import type { TokenCounter } from './token-counter.ts'

/** The `tokens` block of a search_tools / select_tools response. */
export interface TokenSavings {
  /** The counter used (`qwen3`, `tokenizer:<dir>`, `estimate:chars/4.5`). */
  counter: string
  /**
   * True when a real tokenizer counted every text whole; false for the estimate, and when some
   * text (a tool's listing, the response) was longer than the counter encodes whole
   * (`TokenCounter.maxExactChars`: 32,768 characters) and counted as its head scaled. A sampled
   * `allTools` says so in `sampledTools`.
   */
  exact: boolean
  /** Tokens to list every tool in scope with its full schema. */
  allTools: number
  /** Tokens of this response's payload. */
  loaded: number
  /**
   * `allTools - loaded`, at least 0: a scope smaller than the response (an empty gateway
   * library: `allTools` 0) avoided nothing, it did not cost tokens (it read −8 there).
   */
  avoided: number
  /**
   * Set when the scope holds more than `SAMPLE_FROM_TOOLS` tools: `allTools` is then the mean
   * of this many evenly spread tools times the tool count, not a sum over every tool.
   */
  sampledTools?: number
}

/**
 * Scopes larger than this get `allTools` from an even sample of their tools. At 50,000 the first
 * call on a fresh 20k-tool library counted every tool: 5.8-6.4 s with the Qwen3 tokenizer
 * against 1.4-1.7 s for the 4,000-tool sample, which came within 0.9% (20k) and 3.0% (10k) of the
 * exact sum (round 17; docs/mcp.md).
 */
export const SAMPLE_FROM_TOOLS = 5_000

/** Tools counted for a sampled `allTools`. */
export const SAMPLED_TOOLS = 4_000

/**
 * Per-tool counts kept in each of the cache's two generations: at most twice this many are held.
 * Until round 45 the cache kept every tool's count it ever made: a gateway upstream that changes
 * its descriptions at every listing (once a second by default), or uploads of ever-new tools,
 * added up to SAMPLE_FROM_TOOLS entries per version counted, for as long as the process ran.
 * 32,768 holds six fully counted libraries; a tool counted in the older generation moves to
 * the newer one when it is counted again.
 */
export const MAX_CACHED_TOOL_COUNTS = 32_768

export interface TokenAccountantOptions {
  /** Default SAMPLE_FROM_TOOLS. */
  sampleFrom?: number
  /** Default SAMPLED_TOOLS. */
  sampleSize?: number
  /** Default MAX_CACHED_TOOL_COUNTS. */
  maxCachedToolCounts?: number
}

/** A tool as a client lists it to a model: the MCP `tools/list` entry, as compact JSON. */
export function toolListingText(tool: Tool): string {
  return JSON.stringify({
    name: tool.name,
    description: tool.description,
    inputSchema: tool.parameters,
  })
}

/** A count, and whether some text of it was too long to count whole (`maxExactChars`). */
interface Count {
  tokens: number
  scaled: boolean
}

async function countText(counter: TokenCounter, text: string): Promise<Count> {
  return {
    tokens: await counter.count(text),
    scaled: counter.maxExactChars !== undefined && text.length > counter.maxExactChars,
  }
}

export class TokenAccountant {
  readonly #load: () => Promise<TokenCounter>
  /** Per-tool counts by content hash, in two generations (see MAX_CACHED_TOOL_COUNTS). */
  #byTool = new Map<string, Count>()
  #byToolBefore = new Map<string, Count>()
  readonly #maxCachedToolCounts: number
  readonly #byLibrary = new Map<string, Count>()
  readonly #sampleFrom: number
  readonly #sampleSize: number

  /** `counter`: a counter, or a loader called on first use (tokenizers take a while to load). */
  constructor(
    counter: TokenCounter | (() => Promise<TokenCounter>),
    options: TokenAccountantOptions = {},
  ) {
    this.#load = typeof counter === 'function' ? counter : () => Promise.resolve(counter)
    this.#sampleFrom = options.sampleFrom ?? SAMPLE_FROM_TOOLS
    this.#sampleSize = Math.max(1, options.sampleSize ?? SAMPLED_TOOLS)
    this.#maxCachedToolCounts = Math.max(1, options.maxCachedToolCounts ?? MAX_CACHED_TOOL_COUNTS)
  }

  /** Per-tool counts held (at most twice `maxCachedToolCounts`). */
  get cachedToolCounts(): number {
    return this.#byTool.size + this.#byToolBefore.size
  }

  /** How many tools `libraryTokens` counts for `library`: all, or a sample of a large one. */
  countedTools(library: ToolLibrary): number {
    return library.size > this.#sampleFrom ? Math.min(this.#sampleSize, library.size) : library.size
  }

  get counter(): Promise<TokenCounter> {
    return this.#load()
  }

  /** Tokens of one tool's listing. */
  async toolTokens(tool: Tool): Promise<number> {
    return (await this.#toolTokens(await this.counter, toolContentHash(tool), () => tool)).tokens
  }

  /**
   * Tokens to list every tool of `library` (cached per content hash). The first count of a large
   * library is seconds of tokenizing: it yields to the event loop every few ms. Above
   * `sampleFrom` tools (5,000 by default) it is an estimate from `sampleSize` evenly spread tools
   * (their mean times the tool count; within a few per cent): counting a million tools took
   * minutes and parsed every tool into memory (a library loaded from its index reads them from
   * disk one at a time).
   */
  async libraryTokens(library: ToolLibrary): Promise<number> {
    return (await this.#libraryTokens(library)).tokens
  }

  async #libraryTokens(library: ToolLibrary): Promise<Count> {
    const cached = this.#byLibrary.get(library.contentHash)
    if (cached !== undefined) return cached
    const counter = await this.counter
    const slicer = createTimeSlicer()
    const total: Count = { tokens: 0, scaled: false }
    const add = (count: Count) => {
      total.tokens += count.tokens
      total.scaled ||= count.scaled
    }
    const counted = this.countedTools(library)
    // One tool at a time, read only when its count is not known: `library.tools` parsed every
    // tool in one piece (four tools of 7.9 MB, within the upload limits: ~400 ms of the loop).
    const tools = library.walk
    const count = async (position: number) => {
      await slicer.next()
      const hash = library.toolHashAt(position)
      add(await this.#toolTokens(counter, hash, () => tools.at(position)!))
    }
    if (counted < library.size) {
      for (let sample = 0; sample < counted; sample += 1) {
        await count(Math.floor(((sample + 0.5) * library.size) / counted))
      }
      total.tokens = Math.round((total.tokens * library.size) / counted)
    } else {
      for (let position = 0; position < library.size; position += 1) await count(position)
    }
    if (this.#byLibrary.size >= 256) this.#byLibrary.clear()
    this.#byLibrary.set(library.contentHash, total)
    return total
  }

  /** Savings of a response whose payload is `payload` (serialised as the response text is). */
  async savings(library: ToolLibrary, payload: unknown): Promise<TokenSavings> {
    const counter = await this.counter
    const allTools = await this.#libraryTokens(library)
    const loaded = await countText(counter, JSON.stringify(payload))
    const counted = this.countedTools(library)
    return {
      counter: counter.name,
      exact: counter.exact && !allTools.scaled && !loaded.scaled,
      allTools: allTools.tokens,
      loaded: loaded.tokens,
      avoided: Math.max(0, allTools.tokens - loaded.tokens),
      ...(counted < library.size && { sampledTools: counted }),
    }
  }

  async #toolTokens(counter: TokenCounter, hash: string, tool: () => Tool): Promise<Count> {
    const known = this.#byTool.get(hash)
    if (known !== undefined) return known
    const count =
      this.#byToolBefore.get(hash) ?? (await countText(counter, toolListingText(tool())))
    if (this.#byTool.size >= this.#maxCachedToolCounts) {
      this.#byToolBefore = this.#byTool
      this.#byTool = new Map()
    }
    this.#byTool.set(hash, count)
    return count
  }
}
