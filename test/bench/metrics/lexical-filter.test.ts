import { describe, expect, it } from 'vitest'
import { lexicalFilter } from '../../../src/bench/metrics/lexical-filter.ts'
import { percentile } from '../../../src/bench/metrics/percentile.ts'

describe('lexicalFilter', () => {
  const texts: Record<string, string> = {
    weather: 'get_forecast Weather forecast for a city',
    mail: 'send_email Sends an email message',
    stocks: 'quote Stock prices',
  }

  it('keeps gold tools sharing a stemmed content word with the query', () => {
    const kept = lexicalFilter(
      'Forecasts for Paris, then email Ann',
      ['weather', 'mail', 'stocks'],
      (id) => texts[id],
    )
    expect(kept).toEqual(['weather', 'mail'])
  })

  it('ignores stop words and compares unknown ids by the id itself', () => {
    expect(lexicalFilter('what is the price', ['stocks'], (id) => texts[id])).toEqual(['stocks'])
    expect(lexicalFilter('the a of', ['stocks'], (id) => texts[id])).toEqual([])
    expect(lexicalFilter('translate this text', ['Text Translation'], () => undefined)).toEqual([
      'Text Translation',
    ])
  })
})

describe('percentile', () => {
  it('returns an observed value by nearest rank', () => {
    const values = [5, 1, 4, 2, 3, 10, 9, 8, 7, 6]
    expect(percentile(values, 50)).toBe(5)
    expect(percentile(values, 95)).toBe(10)
    expect(percentile(values, 0)).toBe(1)
    expect(percentile([], 50)).toBeNaN()
  })
})
