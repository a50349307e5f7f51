import { describe, expect, it } from 'vitest'
import { decideSet, stepFloorCandidates } from '../../src/learn/decide-set.ts'

const candidates = [
  { id: 'a', p: 0.9 },
  { id: 'b', p: 0.4 },
  { id: 'c', p: 0.35 },
  { id: 'd', p: 0.1 },
]

describe('decideSet', () => {
  it('takes the candidates at or above the threshold, most probable first', () => {
    expect(decideSet(candidates, 4, { threshold: 0.35, floor: 0, extra: 0 })).toEqual([
      'a',
      'b',
      'c',
    ])
  })

  it('never takes more than the clauses plus extra', () => {
    expect(decideSet(candidates, 1, { threshold: 0.3, floor: 0, extra: 0 })).toEqual(['a'])
    expect(decideSet(candidates, 1, { threshold: 0.3, floor: 0, extra: 1 })).toEqual(['a', 'b'])
  })

  it('falls back to the best candidate when it reaches the floor, else takes none', () => {
    const weak = [
      { id: 'x', p: 0.08 },
      { id: 'y', p: 0.05 },
    ]
    expect(decideSet(weak, 2, { threshold: 0.3, floor: 0.05, extra: 0 })).toEqual(['x'])
    expect(decideSet(weak, 2, { threshold: 0.3, floor: 0.1, extra: 0 })).toEqual([])
    expect(decideSet([], 2, { threshold: 0.3, floor: 0, extra: 0 })).toEqual([])
  })

  it('gives a clause none of whose first candidates was taken its most probable one above stepFloor', () => {
    const scored = [
      { id: 'weather', p: 0.8 },
      { id: 'slack', p: 0.02 },
      { id: 'mail', p: 0.12 },
      { id: 'alerts', p: 0.03 },
      { id: 'far', p: 0.2 },
    ]
    const tops = [
      ['weather', 'alerts'],
      ['slack', 'mail', 'alerts', 'far'],
    ]
    const rule = { threshold: 0.4, floor: 0, extra: 0 }
    expect(decideSet(scored, 2, rule, tops)).toEqual(['weather'])
    // 'far' is past the clause's first STEP_FLOOR_DEPTH candidates; 'mail' is the most probable.
    expect(decideSet(scored, 2, { ...rule, stepFloor: 0.1 }, tops)).toEqual(['weather', 'mail'])
    expect(decideSet(scored, 2, { ...rule, stepFloor: 0.15 }, tops)).toEqual(['weather'])
    // A clause whose candidate was already taken gets no second one; one clause: off.
    expect(
      decideSet(scored, 2, { ...rule, stepFloor: 0.01 }, [tops[0], ['alerts', 'weather']]),
    ).toEqual(['weather'])
    expect(decideSet(scored, 1, { ...rule, stepFloor: 0.1 }, [tops[1]])).toEqual(['weather'])
  })

  it('accepts a clause pick by its acceptance probability when it has one, picks by p', () => {
    // The pick is the clause's most probable candidate by p ('mail'); whether the clause gets it
    // is decided by its acceptance probability a (LearnedModel `acceptance`).
    const scored = [
      { id: 'weather', p: 0.8, a: 0.7 },
      { id: 'slack', p: 0.02, a: 0.3 },
      { id: 'mail', p: 0.12, a: 0.18 },
      { id: 'alerts', p: 0.03, a: 0.01 },
    ]
    const tops = [
      ['weather', 'alerts'],
      ['slack', 'mail', 'alerts'],
    ]
    const rule = { threshold: 0.4, floor: 0, extra: 0, stepFloor: 0.15 }
    expect(decideSet(scored, 2, rule, tops)).toEqual(['weather', 'mail'])
    const refused = scored.map((candidate) => ({
      ...candidate,
      a: candidate.id === 'mail' ? 0.14 : candidate.a,
    }))
    expect(decideSet(refused, 2, rule, tops)).toEqual(['weather'])
    // Without a, p decides both (every model before round 18).
    const plain = scored.map(({ id, p }) => ({ id, p }))
    expect(decideSet(plain, 2, rule, tops)).toEqual(['weather'])
  })

  it('offers stepFloor the first candidates of action clauses only', () => {
    const candidates = ['a', 'b', 'c', 'd'].map((id) => ({ id }))
    expect(stepFloorCandidates('email the forecast to Ann', candidates)).toEqual(['a', 'b', 'c'])
    expect(stepFloorCandidates('is it going to rain?', candidates)).toEqual(['a', 'b', 'c'])
    expect(stepFloorCandidates('the hotel near Alfama', candidates)).toEqual([])
  })
})
