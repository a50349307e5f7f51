import { describe, expect, it } from 'vitest'
import { describedCases, firstClause, nameWords } from '../../src/learn/training-rows.ts'
import { tokenize } from '../../src/retrieve/bm25/tokenize.ts'
import type { Tool } from '../../src/library/tool.ts'

const tool = (id: string, name: string, description: string): Tool =>
  ({ id, name, description, parameters: { type: 'object', properties: {} } }) as Tool

const tools = [
  tool('Dict::Get Citations', 'Get Citations', 'Get citations of a word. Returns up to 10.'),
  tool('Pets A::getUserByName', 'getUserByName', 'Get user by user name'),
  tool('Pets B::getUserByName', 'getUserByName', 'Get user by user name'),
  tool('Hotels::meta', 'meta', 'Meta'),
  tool('Shazam::songs/get-related-artist', 'songs/get-related-artist', 'Get artists: related'),
]
const all = {
  limit: 100,
  order: () => 0,
  keep: () => true,
  terms: (t: string) => tokenize(t).length,
}

describe('describedCases', () => {
  it("makes one single-need request per tool from its description's first clause, gold that tool", () => {
    expect(firstClause('Get citations of a word. Returns up to 10.')).toBe(
      'Get citations of a word',
    )
    expect(describedCases(tools, all)).toEqual([
      {
        id: 'described:Dict::Get Citations',
        instruction: 'Get citations of a word',
        gold: ['Dict::Get Citations'],
      },
    ])
  })

  it("from names: the name's words; a text two tools share, or under three terms, is left out", () => {
    expect(nameWords('songs/get-related-artist')).toBe('songs get related artist')
    expect(nameWords('getUserByName')).toBe('get User By Name')
    expect(describedCases(tools, { ...all, from: 'name' }).map((c) => c.instruction)).toEqual([
      'songs get related artist',
    ])
  })

  it('keeps only the ids `keep` accepts, at most `limit`, in `order`', () => {
    const many = Array.from({ length: 6 }, (_, i) =>
      tool(`T${i}::x`, `x${i}`, `fetch the weather forecast number ${i} for a city`),
    )
    const picked = describedCases(many, {
      ...all,
      limit: 2,
      order: (id) => -Number(id.at(-4)),
      keep: (id) => id !== 'described:T5::x',
    })
    expect(picked.map((c) => c.gold[0])).toEqual(['T4::x', 'T3::x'])
  })
})
