import { describe, expect, it } from 'vitest'
import { tokenize } from '../../../src/retrieve/bm25/tokenize.ts'

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
