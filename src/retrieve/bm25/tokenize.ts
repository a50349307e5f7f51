/**
 * The text analysis shared by indexing and querying: split identifiers (camelCase, snake_case,
 * kebab-case, dotted names) and punctuation, lower-case, drop English stop words, stem (Porter2).
 * Words in scripts without spaces (Chinese, Japanese, Korean, Thai…) are segmented instead.
 * Bump TOKENIZER_VERSION whenever the output for some input changes: indexes record it and are
 * refused when it differs, because query and index tokens must agree.
 *
 * Time is linear in the text's length: words are cut to MAX_TOKEN_CHARS before stemming (the
 * Porter2 stemmer's regular expressions backtrack, costing the square of a word's length: one
 * 80k-character word took minutes), and every expression here matches a bounded window per
 * position.
 * @module
 */
import { createRequire } from 'node:module'
import { FNV_OFFSET, FNV_PRIME } from '../../library/id-table.ts'
import { NO_SPACE_SCRIPT, segmentWords } from './segment-words.ts'

const require = createRequire(import.meta.url)
// The Porter2 stemmer that wink-nlp-utils' `string.stem` wraps, required directly: wink-nlp-utils
// loads an English language model on import (about 50 MiB of memory, unused here).
const porter2 = require('wink-porter2-stemmer') as (word: string) => string

export const TOKENIZER_VERSION = 3

/**
 * Longest index term, in characters; longer words are cut to it before stemming. No English word
 * comes near it; identifiers that long are split at their case and punctuation changes first.
 */
export const MAX_TOKEN_CHARS = 64

/** English function words plus request filler ("please", "could") that never name a capability. */
export const STOP_WORDS: ReadonlySet<string> = new Set(
  `a about above after again against all am an and any are aren't as at be because been before being
  below between both but by can can't cannot could couldn't did didn't do does doesn't doing don't down
  during each few for from further had hadn't has hasn't have haven't having he he'd he'll he's her here
  here's hers herself him himself his how how's i i'd i'll i'm i've if in into is isn't it it's its itself
  let's me more most mustn't my myself no nor not of off on once only or other ought our ours ourselves
  out over own same shan't she she'd she'll she's should shouldn't so some such than that that's the their
  theirs them themselves then there there's these they they'd they'll they're they've this those through
  to too under until up very was wasn't we we'd we'll we're we've were weren't what what's when when's
  where where's which while who who's whom why why's with won't would wouldn't you you'd you'll you're
  you've your yours yourself yourselves also just please could would kindly s t d ll m re ve`.split(
    /\s+/,
  ),
)

const stemCache = new Map<string, string>()
const STEM_CACHE_LIMIT = 200_000

function stem(word: string): string {
  let stemmed = stemCache.get(word)
  if (stemmed === undefined) {
    // Porter2 is meant for alphabetic words; leave tokens with digits (v2, 3d, 404) as they are.
    stemmed = /\d/.test(word) ? word : porter2(word)
    if (stemCache.size < STEM_CACHE_LIMIT) stemCache.set(word, stemmed)
  }
  return stemmed
}

/** Splits identifiers into words: `getWeatherForecast` → `get Weather Forecast`, `HTTPServer` → `HTTP Server`. */
export function splitIdentifiers(text: string): string {
  return text
    .replace(/([\p{Ll}\p{N}])(\p{Lu})/gu, '$1 $2')
    .replace(/(\p{Lu})(?=\p{Lu}\p{Ll})/gu, '$1 ')
}

/**
 * Terms of recently seen space-separated chunks of text. A library repeats its words (a million
 * tools have a few hundred thousand distinct chunks), so most chunks are analysed once; the
 * cache is cleared when full. Chunks longer than `MAX_CACHED_CHUNK` are not kept.
 */
const chunkCache = new Map<string, readonly string[]>()
const CHUNK_CACHE_LIMIT = 100_000
const MAX_CACHED_CHUNK = 100

/** `tokenizeText` of a chunk, kept in `chunkCache` when it is short enough. */
function analyseChunk(chunk: string): readonly string[] {
  const terms = tokenizeText(chunk)
  if (chunk.length <= MAX_CACHED_CHUNK) {
    if (chunkCache.size >= CHUNK_CACHE_LIMIT) chunkCache.clear()
    chunkCache.set(chunk, terms)
  }
  return terms
}

/**
 * Text → index terms. Deterministic; the same function serves documents and queries.
 *
 * The text is cut at ASCII spaces, tabs and line breaks and each piece is analysed on its own
 * (memoised): the same terms as analysing the whole text, because every step below looks only
 * at neighbouring non-space characters (identifier splits, lower-casing, the word split, which
 * treats those characters as separators anyway). A test compares both on real and random text.
 */
export function tokenize(text: string): string[] {
  const terms: string[] = []
  const length = text.length
  let start = 0
  while (start < length) {
    let end = start
    while (end < length && !isAsciiSpace(text.charCodeAt(end))) end += 1
    if (end > start) {
      const chunk = start === 0 && end === length ? text : text.slice(start, end)
      const chunkTerms = chunkCache.get(chunk) ?? analyseChunk(chunk)
      for (let at = 0; at < chunkTerms.length; at += 1) terms.push(chunkTerms[at])
    }
    start = end + 1
  }
  return terms
}

/**
 * Terms of the most recent query texts. A request analyses the same texts twice: BM25 retrieves
 * its steps and whole instruction, then the learned selector's features read the same texts'
 * terms. Small (a request has a few texts), cleared when full, and never mutated by callers.
 */
const queryCache = new Map<string, readonly string[]>()
const QUERY_CACHE_LIMIT = 64
const MAX_CACHED_QUERY = 4096

/** `tokenize` for query texts, memoised over the last few texts (see `queryCache`). */
export function tokenizeQuery(text: string): readonly string[] {
  let terms = queryCache.get(text)
  if (terms === undefined) {
    terms = tokenizeQueryText(text)
    if (text.length <= MAX_CACHED_QUERY) {
      if (queryCache.size >= QUERY_CACHE_LIMIT) queryCache.clear()
      queryCache.set(text, terms)
    }
  }
  return terms
}

/**
 * The chunks of query texts, direct-mapped by the hash of their characters in the text (`idHash`
 * of the range): a chunk found here is neither cut out of its text nor looked up by string, and
 * the table (a request's words are mostly common ones) stays in the processor's cache between
 * requests, where the documents' `chunkCache` holds up to 100,000 chunks.
 */
const QUERY_CHUNK_SLOTS = 4096
const queryChunkTexts: Array<string | undefined> = new Array(QUERY_CHUNK_SLOTS)
const queryChunkTerms: Array<readonly string[]> = new Array(QUERY_CHUNK_SLOTS)

/** `tokenize` of a query text (the same terms), its chunks looked up in the query chunks first. */
function tokenizeQueryText(text: string): string[] {
  const terms: string[] = []
  const length = text.length
  let start = 0
  while (start < length) {
    // The chunk's end and its hash (`idHash` of the range) in one pass over its characters.
    let end = start
    let hash = FNV_OFFSET
    for (; end < length; end += 1) {
      const code = text.charCodeAt(end)
      if (isAsciiSpace(code)) break
      hash = Math.imul(hash ^ code, FNV_PRIME)
    }
    if (end > start) {
      const slot = (hash >>> 0) & (QUERY_CHUNK_SLOTS - 1)
      const known = queryChunkTexts[slot]
      let chunkTerms: readonly string[]
      if (known !== undefined && known.length === end - start && sameChars(text, start, known)) {
        chunkTerms = queryChunkTerms[slot]
      } else {
        const chunk = start === 0 && end === length ? text : text.slice(start, end)
        chunkTerms = chunkCache.get(chunk) ?? analyseChunk(chunk)
        if (chunk.length <= MAX_CACHED_CHUNK) {
          queryChunkTexts[slot] = chunk
          queryChunkTerms[slot] = chunkTerms
        }
      }
      for (let at = 0; at < chunkTerms.length; at += 1) terms.push(chunkTerms[at])
    }
    start = end + 1
  }
  return terms
}

/** Whether `text` holds `known` from `start` on (`text.startsWith(known, start)`, inlined). */
function sameChars(text: string, start: number, known: string): boolean {
  for (let at = 0; at < known.length; at += 1)
    if (text.charCodeAt(start + at) !== known.charCodeAt(at)) return false
  return true
}

/** Space, tab, line feed, vertical tab, form feed, carriage return. */
function isAsciiSpace(code: number): boolean {
  return code === 32 || (code >= 9 && code <= 13)
}

/** `tokenize` without the chunk cache: the whole text at once (the reference the tests use). */
export function tokenizeText(text: string): string[] {
  const words = splitIdentifiers(text)
    .toLowerCase()
    .replace(/[\u2018\u2019]/g, "'")
    // Combining marks belong to their letter (Thai vowels, Devanagari viramas): not separators.
    .split(/[^\p{L}\p{M}\p{N}']+/u)
  const terms: string[] = []
  for (const raw of words) {
    // Chinese, Japanese, Korean, Thai…: no spaces between words (see segment-words.ts).
    if (NO_SPACE_SCRIPT.test(raw)) {
      // A loop, not push(...): a run of 64,000 Han characters makes ~128,000 terms, past what
      // one call's arguments may hold (RangeError, round 47).
      for (const term of segmentWords(raw, tokenizeText)) terms.push(term)
      continue
    }
    const word = trimQuotes(raw)
    if (word.length === 0 || STOP_WORDS.has(word)) continue
    // Possessives and elisions ("forecast's", "don't") are reduced to their base before stemming.
    const base = (word.endsWith("'s") ? word.slice(0, -2) : word).replace(/'/g, '')
    if (base.length === 0 || STOP_WORDS.has(base)) continue
    terms.push(stem(base.length > MAX_TOKEN_CHARS ? base.slice(0, MAX_TOKEN_CHARS) : base))
  }
  return terms
}

/** Strips leading and trailing apostrophes by index: `/^'+|'+$/` backtracks on long runs of them. */
function trimQuotes(word: string): string {
  let start = 0
  let end = word.length
  while (start < end && word.charCodeAt(start) === 39) start += 1
  while (end > start && word.charCodeAt(end - 1) === 39) end -= 1
  return start === 0 && end === word.length ? word : word.slice(start, end)
}
