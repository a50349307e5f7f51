/**
 * Our own tool format: an array of `Tool`, `{"tools": [Tool, ...]}`, or JSON Lines of `Tool`.
 * @module
 */
import { z } from 'zod'
import { EMPTY_PARAMETERS, type Tool } from '../tool.ts'
import { sourceOf, type ImportContext } from './import-context.ts'
import { nonEmptyString, parseRecord } from './parse-record.ts'
import { toolList } from './tool-list.ts'

/**
 * Strict, so a misspelt key (`parameter`, `desc`) fails the import instead of silently dropping
 * what the author meant.
 */
const CanonicalToolSchema = z
  .object({
    id: nonEmptyString(),
    name: nonEmptyString(),
    description: z.string().default(''),
    parameters: z.record(z.string(), z.unknown()).optional(),
    namespace: nonEmptyString().optional(),
    tags: z.array(z.string()).optional(),
    source: z.looseObject({ format: z.string() }).optional(),
  })
  .strict()

/**
 * Imports canonical tools. A tool's own `source` is kept (it records where the tool originally
 * came from); tools without one get `{format: 'canonical', file, record}`. The namespace option
 * fills in `namespace` where a tool has none; ids are never changed.
 */
export function importCanonical(parsed: unknown, context: ImportContext): Tool[] {
  const items = toolList(parsed, context, 'canonical')
  return items.map((item, record) => {
    const tool = parseRecord(CanonicalToolSchema, item, context, record)
    const result: Tool = {
      id: tool.id,
      name: tool.name,
      description: tool.description,
      parameters: tool.parameters ?? { ...EMPTY_PARAMETERS },
      source: tool.source ?? sourceOf(context, 'canonical', record),
    }
    const namespace = tool.namespace ?? context.namespace
    if (namespace !== undefined) result.namespace = namespace
    if (tool.tags !== undefined) result.tags = tool.tags
    return result
  })
}
