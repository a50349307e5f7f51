/**
 * MCP `tools/list` results: `{tools: [...]}`, the whole JSON-RPC response
 * `{jsonrpc, id, result: {tools}}`, or a bare array of MCP tools.
 * Tool shape per the MCP specification (2025-06-18), "Tools" → "Tool": name, title?,
 * description?, inputSchema ({type: "object", …}), outputSchema?, annotations?.
 * @module
 */
import { z } from 'zod'
import type { Tool } from '../tool.ts'
import {
  addWarning,
  importFailed,
  namespaceOrFileStem,
  sourceOf,
  type ImportContext,
} from './import-context.ts'
import { describeValue, nonEmptyString, parseRecord } from './parse-record.ts'
import { toolList } from './tool-list.ts'

const McpToolSchema = z.looseObject({
  name: nonEmptyString(),
  title: z.string().optional(),
  description: z.string().optional(),
  inputSchema: z.looseObject({ type: z.literal('object') }),
  outputSchema: z.looseObject({ type: z.literal('object') }).optional(),
  annotations: z.record(z.string(), z.unknown()).optional(),
})

const JsonRpcErrorSchema = z.looseObject({ message: z.string(), code: z.number().optional() })

/**
 * Imports one MCP server's tools. They are namespaced by server (tool names are only unique
 * within a server): the namespace option, else the file name without extension
 * (`github.json` → `github`), and the id is `namespace.name`. `title`, `annotations` and
 * `outputSchema` are kept in `source`.
 */
export function importMcp(parsed: unknown, context: ImportContext): Tool[] {
  const items = toolList(unwrapJsonRpc(parsed, context), context, 'mcp')
  const namespace = namespaceOrFileStem(context)
  if (namespace === undefined) {
    addWarning(
      context,
      undefined,
      'no namespace (no file name and no namespace option): ids are bare tool names',
    )
  }
  return items.map((item, record) => {
    const tool = parseRecord(McpToolSchema, item, context, record)
    const source = sourceOf(context, 'mcp', record)
    if (tool.title !== undefined) source.title = tool.title
    if (tool.annotations !== undefined) source.annotations = tool.annotations
    if (tool.outputSchema !== undefined) source.outputSchema = tool.outputSchema
    const result: Tool = {
      id: namespace === undefined ? tool.name : `${namespace}.${tool.name}`,
      name: tool.name,
      description: tool.description ?? '',
      parameters: tool.inputSchema,
      source,
    }
    if (namespace !== undefined) result.namespace = namespace
    return result
  })
}

/** The `tools/list` result inside a JSON-RPC response, or the document itself. */
function unwrapJsonRpc(parsed: unknown, context: ImportContext): unknown {
  if (typeof parsed !== 'object' || parsed === null || Array.isArray(parsed)) return parsed
  const document = parsed as Record<string, unknown>
  if ('error' in document && 'jsonrpc' in document) {
    const error = parseRecord(JsonRpcErrorSchema, document.error, context, undefined, 'error.')
    throw importFailed(context, {
      field: 'error',
      message: `the file is a JSON-RPC error response, not a tool list: ${error.message}`,
    })
  }
  const result = 'jsonrpc' in document ? document.result : document
  if (typeof result !== 'object' || result === null || !('tools' in result)) {
    throw importFailed(context, {
      field: 'jsonrpc' in document ? 'result.tools' : 'tools',
      message: `expected an array of MCP tools, got ${describeValue(undefined)}`,
    })
  }
  if ('nextCursor' in result && typeof result.nextCursor === 'string') {
    addWarning(
      context,
      undefined,
      'the tool list is paginated (nextCursor); only this page was imported',
    )
  }
  return result
}
