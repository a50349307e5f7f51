import { describe, expect, it } from 'vitest'
import { closestName } from '../../src/config/closest-name.ts'

const KEYS = ['library', 'instruction', 'format', 'port', 'host']

describe('closestName', () => {
  it('names the known name a typo or a swap away', () => {
    expect(closestName('libary', KEYS)).toBe('library')
    expect(closestName('fromat', KEYS)).toBe('format')
    expect(closestName('prot', KEYS)).toBe('port')
    expect(closestName('instructions', KEYS)).toBe('instruction')
  })

  it('suggests nothing for short or far-off names', () => {
    expect(closestName('x', KEYS)).toBeUndefined()
    expect(closestName('retriever', KEYS)).toBeUndefined()
  })

  it('does not compare a name far longer than every known one (a request key can be as long as its body)', () => {
    // An edit-distance table of 1,000,000 × 11 cells would take seconds and ~100 MB; the length
    // bound skips it, so this returns at once.
    expect(closestName('l'.repeat(1_000_000), KEYS)).toBeUndefined()
    expect(closestName(`${'library'}${'y'.repeat(3)}`, KEYS)).toBeUndefined()
    expect(closestName('libraryyy'.slice(0, 9), KEYS)).toBe('library')
  })
})
