/**
 * The BM25 tokenizer's identity by what it does, not by its hand-bumped `TOKENIZER_VERSION`: the
 * sha256 of `tokenize()`'s terms for a fixed text that exercises every step (stop words, Porter2
 * stemming, identifier splits, digits, diacritics and other scripts, apostrophes, CJK bigrams,
 * Thai words, the cut of long words). An index records it (`tokenizerProbe` in its bm25 entry and
 * build settings); a load whose tokenizer gives other terms for the probe is refused, so postings
 * made by one tokenizer are never searched with another's query terms, even when a change (an
 * edit here, another stemmer release, another ICU's word breaks in a Node upgrade) came without
 * a version bump.
 *
 * Every field of a tool (name, description, parameters, examples) goes through the same
 * `tokenize`, and queries through `tokenizeQuery` (the same terms; tokenize.test.ts compares
 * them), so one probe covers them all. Computed once per process, at the first bm25 build or
 * load: about 8 ms in a fresh process, nearly all of it the first use of the tokenizer's regular
 * expressions, stemmer and ICU word breaks, which the first tokenized text pays otherwise; later
 * calls return the kept value (bench/tokenizer-probe-cost.ts).
 * @module
 */
import { createHash } from 'node:crypto'
import { tokenize } from '../../retrieve/bm25/tokenize.ts'

/**
 * The probe text. Changing it changes every index's recorded probe: indexes saved before are
 * then refused as built by another tokenizer. Leave it as it is.
 */
export const TOKENIZER_PROBE_TEXT = [
  "Please could you kindly SEND the weekly reports to all of the managers, and don't forget Ann\u2019s invoices!",
  'running runs ran easily happiness connection generously organizational',
  'getWeatherForecast HTTPServer parseJSONResponse snake_case_name kebab-case-name dotted.tool.name',
  'v2 404 3d IPv6 utf8 2024-01-15 x86_64 1.5k',
  'café naïve Ünïcödé résumé façade Straße ÀÉÎÕÜ Ελληνικά Кириллица',
  '请帮我查询明天北京的天气预报 预订航班 请用get_weather查询',
  '東京の天気を教えてください カタカナ',
  '내일 서울 날씨를 알려주세요',
  'สวัสดีครับ พยากรณ์อากาศ',
  "''quoted'' it's o'clock rock'n'roll",
  `${'x'.repeat(80)} supercalifragilisticexpialidocious`,
].join('\n')

let probe: string | undefined

/** `sha256:<first 16 hex digits>` of the probe text's terms (JSON), computed once per process. */
export function tokenizerProbe(): string {
  probe ??= probeOf(tokenize)
  return probe
}

/** The probe of a tokenizer: what `tokenizerProbe` records, for any `tokenize` (tests, bench). */
export function probeOf(tokenizeText: (text: string) => readonly string[]): string {
  const terms = JSON.stringify(tokenizeText(TOKENIZER_PROBE_TEXT))
  return `sha256:${createHash('sha256').update(terms).digest('hex').slice(0, 16)}`
}
