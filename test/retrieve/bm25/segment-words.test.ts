import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest'
import { tokenize, tokenizeText } from '../../../src/retrieve/bm25/tokenize.ts'
import { MAX_SEGMENTED_CHARS, pieceEnd } from '../../../src/retrieve/bm25/segment-words.ts'
import { TOKENIZER_PROBE_TEXT } from '../../../src/store/kinds/tokenizer-probe.ts'

describe('tokenize: scripts without spaces', () => {
  it('cuts Chinese into bigrams and characters, split at particles such as 的', () => {
    expect(tokenize('北京的天气预报')).toEqual([
      '北京',
      '北',
      '京',
      '天气',
      '气预',
      '预报',
      '天',
      '气',
      '预',
      '报',
    ])
  })

  it('gives the same bigram wherever the dictionary breaks the word', () => {
    // ICU breaks 找航班 as 找|航|班 but 查询航班信息 as 查询|航班|信息.
    expect(tokenize('找航班')).toContain('航班')
    expect(tokenize('查询航班信息')).toContain('航班')
  })

  it('lets a Korean word with a particle match the bare word', () => {
    expect(tokenize('서울 날씨를 알려줘')).toEqual(['서울', '날씨', '씨를', '알려', '려줘'])
    expect(tokenize('도시의 현재 날씨 정보를 가져옵니다')).toContain('날씨')
  })

  it('drops Japanese one-character particles', () => {
    expect(tokenize('東京の天気を教えて')).toEqual([
      '東京',
      '東',
      '京',
      '天気',
      '天',
      '気',
      '教え',
      '教',
    ])
  })

  it('segments Thai with the dictionary and keeps its words whole', () => {
    expect(tokenize('สภาพอากาศวันนี้')).toEqual(['สภาพ', 'อากาศ', 'วัน', 'นี้'])
  })

  it('tokenizes English names inside a Chinese sentence as in English text', () => {
    const terms = tokenize('请用get_weather查询天气')
    expect(terms.slice(0, 5)).toEqual(['请用', '用', 'get', 'weather', '查询'])
    expect(tokenize('用 searchFlights 找航班')).toEqual([
      '用',
      'search',
      'flight',
      '找航',
      '航班',
      '找',
      '航',
      '班',
    ])
  })

  it('keeps combining marks with their letters (Devanagari)', () => {
    expect(tokenize('मौसम की जानकारी')).toEqual(['मौसम', 'की', 'जानकारी'])
  })

  it('leaves English, accented Latin and Cyrillic text as before (no segmentation)', () => {
    expect(tokenize('Searching the flights for Zürich')).toEqual(['search', 'flight', 'zürich'])
    expect(tokenize('погода в Москве')).toEqual(['погода', 'в', 'москве'])
  })
})

describe('segmentWords: long runs go to the segmenter in bounded pieces', () => {
  // ICU's word breaks take more than linear time in a run's length (minutes for 300,000 Han
  // characters): a word is handed to Intl.Segmenter at most MAX_SEGMENTED_CHARS at a time.
  const calls: number[] = []
  const segment = Intl.Segmenter.prototype.segment
  beforeEach(() => {
    calls.length = 0
    vi.spyOn(Intl.Segmenter.prototype, 'segment').mockImplementation(function (
      this: Intl.Segmenter,
      input: string,
    ) {
      calls.push(input.length)
      // Fail at once rather than spend minutes in ICU on an unbounded piece.
      if (input.length > 4096) throw new Error(`segmenter called with ${input.length} characters`)
      return segment.call(this, input)
    })
  })
  afterEach(() => {
    vi.restoreAllMocks()
  })

  const HAN = '查询明天北京天气预报预订航班东京股票价格发送邮件经理翻译文档'

  it('cuts a 300,000-character Han run into pieces of at most MAX_SEGMENTED_CHARS', () => {
    const run = HAN.repeat(Math.ceil(300_000 / HAN.length)).slice(0, 300_000)
    const terms = tokenizeText(run)
    expect(MAX_SEGMENTED_CHARS).toBeLessThanOrEqual(4096)
    expect(Math.max(...calls)).toBeLessThanOrEqual(MAX_SEGMENTED_CHARS)
    // The pieces cover the run once: linear work in all.
    expect(calls.reduce((sum, length) => sum + length, 0)).toBe(run.length)
    // The run carries on across the cuts: every adjacent pair is a bigram, as without cuts.
    expect(terms.length).toBe(2 * run.length - 1)
    for (let at = 0; at + 1 < run.length; at += 997) expect(terms[at]).toBe(run[at] + run[at + 1])
  })

  it('cuts where the script changes, and never inside a surrogate pair', () => {
    const kana = 'ひらがなとカタカナ'.repeat(150)
    const word = '漢'.repeat(900) + kana
    const end = pieceEnd(word, 0)
    expect(end).toBeLessThanOrEqual(MAX_SEGMENTED_CHARS)
    expect(end).toBeGreaterThan(MAX_SEGMENTED_CHARS - 256)
    expect(word[end - 1] === word[end]).toBe(false)
    const astral = '𠀀'.repeat(1000) // U+20000, two UTF-16 units each
    expect(pieceEnd(astral, 0) % 2).toBe(0)
  })

  it('tokenizes real text under the limit exactly as one call of the segmenter does', () => {
    const lines = [
      TOKENIZER_PROBE_TEXT,
      '根据城市名称查询未来七天的天气预报，包括温度、湿度和风速。',
      '指定した都市の現在の天気を取得します。気温と湿度を返します',
      '도시 이름으로 현재 날씨 정보를 가져옵니다',
    ]
    for (const line of lines) {
      calls.length = 0
      tokenizeText(line)
      expect(calls.every((length) => length < MAX_SEGMENTED_CHARS)).toBe(true)
    }
  })
})
