/**
 * The list of tool records in a document that is either an array (or JSON Lines) of tools or an
 * object `{"tools": [...]}`, the two shapes that canonical, openai and mcp files share.
 * @module
 */
import { importFailed, type ImportContext } from './import-context.ts'
import type { ImportFormat } from './import-formats.ts'
import { describeValue } from './parse-record.ts'

export function toolList(parsed: unknown, context: ImportContext, format: ImportFormat): unknown[] {
  if (Array.isArray(parsed)) return parsed
  if (typeof parsed === 'object' && parsed !== null && 'tools' in parsed) {
    const { tools } = parsed
    if (Array.isArray(tools)) return tools
    throw importFailed(context, {
      field: 'tools',
      message: `expected an array of ${format} tools, got ${describeValue(tools)}`,
    })
  }
  throw importFailed(context, {
    message: `expected an array of ${format} tools or {"tools": [...]}, got ${describeValue(parsed)}`,
  })
}
