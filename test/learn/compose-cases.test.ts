import { describe, expect, it } from 'vitest'
import { composeCases } from '../../src/learn/train-model.ts'
import { RulePlanner } from '../../src/plan/rule-planner.ts'

const single = [
  { id: '1#0', instruction: 'Find the weather forecast for Paris tomorrow.', gold: ['weather'] },
  { id: '1#1', instruction: 'send the forecast to my sister by email', gold: ['mail'] },
  { id: '2#0', instruction: 'Search for hotels in Lisbon near Alfama', gold: ['hotels'] },
  { id: '3#0', instruction: 'Translate the menu into German', gold: ['translate'] },
  { id: '4#0', instruction: 'get the latest stock price of Nvidia', gold: ['stocks'] },
  { id: '5#0', instruction: 'Book a table for two at 8pm', gold: ['tables'] },
  { id: '6#0', instruction: 'Check the air quality in Delhi', gold: ['weather'] },
  { id: '7#0', instruction: 'List my unread emails', gold: ['inbox'] },
]

describe('composeCases', () => {
  it('joins clauses of different queries into requests the rule planner splits back, gold both tools', () => {
    const composed = composeCases(single, 1)
    expect(composed.length).toBeGreaterThan(0)
    const planner = new RulePlanner()
    const byText = new Map(single.map((item) => [item.instruction.replace(/\.$/, ''), item]))
    for (const request of composed) {
      const clauses = planner.split(request.instruction)
      expect(clauses).toHaveLength(2)
      const parts = clauses.map((clause) =>
        [...byText.values()].find(
          (item) => item.instruction.replace(/\.$/, '').toLowerCase() === clause.toLowerCase(),
        ),
      )
      expect(parts.every((part) => part !== undefined)).toBe(true)
      // Two different source queries, two different tools, the gold is both.
      expect(parts[0]!.id.split('#')[0]).not.toBe(parts[1]!.id.split('#')[0])
      expect(request.gold).toEqual([parts[0]!.gold[0], parts[1]!.gold[0]])
      // The fold follows the first part's parent query.
      expect(request.id.split('#')[0]).toBe(parts[0]!.id.split('#')[0])
    }
    expect(composeCases(single, 1)).toEqual(composed)
  })
})
