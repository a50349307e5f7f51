/**
 * #10 hardening: an upload's library is hashed (`contentHashSliced`, in the build) and written
 * as JSON lines (`toJsonLineChunksSliced`, in the save) in slices that give the event loop back; both
 * give exactly what the one-piece getters give.
 */
import { describe, expect, it } from 'vitest'
import { ToolLibrary } from '../../src/library/tool-library.ts'
import type { Tool } from '../../src/library/tool.ts'
import { turnsDuring } from '../helpers/event-loop-turns.ts'

function tools(count: number): Tool[] {
  return Array.from({ length: count }, (_, index) => ({
    id: `server.tool_${(index * 7919) % count}`,
    name: `tool_${index}`,
    description: `Does thing number ${index} — with ünïcode and "quotes".`,
    parameters: {
      type: 'object',
      properties: { query: { type: 'string', description: `the ${index}th query` } },
      required: ['query'],
    },
    ...(index % 3 === 0 && { tags: ['a', `t${index % 5}`] }),
  }))
}

describe('ToolLibrary sliced hashing and JSON lines', () => {
  const input = tools(20_000)

  it('contentHashSliced equals contentHash and yields to the event loop', async () => {
    const expected = new ToolLibrary('big', input).contentHash
    const library = new ToolLibrary('big', input)
    let hash = ''
    const turns = await turnsDuring(async () => {
      hash = await library.contentHashSliced()
    })
    expect(hash).toBe(expected)
    expect(library.contentHash).toBe(expected)
    expect(turns).toBeGreaterThan(1)
    // Input order does not matter, as for the getter.
    expect(await new ToolLibrary('big', [...input].reverse()).contentHashSliced()).toBe(expected)
  })

  it('toJsonLineChunksSliced gives the bytes toJsonLines gives, in chunks of 256 lines', async () => {
    const library = new ToolLibrary('big', input)
    let chunks: Buffer[] = []
    const turns = await turnsDuring(async () => {
      chunks = await library.toJsonLineChunksSliced()
    })
    expect(turns).toBeGreaterThan(1)
    expect(chunks).toHaveLength(Math.ceil(input.length / 256))
    const bytes = Buffer.concat(chunks)
    expect(bytes.equals(library.toJsonLines())).toBe(true)
    expect(
      bytes.equals(Buffer.from(input.map((tool) => `${JSON.stringify(tool)}\n`).join(''))),
    ).toBe(true)
    // A library over those bytes hands them back as they are (one chunk), and hashes to the same.
    const reread = ToolLibrary.fromJsonLines('big', bytes)
    const again = await reread.toJsonLineChunksSliced()
    expect(again).toHaveLength(1)
    expect(again[0].equals(bytes)).toBe(true)
    expect(reread.contentHash).toBe(library.contentHash)
    expect(await new ToolLibrary('none', []).toJsonLineChunksSliced()).toEqual([])
  })

  it('makes the JSON lines of tool objects once: toJsonLines (the in-process import) and then the save', async () => {
    const library = new ToolLibrary('big', input.slice(0, 600))
    const lines = library.toJsonLines()
    // The save takes the very buffer the import measured (round 53: it was made twice).
    const chunks = await library.toJsonLineChunksSliced()
    expect(chunks).toHaveLength(1)
    expect(chunks[0]).toBe(lines)
    // Taken: not kept past the save; made again (in slices) when asked again, the same bytes.
    const again = await library.toJsonLineChunksSliced()
    expect(again).toHaveLength(Math.ceil(600 / 256))
    expect(Buffer.concat(again).equals(lines)).toBe(true)
  })

  it('stops at an aborted signal', async () => {
    const controller = new AbortController()
    controller.abort(new Error('gone'))
    await expect(
      new ToolLibrary('big', input).contentHashSliced(controller.signal),
    ).rejects.toMatchObject({ code: 'ABORTED' })
  })
})
