/**
 * Duplicate tool ids. Formats that define a merge (toolbench, beir-corpus) merge before this
 * check; for every other format two records with one id are an error, never a silent overwrite.
 * @module
 */
import { ToolselError } from '../../errors.ts'
import type { Tool } from '../tool.ts'
import { recordLabel, type ImportContext } from './import-context.ts'
import { shownName } from '../name-characters.ts'

/**
 * What to do about a repeated id, said wherever an import can be told (`onDuplicate`): the CLI's
 * `--on-duplicate`, the PUT's `?onDuplicate=`.
 */
export const ON_DUPLICATE_FIX =
  'ids must be unique within a library: import with onDuplicate rename (the later one becomes <id>_2), first or last (toolsel index --on-duplicate rename; PUT …?onDuplicate=rename)'

/**
 * DUPLICATE_TOOL_ID naming the id and both records, e.g. `tools.json: tool id "a" appears twice
 * (record 0 and record 3)`; given the tools, an OpenAPI operation is named too (`operation GET
 * /orders (record 2)`): a spec's reader knows its operations, not their positions.
 */
export function duplicateToolId(
  context: ImportContext,
  id: string,
  firstRecord: number,
  secondRecord: number,
  tools?: readonly [Tool, Tool],
): ToolselError {
  const first = withOperation(recordLabel(context, firstRecord), tools?.[0])
  const second = withOperation(recordLabel(context, secondRecord), tools?.[1])
  return new ToolselError(
    'DUPLICATE_TOOL_ID',
    `${context.file}: tool id ${shownName(id)} appears twice (${first} and ${second}); ${ON_DUPLICATE_FIX}.`,
    { details: { file: context.file, id, records: [firstRecord, secondRecord] } },
  )
}

/** Throws DUPLICATE_TOOL_ID for the first id that occurs twice; records come from `source.record`. */
export function assertUniqueIds(tools: readonly Tool[], context: ImportContext): void {
  const recordOfId = new Map<string, number>()
  for (const [position, tool] of tools.entries()) {
    const record = typeof tool.source?.record === 'number' ? tool.source.record : position
    const earlier = recordOfId.get(tool.id)
    if (earlier !== undefined) throw duplicateToolId(context, tool.id, earlier, record)
    recordOfId.set(tool.id, record)
  }
}

/** `operation GET /orders (record 2)` for a tool imported from an OpenAPI operation, else `label`. */
function withOperation(label: string, tool: Tool | undefined): string {
  const method = tool?.source?.method
  const path = tool?.source?.path
  return typeof method === 'string' && typeof path === 'string'
    ? `operation ${method} ${path} (${label})`
    : label
}
