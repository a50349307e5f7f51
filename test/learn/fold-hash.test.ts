import { describe, expect, it } from 'vitest'
import { composeCases, foldHash, foldOf } from '../../src/learn/train-model.ts'

/** The formula before round 10: the seed XORed into the offset, then `${seed}:${text}` hashed. */
function previousFoldHash(text: string, seed: number): number {
  let hash = 0x811c9dc5 ^ seed
  for (const char of `${seed}:${text}`) {
    hash ^= char.charCodeAt(0)
    hash = Math.imul(hash, 0x01000193) >>> 0
  }
  return hash
}

const IDS = Array.from({ length: 200 }, (_, index) => `g3-${index * 37 + 11}`)
const TEXTS = ['', 'g3-1234', 'toollens-train-0017#2', 'Find a hotel in Lisbon', 'ü→日本']

describe('foldHash', () => {
  it('gives seeds 1-5 pairwise different folds', () => {
    const folds = [1, 2, 3, 4, 5].map((seed) => IDS.map((id) => foldOf(id, seed)).join(''))
    for (let a = 0; a < folds.length; a += 1) {
      for (let b = a + 1; b < folds.length; b += 1) {
        expect(folds[a], `seeds ${a + 1} and ${b + 1}`).not.toBe(folds[b])
      }
    }
    // Every one-digit seed starts from its own state, not just 1-5.
    const hashes = Array.from({ length: 10 }, (_, seed) => foldHash('g3-1234', seed))
    expect(new Set(hashes).size).toBe(10)
  })

  it("keeps the default seed's hashes (and those of seeds outside 0-9) as they were", () => {
    for (const text of TEXTS) {
      // Seed 1 (the default) and seed 12 (the default's join choice, seed + 11).
      for (const seed of [1, 12, 10, 57, 1000]) {
        expect(foldHash(text, seed)).toBe(previousFoldHash(text, seed))
      }
      // The default's shuffle key (seed + 7) and example-decision halves (seed + 3) hashed like
      // seed 1; they now use seed 1's hash directly.
      expect(previousFoldHash(text, 8)).toBe(foldHash(text, 1))
      expect(previousFoldHash(text, 4)).toBe(foldHash(text, 1))
    }
  })

  it('composes different pairs for different seeds, and the same for the same seed', () => {
    const single = IDS.slice(0, 60).map((id, index) => ({
      id: `${id}#0`,
      instruction: `Do task number ${index} for me`,
      gold: [`tool_${index}`],
    }))
    const pairs = (seed: number) =>
      composeCases(single, seed)
        .map((request) => request.gold.join('+'))
        .join(' ')
    expect(pairs(1)).toBe(pairs(1))
    expect(pairs(2)).not.toBe(pairs(1))
    expect(pairs(3)).not.toBe(pairs(2))
  })
})
