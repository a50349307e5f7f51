import { describe, expect, it } from 'vitest'
import { splitIdentifiers, tokenize } from '../../../src/retrieve/bm25/tokenize.ts'

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
