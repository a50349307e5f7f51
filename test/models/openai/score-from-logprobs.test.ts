import fc from 'fast-check'
import { describe, expect, it } from 'vitest'
import type { TokenLogprob } from '../../../src/models/openai/chat-completion-schema.ts'
import { scoreFromLogprobs } from '../../../src/models/openai/score-from-logprobs.ts'

const token = (text: string, logprob: number, top: Array<[string, number]> = []): TokenLogprob => ({
  token: text,
  logprob,
  top_logprobs: top.map(([alternative, value]) => ({ token: alternative, logprob: value })),
})

describe('scoreFromLogprobs', () => {
  it('scores the generated answer with its exact log-probability', () => {
    const tokens = [token(' weather', -0.5), token('.get', -0.25)]
    expect(scoreFromLogprobs(tokens, ['weather.get'])).toEqual([-0.75])
  })

  it('ranks a choice that is only a prefix or an extension of the answer below the answer', () => {
    const tokens = [
      token('weather', -0.1, [['weather', -0.1]]),
      token('.get', -0.2, [['.get', -0.2]]),
    ]
    const [exact, prefix, longer] = scoreFromLogprobs(tokens, [
      'weather.get',
      'weather',
      'weather.get_all',
    ])
    expect(prefix).toBeLessThan(exact)
    expect(longer).toBeLessThan(exact)
  })

  it('uses the best listed alternative where a choice leaves the answer', () => {
    const tokens = [
      token('a', -0.1, [
        ['a', -0.1],
        ['b', -3],
        ['bc', -2],
      ]),
    ]
    expect(scoreFromLogprobs(tokens, ['bcd'])).toEqual([-2])
  })

  it('gives every choice a finite score no higher than 0, whatever the answer', () => {
    const piece = fc.constantFrom('a', 'b', 'ab', ' ', '.', 'x')
    const logprob = fc.double({ min: -20, max: 0, noNaN: true })
    const tokenArb = fc
      .tuple(piece, logprob, fc.array(fc.tuple(piece, logprob), { maxLength: 4 }))
      .map(([text, value, top]) => token(text, value, top))
    fc.assert(
      fc.property(
        fc.array(tokenArb, { maxLength: 6 }),
        fc.array(fc.string({ maxLength: 5 }), { minLength: 1 }),
        (tokens, choices) => {
          const scores = scoreFromLogprobs(tokens, choices)
          expect(scores).toHaveLength(choices.length)
          for (const score of scores) {
            expect(Number.isFinite(score)).toBe(true)
            expect(score).toBeLessThanOrEqual(0)
          }
        },
      ),
    )
  })
})
