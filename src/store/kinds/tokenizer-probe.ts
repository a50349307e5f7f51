/**
 * The BM25 tokenizer's identity by what it does, not by its hand-bumped `TOKENIZER_VERSION`: the
 * sha256 of `tokenize()`'s terms for a fixed text that exercises every step (stop words, Porter2
 * stemming, identifier splits, digits, diacritics and other scripts, apostrophes, CJK bigrams,
 * Thai words, the cut of long words), so postings made by one tokenizer are never searched with
 * another's query terms, even when a change (an edit here, another stemmer release, another ICU's
 * word breaks in a Node upgrade) came without a version bump.
 *
 * Two probes, since one part of the tokenizer is not toolsel's: the scripts written without
 * spaces (Chinese, Japanese, Korean, Thai…) are cut by `Intl.Segmenter`, ICU's dictionary word
 * breaks, which a Node release may update. `core` is the probe of every other line of the text
 * (toolsel's own code and the stemmer): every index records it (`tokenizerCoreProbe`) and a load
 * whose `core` differs is refused. `segmented` is the probe of the no-space-script lines: an
 * index records it (`segmenterProbe`) only when it holds terms of those scripts, and only such an
 * index is refused when this Node's word breaks differ, so a Node upgrade leaves an English
 * library's index loading.
 *
 * Every field of a tool (name, description, parameters, examples) goes through the same
 * `tokenize`, and queries through `tokenizeQuery` (the same terms; tokenize.test.ts compares
 * them), so the probes cover them all. Computed once per process, at the first bm25 build or
 * load: about 8 ms in a fresh process, nearly all of it the first use of the tokenizer's regular
 * expressions, stemmer and ICU word breaks, which the first tokenized text pays otherwise; later
 * calls return the kept value (bench/tokenizer-probe-cost.ts).
 * @module
 */
import { createHash } from 'node:crypto'
import { throwIfAborted } from '../../errors.ts'
import { DEFAULT_SLICE_MS } from '../../time-slicer.ts'
import { NO_SPACE_SCRIPT } from '../../retrieve/bm25/segment-words.ts'
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

const PROBE_LINES = TOKENIZER_PROBE_TEXT.split('\n')

/** The probe text's lines in no-space scripts: the ones ICU's word breaks cut. */
export const SEGMENTED_PROBE_TEXT = PROBE_LINES.filter((line) => NO_SPACE_SCRIPT.test(line)).join(
  '\n',
)

/** The probe text's other lines: what toolsel's own code and the stemmer make of text. */
export const CORE_PROBE_TEXT = PROBE_LINES.filter((line) => !NO_SPACE_SCRIPT.test(line)).join('\n')

export interface TokenizerProbes {
  /** The probe of `CORE_PROBE_TEXT`: recorded by every index (`tokenizerCoreProbe`). */
  core: string
  /** The probe of `SEGMENTED_PROBE_TEXT`: recorded by an index holding such terms (`segmenterProbe`). */
  segmented: string
}

let probes: TokenizerProbes | undefined

/** This process's tokenizer's probes, computed once per process. */
export function tokenizerProbes(): TokenizerProbes {
  probes ??= probesOf(tokenize)
  return probes
}

/** The probes of a tokenizer: what `tokenizerProbes` gives, for any `tokenize` (tests, bench). */
export function probesOf(tokenizeText: (text: string) => readonly string[]): TokenizerProbes {
  return {
    core: probeOf(tokenizeText, CORE_PROBE_TEXT),
    segmented: probeOf(tokenizeText, SEGMENTED_PROBE_TEXT),
  }
}

/** `sha256:<first 16 hex digits>` of `text`'s terms (JSON) by `tokenizeText`. */
export function probeOf(tokenizeText: (text: string) => readonly string[], text: string): string {
  const terms = JSON.stringify(tokenizeText(text))
  return `sha256:${createHash('sha256').update(terms).digest('hex').slice(0, 16)}`
}

/** Terms between two looks at the clock in `holdsSegmentedTerms`. */
const CLOCK_EVERY = 4096

/**
 * Whether `terms` hold one of a no-space script: only `segmentWords` (ICU's word breaks) makes
 * those, so an index without one is the same whatever this Node's word breaks are. Yields to the
 * event loop once `sliceMs` of scanning have passed (a server's build: 1M terms scan in 10-50 ms)
 * and throws `signal`'s reason after a yield once it is aborted.
 */
export async function holdsSegmentedTerms(
  terms: Iterable<string>,
  signal?: AbortSignal,
  sliceMs = DEFAULT_SLICE_MS,
): Promise<boolean> {
  let sliceStart = performance.now()
  let count = 0
  for (const term of terms) {
    if (NO_SPACE_SCRIPT.test(term)) return true
    if (++count % CLOCK_EVERY === 0 && performance.now() - sliceStart >= sliceMs) {
      await new Promise((resolve) => setImmediate(resolve))
      throwIfAborted(signal)
      sliceStart = performance.now()
    }
  }
  return false
}
