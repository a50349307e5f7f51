/**
 * Counting the tokens an agent pays for text put into its context. The real Qwen3 tokenizer is
 * used when it can be loaded; otherwise a character-based estimate, validated against it.
 * @module
 */

export interface TokenCounter {
  /** What produced the counts: `qwen3`, `tokenizer:<dir>` or `estimate:chars/4.5`. */
  readonly name: string
  /** True for a real tokenizer, false for the estimate. */
  readonly exact: boolean
  /**
   * Longest text a real tokenizer encodes whole: a longer one counts as its head's tokens scaled
   * by its length, which is not exact (`TokenSavings.exact` says so). Absent: every text whole.
   */
  readonly maxExactChars?: number
  /** Milliseconds a real tokenizer took to load, in its worker thread. Absent: the estimate. */
  readonly loadMs?: number
  /** Tokens in `text`, without special tokens. */
  count(text: string): Promise<number>
  /**
   * Frees what the counter holds (a tokenizer's worker thread); `count` throws after it. Absent
   * when there is nothing to free (the estimate).
   */
  close?(): Promise<void>
}

/**
 * Characters per token of the estimate, measured with the Qwen3 tokenizer on tool listings
 * (`{name, description, inputSchema}` as compact JSON): the demo library's 197 tools have
 * 108,013 characters and 23,921 tokens (4.52 per token; per tool 3.9-5.3, mean absolute error of
 * the estimate 4%); ToolBench G3's 1,415 tools have 4.19 per token (error 7%). Qwen3's
 * vocabulary has tokens for common JSON fragments (`":{"`, `"type":"string"`), so the usual
 * chars/4 rule over-counts schemas by about 12%. Re-measure with `npx tsx bench/token-savings.ts`.
 */
export const CHARS_PER_TOKEN = 4.5

/** The estimate used when no tokenizer can be loaded: `ceil(characters / CHARS_PER_TOKEN)`. */
export function createEstimateTokenCounter(charsPerToken = CHARS_PER_TOKEN): TokenCounter {
  return {
    name: `estimate:chars/${charsPerToken}`,
    exact: false,
    count: (text) => Promise.resolve(Math.ceil(text.length / charsPerToken)),
  }
}
