import { fileURLToPath } from 'node:url'
import { describe, expect, it } from 'vitest'
import {
  splitIdentifiers,
  tokenize,
  tokenizeQuery,
  tokenizeText,
} from '../../../src/retrieve/bm25/tokenize.ts'

describe('tokenize', () => {
  it('splits camelCase, PascalCase runs, snake_case, kebab-case and dotted names', () => {
    expect(splitIdentifiers('getWeatherForecast HTTPServer')).toBe(
      'get Weather Forecast HTTP Server',
    )
    expect(tokenize('getWeatherForecast')).toEqual(['get', 'weather', 'forecast'])
    expect(tokenize('send_email mail.search-inbox')).toEqual([
      'send',
      'email',
      'mail',
      'search',
      'inbox',
    ])
  })

  it('drops stop words and request filler, and stems', () => {
    expect(tokenize('Could you please send the emails to me?')).toEqual(['send', 'email'])
    expect(tokenize('searching flights')).toEqual(['search', 'flight'])
  })

  it('keeps tokens with digits unstemmed and reduces possessives', () => {
    expect(tokenize("v2_auto_complete Paris's 3d")).toEqual(['v2', 'auto', 'complet', 'pari', '3d'])
  })

  it('returns nothing for punctuation and stop words only', () => {
    expect(tokenize('... and the, of!')).toEqual([])
    expect(tokenize('')).toEqual([])
  })
})

describe('tokenize (memoised per space-separated chunk)', () => {
  it('gives the terms of analysing the whole text at once, on every demo tool', async () => {
    const { importToolsFromPath } = await import('../../../src/library/importers/index.ts')
    const demo = fileURLToPath(new URL('../../../src/library/demo/servers', import.meta.url))
    const { tools } = await importToolsFromPath(demo)
    expect(tools.length).toBeGreaterThan(50)
    for (const tool of tools) {
      const text = `${tool.name} ${tool.description} ${JSON.stringify(tool.parameters)}`
      // Twice: the second call answers from the cache.
      expect(tokenize(text)).toEqual(tokenizeText(text))
      expect(tokenize(text)).toEqual(tokenizeText(text))
    }
  })

  it('gives the terms of analysing the whole text at once, on random mixed-script text', () => {
    // Pieces chosen to stress what could depend on context: case changes, Greek final sigma,
    // apostrophes, scripts without spaces, combining marks, zero-width and other Unicode spaces.
    const pieces = [
      'getWeather',
      'HTTPServer',
      'ΟΔΟΣ',
      'Σ',
      'σ',
      "don't",
      "'",
      "Paris's",
      '天气预报',
      '查询',
      'get_weather',
      'สวัสดี',
      'e\u0301',
      '\u00a0',
      '\u2003',
      '\ufeff',
      '\u200b',
      ' ',
      '\t',
      '\n',
      'v2',
      '3D',
      'ÉCOLE',
      'İstanbul',
      '-',
      '.',
      'the',
      'a',
      'ﬁle',
      'straße',
      'ǅ',
      '\u2019s',
    ]
    let seed = 12345
    const random = () => {
      seed = (seed * 1103515245 + 12345) % 2 ** 31
      return seed / 2 ** 31
    }
    for (let round = 0; round < 3000; round += 1) {
      const count = 1 + Math.floor(random() * 12)
      let text = ''
      for (let at = 0; at < count; at += 1) text += pieces[Math.floor(random() * pieces.length)]
      expect(tokenize(text), JSON.stringify(text)).toEqual(tokenizeText(text))
    }
  })
})

describe('tokenizeQuery (memoised per query text)', () => {
  it('gives the terms of tokenize, the same array again for the same text, for many texts', () => {
    const texts = Array.from(
      { length: 200 },
      (_, index) => `find flights to city${index % 70} and email the itinerary (${index})`,
    )
    for (const text of texts) {
      const first = tokenizeQuery(text)
      expect(first).toEqual(tokenize(text))
      expect(tokenizeQuery(text)).toBe(first)
    }
    expect(tokenizeQuery('')).toEqual([])
  })

  it('gives the terms of tokenizeText when query chunks share a slot or differ in one character', () => {
    // 30,000 distinct chunks over 4,096 slots: every slot is shared many times over.
    const words = ['Get', 'weatherForecast', "Paris's", 'e-mail', 'straße', '天气', 'v2', 'the']
    let seed = 7
    const random = () => {
      seed = (seed * 1103515245 + 12345) % 2 ** 31
      return seed / 2 ** 31
    }
    for (let round = 0; round < 6000; round += 1) {
      const chunks: string[] = []
      for (let at = 0; at < 5; at += 1) {
        const word = words[Math.floor(random() * words.length)]
        chunks.push(random() < 0.5 ? word : `${word}${Math.floor(random() * 30_000)}`)
      }
      const text = chunks.join(random() < 0.5 ? ' ' : '\t')
      expect(tokenizeQuery(text), JSON.stringify(text)).toEqual(tokenizeText(text))
    }
  })
})
