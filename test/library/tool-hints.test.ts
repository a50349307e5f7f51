import { z } from 'zod'
import { describe, expect, it } from 'vitest'
import { TOOL_HINTS, toolHints } from '../../src/library/tool-hints.ts'
import { ToolHintsSchema } from '../../src/server/schemas.ts'
import { SAMPLE_TOOLS } from '../helpers/sample-tools.ts'

describe('tool hints', () => {
  it('passes on the four boolean hints in MCP order, nothing else', () => {
    const tool = {
      ...SAMPLE_TOOLS[0],
      source: {
        format: 'mcp',
        annotations: { title: 'T', openWorldHint: true, readOnlyHint: false, extraHint: true },
      },
    }
    const hints = toolHints(tool)
    expect(hints).toEqual({ readOnlyHint: false, openWorldHint: true })
    expect(Object.keys(hints!)).toEqual(['readOnlyHint', 'openWorldHint'])
    expect(
      toolHints({ ...SAMPLE_TOOLS[0], source: { format: 'mcp', annotations: [true] } }),
    ).toBeUndefined()
    expect(
      toolHints({ ...SAMPLE_TOOLS[0], source: { format: 'mcp', annotations: { title: 'T' } } }),
    ).toBe(undefined)
  })

  it('answers them under the schema made from the same list', () => {
    const json = z.toJSONSchema(ToolHintsSchema) as {
      properties: Record<string, { type: string }>
      description: string
    }
    expect(Object.keys(json.properties)).toEqual([...TOOL_HINTS])
    for (const hint of TOOL_HINTS) {
      expect(json.properties[hint].type).toBe('boolean')
      expect(json.description).toContain(hint)
    }
    expect(ToolHintsSchema.safeParse({ readOnlyHint: 'yes' }).success).toBe(false)
  })
})
