import { describe, expect, it } from 'vitest'
import { sha256, toolContentHash, type Tool } from '../../src/library/tool.ts'
import { ToolLibrary } from '../../src/library/tool-library.ts'
import { SAMPLE_TOOLS } from '../helpers/sample-tools.ts'

/** Tools whose ids need JSON escapes, in other scripts, and one whose line starts elsewhere. */
const TRICKY: Tool[] = [
  { id: 'quote"d\\id', name: 'q', description: 'Escapes in the id.', parameters: {} },
  { id: 'météo.prévision', name: 'prévision', description: 'Unicode id.', parameters: {} },
  { id: '天气.预报', name: '预报', description: 'CJK id.', parameters: {} },
]

function jsonLines(tools: readonly Tool[]): Buffer {
  return Buffer.from(tools.map((tool) => `${JSON.stringify(tool)}\n`).join(''))
}

describe('ToolLibrary over JSON lines (tools kept as bytes)', () => {
  const tools = [...SAMPLE_TOOLS, ...TRICKY]
  const eager = new ToolLibrary('eager', tools)
  const lazy = ToolLibrary.fromJsonLines('lazy', jsonLines(tools))

  it('holds the same tools, ids, order and content hash as the array library', () => {
    expect(lazy.size).toBe(eager.size)
    expect(lazy.ids).toEqual(eager.ids)
    expect(lazy.tools).toEqual(eager.tools)
    for (const tool of tools) {
      expect(lazy.has(tool.id)).toBe(true)
      expect(lazy.get(tool.id)).toEqual(tool)
      expect(lazy.require(tool.id)).toEqual(tool)
    }
    expect(lazy.get('nope')).toBeUndefined()
    expect(() => lazy.require('nope')).toThrow(/Library "lazy" has no tool "nope"/)
    expect(lazy.contentHash).toBe(eager.contentHash)
    expect(lazy.toJsonLines().equals(eager.toJsonLines())).toBe(true)
  })

  it('parses a tool only when it is asked for', () => {
    const good = JSON.stringify(SAMPLE_TOOLS[0])
    const broken = '{"id":"broken","name":' // a valid id, then no more JSON
    const library = ToolLibrary.fromJsonLines('partial', Buffer.from(`${good}\n${broken}\n`))
    expect(library.ids).toEqual([SAMPLE_TOOLS[0].id, 'broken'])
    expect(library.get(SAMPLE_TOOLS[0].id)).toEqual(SAMPLE_TOOLS[0])
    // A line that is not a tool is a damaged index, reported as one (not a SyntaxError).
    expect(() => library.get('broken')).toThrow(
      expect.objectContaining({
        code: 'INDEX_CORRUPT',
        message: expect.stringMatching(/line 2 .* not a valid tool "broken"/),
      }),
    )
  })

  it('reads lines whose id is not the first key, and skips empty lines', () => {
    const reordered = { name: 'x', id: 'later.id', description: 'Id not first.', parameters: {} }
    const library = ToolLibrary.fromJsonLines(
      'reordered',
      Buffer.from(`\n${JSON.stringify(reordered)}\n\n${JSON.stringify(SAMPLE_TOOLS[1])}`),
    )
    expect(library.ids).toEqual(['later.id', SAMPLE_TOOLS[1].id])
    expect(library.get('later.id')).toEqual(reordered)
  })

  it('refuses duplicate ids as the array library does', () => {
    expect(() =>
      ToolLibrary.fromJsonLines('twice', jsonLines([SAMPLE_TOOLS[0], SAMPLE_TOOLS[0]])),
    ).toThrow(expect.objectContaining({ code: 'DUPLICATE_TOOL_ID' }))
  })

  it('keeps a bounded number of parsed tools and gives equal objects after eviction', () => {
    const many: Tool[] = Array.from({ length: 5000 }, (_, index) => ({
      id: `t${index}`,
      name: `tool ${index}`,
      description: `Tool number ${index}.`,
      parameters: {},
    }))
    const library = ToolLibrary.fromJsonLines('many', jsonLines(many))
    for (const tool of many) expect(library.get(tool.id)).toEqual(tool)
    expect(library.get('t0')).toEqual(many[0])
    expect(library.get('t4999')).toBe(library.get('t4999'))
  })
})

describe('ToolLibrary content hash', () => {
  it('is sha256 over "id<TAB>tool hash" lines in id order, whatever the order or number of tools', () => {
    // More tools than one hashing slice (4,096), ids in mixed case, other scripts and surrogate
    // pairs, shuffled: the value indexes have always recorded.
    const tools: Tool[] = Array.from({ length: 9000 }, (_, at) => ({
      id: [`Tool${at}`, `tool${at}`, `é${at}`, `𝒳${at}`, `\uffff${at}`][at % 5],
      name: `t${at}`,
      description: `Tool number ${at}.`,
      parameters: {},
    })).sort(
      (a, b) => ((a.name.length * 7 + a.id.length) % 5) - ((b.name.length * 7 + b.id.length) % 5),
    )
    const lines = tools
      .map((tool) => [tool.id, toolContentHash(tool)] as const)
      .sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0))
      .map(([id, hash]) => `${id}\t${hash}`)
    expect(new ToolLibrary('many', tools).contentHash).toBe(sha256(lines.join('\n')))
    expect(new ToolLibrary('empty', []).contentHash).toBe(sha256(''))
  })
})
