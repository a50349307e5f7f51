/**
 * Terms for scripts written without spaces between words (Chinese, Japanese, Korean, Thai, Lao,
 * Khmer, Myanmar). Splitting on spaces and punctuation leaves a whole clause as one "word" there,
 * so a query almost never shares a term with a description. Such words are cut with
 * `Intl.Segmenter` (ICU's dictionary-based word breaks, built into Node), then:
 * - Han, Kana and Hangul: consecutive words form a run, cut at one-character particles (的, の,
 *   を…), and each run becomes overlapping character bigrams (a one-character run stays whole),
 *   as the CJK analyzers of Lucene and Elasticsearch do. Bigrams do not depend on where the
 *   dictionary happens to break a word (`找航班` → 找|航|班 but `航班信息` → 航班|信息, both give
 *   `航班`), and Korean particles stay harmless (`날씨를` → 날씨, 씨를 matches `날씨`). Han
 *   characters are also indexed one by one (Elasticsearch's `output_unigrams`): Chinese shortens
 *   words to one of their characters (订 for 预订, "book"), and BM25 scores built from bigrams
 *   alone stay under the default `tau` for short instructions.
 * - Thai, Lao, Khmer and Myanmar words stay whole (their letters are not meaningful in pairs).
 * - Latin and other spaced-script pieces (`请用get_weather查询` → `get_weather`) go back to the
 *   ordinary tokenizer, so English tool names inside a Chinese sentence give the same terms as
 *   in an English one.
 * No stemming or English stop words apply to these scripts.
 *
 * ICU's dictionary word breaks cost more than linear time in the length of a run of such
 * characters (measured: 0.9 s for 32,000 Han characters, minutes for 300,000), and a BM25 field
 * keeps up to 500,000 characters. A word longer than `MAX_SEGMENTED_CHARS` is therefore handed to
 * the segmenter in pieces of at most that many characters, cut where the script changes (Han to
 * Kana, say) near the end of a piece when it can, else at the limit (never inside a surrogate pair
 * or before a combining mark). A CJK run carries on across a cut, so its bigrams are the same as
 * without one. Real text never reaches the limit: punctuation, spaces, digits and Latin letters
 * already end a word (tokenize.ts), and sentences are far shorter.
 * @module
 */

/** A character of a script that does not separate words with spaces. */
export const NO_SPACE_SCRIPT =
  /[\p{Script=Han}\p{Script=Hiragana}\p{Script=Katakana}\p{Script=Hangul}\p{Script=Thai}\p{Script=Lao}\p{Script=Khmer}\p{Script=Myanmar}]/u

const HAN_CHARACTER = /^\p{Script=Han}$/u
const CJK = /[\p{Script=Han}\p{Script=Hiragana}\p{Script=Katakana}\p{Script=Hangul}]/u

/**
 * One-character Chinese function words (possessive, aspect and sentence particles, "please"),
 * dropped like English stop words. Content characters are never listed.
 */
export const CJK_STOP_WORDS: ReadonlySet<string> = new Set([
  ...'的了着过是在和与及或把被给请吗呢吧啊',
])

/** A one-character Hiragana word is a Japanese particle or inflection (の, を, て): dropped. */
const HIRAGANA_CHARACTER = /^\p{Script=Hiragana}$/u

const segmenter = new Intl.Segmenter(undefined, { granularity: 'word' })

/** The most characters (UTF-16 units) one call of the segmenter gets (see the module doc). */
export const MAX_SEGMENTED_CHARS = 1024

/** How far back from a piece's limit a cut looks for a change of script. */
const SCRIPT_CUT_WINDOW = 256

/** The scripts a cut prefers to fall between. */
const SCRIPT_CLASSES = [
  /\p{Script=Han}/u,
  /\p{Script=Hiragana}/u,
  /\p{Script=Katakana}/u,
  /\p{Script=Hangul}/u,
  /\p{Script=Thai}/u,
  /\p{Script=Lao}/u,
  /\p{Script=Khmer}/u,
  /\p{Script=Myanmar}/u,
]
const COMBINING_MARK = /^\p{M}/u

/**
 * The terms of one lower-cased word that contains a no-space script character.
 * @param tokenizeOther the ordinary tokenizer, for pieces in other scripts.
 */
export function segmentWords(word: string, tokenizeOther: (text: string) => string[]): string[] {
  const terms: string[] = []
  let run = ''
  const flushRun = () => {
    pushBigrams(run, terms)
    run = ''
  }
  for (let start = 0; start < word.length;) {
    const end = pieceEnd(word, start)
    const piece = start === 0 && end === word.length ? word : word.slice(start, end)
    for (const { segment, isWordLike } of segmenter.segment(piece)) {
      if (isWordLike && CJK.test(segment) && !isParticle(segment)) {
        run += segment
        continue
      }
      flushRun()
      if (!isWordLike || isParticle(segment)) continue
      if (NO_SPACE_SCRIPT.test(segment)) terms.push(segment)
      else for (const term of tokenizeOther(segment)) terms.push(term)
    }
    start = end
  }
  flushRun()
  return terms
}

/**
 * Where the piece of `word` that starts at `start` ends: the word's end when it is at most
 * `MAX_SEGMENTED_CHARS` away, else the last change of script in the piece's final
 * `SCRIPT_CUT_WINDOW` characters, else the limit moved back off a low surrogate or combining mark.
 */
export function pieceEnd(word: string, start: number): number {
  const limit = start + MAX_SEGMENTED_CHARS
  if (limit >= word.length) return word.length
  for (let cut = limit; cut > limit - SCRIPT_CUT_WINDOW; cut -= 1) {
    if (!startsCharacter(word, cut)) continue
    const before = isLowSurrogate(word.charCodeAt(cut - 1)) ? cut - 2 : cut - 1
    if (scriptClass(word, cut) !== scriptClass(word, before)) return cut
  }
  let cut = limit
  while (cut > start + 1 && !startsCharacter(word, cut)) cut -= 1
  return cut
}

/** The index in SCRIPT_CLASSES of the script of the code point at `at`; their length for others. */
function scriptClass(word: string, at: number): number {
  const character = String.fromCodePoint(word.codePointAt(at) ?? 0)
  const index = SCRIPT_CLASSES.findIndex((script) => script.test(character))
  return index === -1 ? SCRIPT_CLASSES.length : index
}

function isLowSurrogate(code: number): boolean {
  return code >= 0xdc00 && code <= 0xdfff
}

/** Whether a character starts at `at`: not the low half of a surrogate pair, not a combining mark. */
function startsCharacter(word: string, at: number): boolean {
  if (isLowSurrogate(word.charCodeAt(at))) return false
  return !COMBINING_MARK.test(String.fromCodePoint(word.codePointAt(at) ?? 0))
}

function isParticle(segment: string): boolean {
  return CJK_STOP_WORDS.has(segment) || HIRAGANA_CHARACTER.test(segment)
}

function pushBigrams(run: string, terms: string[]): void {
  const characters = [...run]
  if (characters.length === 1) terms.push(run)
  for (let index = 0; index + 1 < characters.length; index += 1) {
    terms.push(characters[index] + characters[index + 1])
  }
  // Han characters carry meaning on their own and Chinese abbreviates words to one of them
  // (订 for 预订 "book"), so they are also indexed one by one.
  if (characters.length > 1) {
    for (const character of characters) {
      if (HAN_CHARACTER.test(character) && !CJK_STOP_WORDS.has(character)) terms.push(character)
    }
  }
}
