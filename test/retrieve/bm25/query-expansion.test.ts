import { describe, expect, it } from 'vitest'
import { expandHeadVerb } from '../../../src/retrieve/bm25/query-expansion.ts'

describe('expandHeadVerb', () => {
  it('appends the canonical phrase of a denominal head verb', () => {
    expect(expandHeadVerb('email the forecast to Ann')).toBe('email the forecast to Ann send email')
    expect(expandHeadVerb('Text my mom')).toBe('Text my mom send sms text message')
  })

  it('skips leading fillers to find the head verb', () => {
    expect(expandHeadVerb('then please ping Sam')).toBe('then please ping Sam send message')
  })

  it('leaves other queries alone, including the words in non-head positions', () => {
    expect(expandHeadVerb('find the email from Jordan')).toBe('find the email from Jordan')
    expect(expandHeadVerb('')).toBe('')
  })
})
