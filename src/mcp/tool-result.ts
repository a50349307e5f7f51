/**
 * The shape of every toolsel MCP tool result: the payload as compact JSON text (what a model
 * reads) plus the same object as `structuredContent` (what a program reads, checked against the
 * tool's `outputSchema`). Failures are tool results with `isError: true`, so the model sees the
 * error code and the fix-it message instead of a protocol error.
 * @module
 */
import type { CallToolResult } from '@modelcontextprotocol/sdk/types.js'
import { z } from 'zod'
import {
  boundedMessage,
  describeIssues,
  errorMessage,
  isToolselError,
  MAX_ERROR_MESSAGE_CHARS,
  ToolselError,
} from '../errors.ts'
import type { Logger } from '../log.ts'

export function jsonResult(payload: Record<string, unknown>): CallToolResult {
  return { content: [{ type: 'text', text: JSON.stringify(payload) }], structuredContent: payload }
}

/**
 * `{error: {code, message, details?}}` as text, the same body the HTTP API returns. No
 * `structuredContent`: it would have to match the success `outputSchema`.
 */
function errorResult(error: ToolselError): CallToolResult {
  const { code, details } = error
  // Bounded as the HTTP bodies are; details that quote long request values are left out.
  const message = boundedMessage(error.message)
  const keep =
    Object.keys(details).length > 0 && JSON.stringify(details).length <= MAX_ERROR_MESSAGE_CHARS
  const body = keep ? { code, message, details } : { code, message }
  return { content: [{ type: 'text', text: JSON.stringify({ error: body }) }], isError: true }
}

/** Runs `run` in its turn: see createCallTurns. */
export type CallTurns = <T>(run: () => Promise<T>) => Promise<T>

/**
 * Turns for the tool calls of one HTTP request: the SDK starts every call of a JSON-RPC batch at
 * once, and their work then runs in microtasks without the event loop turning between them (a
 * batch of 100 select_tools of 8,000 characters held it 199-267 ms in one piece). Each call runs
 * after the previous one has finished and the loop has turned once (`setImmediate`), so other
 * requests are answered between the calls of a batch.
 */
export function createCallTurns(): CallTurns {
  let previous: Promise<unknown> = Promise.resolve()
  return (run) => {
    const turn = previous
      .then(() => new Promise<void>((resolve) => setImmediate(resolve)))
      .then(run)
    previous = turn.catch(() => undefined)
    return turn
  }
}

/**
 * Runs a tool handler (in its turn, given `turns`); our errors become error results, anything
 * else is logged as INTERNAL.
 */
export async function guardTool(
  logger: Logger,
  tool: string,
  run: () => Promise<CallToolResult>,
  turns?: CallTurns,
): Promise<CallToolResult> {
  try {
    return await (turns ? turns(run) : run())
  } catch (error) {
    if (isToolselError(error)) return errorResult(error)
    const reason = errorMessage(error)
    logger.error(`MCP tool ${tool} failed: ${error instanceof Error ? error.stack : reason}`)
    return errorResult(new ToolselError('INTERNAL', `${tool} failed: ${reason}`))
  }
}

/** A tool's arguments: the schema tools/list shows, and the check the handler runs. */
export interface ToolArguments<Shape extends z.ZodRawShape> {
  /**
   * What `registerTool` gets: an object schema the SDK's own check always passes, carrying the
   * JSON Schema of the strict arguments as its metadata, so tools/list shows exactly that schema
   * (zod writes a schema's metadata into its JSON Schema).
   */
  inputSchema: z.ZodObject
  /** The arguments checked, or INVALID_INPUT in the HTTP API's words (`describeIssues`). */
  parse(args: unknown): z.output<z.ZodObject<Shape, z.core.$strict>>
}

/**
 * A tool's arguments object that refuses keys it does not define, as the HTTP bodies do: a model
 * that invents `limit` for `k` is told so (`Unknown argument "limit": search_tools takes query, k,
 * library, retriever`) instead of getting the default silently. tools/list shows the schema with
 * `additionalProperties: false`.
 *
 * The handler checks the arguments itself (`parse`, inside `guardTool`), not the MCP SDK: the
 * SDK's check answers with its own text (`MCP error -32602: Input validation error: …` and zod's
 * issues), while an agent should get what every other tool error and the HTTP API give, the
 * `{error: {code: "INVALID_INPUT", message}}` body, bounded.
 */
export function toolArguments<Shape extends z.ZodRawShape>(
  tool: string,
  shape: Shape,
): ToolArguments<Shape> {
  const names = Object.keys(shape)
  const takes = names.length > 0 ? `${tool} takes ${names.join(', ')}` : `${tool} takes none`
  const strict = z.strictObject(shape, {
    error: (issue) => {
      if (issue.code !== 'unrecognized_keys') return undefined
      const keys = issue.keys.slice(0, 5).map((key) => JSON.stringify(key.slice(0, 64)))
      const more = issue.keys.length > 5 ? ` and ${issue.keys.length - 5} more` : ''
      return `Unknown argument${issue.keys.length === 1 ? '' : 's'} ${keys.join(', ')}${more}: ${takes}`
    },
  })
  // As the SDK writes an input schema (draft-7, the input side); it adds `$schema` itself.
  const { $schema: _, ...advertised } = z.toJSONSchema(strict, { target: 'draft-7', io: 'input' })
  return {
    inputSchema: z.looseObject({}).meta(advertised),
    parse(args) {
      const result = strict.safeParse(args ?? {})
      if (result.success) return result.data
      throw new ToolselError(
        'INVALID_INPUT',
        `Invalid arguments for ${tool}: ${describeIssues(result.error)}.`,
        { details: { issues: result.error.issues } },
      )
    },
  }
}
