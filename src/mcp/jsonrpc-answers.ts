/**
 * JSON-RPC 2.0's answers (section 5.1) for what is not an MCP message, which the SDK's HTTP
 * transport answers otherwise: it refused a whole batch with -32700 for one bad element (`[1]`,
 * `[[ping]]`), answered -32700 for valid JSON that is no request (`{"method": 1}`, an id of
 * null), took `[]` with 202 and no body, and answered a batch of one request with a bare object.
 * Here: -32600 (Invalid Request) for each message that is not one, with its id where it can be
 * read; -32602 (Invalid params) for a request whose params are by position (MCP's are by name);
 * `[]` one -32600; a batch answered with an array. MCP ids are strings or integers, never null
 * (unlike plain JSON-RPC), as the SDK's schema says.
 * @module
 */
import { MAX_BATCH_SIZE } from '@modelcontextprotocol/sdk/server/requestBody.js'
import {
  isInitializeRequest,
  isJSONRPCRequest,
  JSONRPCMessageSchema,
  type JSONRPCMessage,
} from '@modelcontextprotocol/sdk/types.js'
import { MAX_TOOL_NAME_LENGTH, shownName } from '../library/name-characters.ts'

const INVALID_REQUEST = -32600
const INVALID_PARAMS = -32602

/** A JSON-RPC error answer; `id` null where the message's id can't be read. */
export interface ErrorAnswer {
  jsonrpc: '2.0'
  id: string | number | null
  error: { code: number; message: string }
}

/** A message that is not one the SDK takes, and its answer (none for a notification). */
export interface Refusal {
  answer: ErrorAnswer
  /** A notification (no id): JSON-RPC answers none, in a batch it is left out. */
  notification: boolean
}

const MESSAGE_KEYS = new Set(['jsonrpc', 'id', 'method', 'params'])

function isRecord(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value)
}

function isRequestId(id: unknown): id is string | number {
  return typeof id === 'string' || Number.isSafeInteger(id)
}

function errorAnswer(id: string | number | null, code: number, message: string): ErrorAnswer {
  return { jsonrpc: '2.0', id, error: { code, message } }
}

/**
 * Deepest nesting of arrays and objects in a message (or a batch) that /mcp and `mcp --stdio`
 * take. A tool's parameters nest at most 64 levels (MAX_PARAMETER_DEPTH), a message's envelope
 * adds three; past a few thousand, the SDK's own handling (JSON.stringify of a response it did
 * not expect, for its error) overflowed the stack, which /mcp answered -32700 "Parse error".
 */
export const MAX_MESSAGE_DEPTH = 256

/**
 * Whether `value` nests arrays and objects more than `limit` levels (`[1]` and `{}` are 1,
 * `[{}]` 2). One iterative pass, never overflows, stops at the first value past the limit; it
 * visits no more values than the parse made (bounded by the body's or the line's limits), and
 * keeps only the arrays and objects on its stack, two flat stacks, no pair per value: pushing a
 * pair for every value, numbers and strings too, cost 4-6 times the JSON.parse before it for a
 * message of numbers (1.2 s for 4,000,000 in an 8 MiB stdio line; now 30 ms; bench/README
 * round 37, hard23).
 */
export function nestedPast(value: unknown, limit: number): boolean {
  if (value === null || typeof value !== 'object') return false
  const containers: object[] = [value]
  const depths: number[] = [1]
  while (containers.length > 0) {
    const current = containers.pop()!
    const depth = depths.pop()!
    if (depth > limit) return true
    for (const inner of Array.isArray(current) ? (current as unknown[]) : Object.values(current)) {
      if (inner === null || typeof inner !== 'object') continue
      containers.push(inner as object)
      depths.push(depth + 1)
    }
  }
  return false
}

/**
 * The -32600 for a parsed message (or batch) nesting arrays and objects past MAX_MESSAGE_DEPTH:
 * valid JSON that toolsel does not take, not a parse error. The id is a request's where it can
 * be read (a batch's: null). Undefined for a message within the limit.
 */
export function tooDeep(value: unknown): ErrorAnswer | undefined {
  if (!nestedPast(value, MAX_MESSAGE_DEPTH)) return undefined
  const id = isRecord(value) && 'method' in value && isRequestId(value.id) ? value.id : null
  const why = `Invalid Request: the message nests arrays and objects more than ${MAX_MESSAGE_DEPTH} levels deep; toolsel takes at most ${MAX_MESSAGE_DEPTH}`
  return errorAnswer(id, INVALID_REQUEST, why)
}

/** Why `value` is not a JSON-RPC message, in a few words for its -32600 answer. */
function whyInvalid(value: unknown): string {
  if (Array.isArray(value)) return 'a batch inside a batch'
  if (!isRecord(value)) return 'a JSON-RPC message is an object'
  if ('id' in value && !isRequestId(value.id)) {
    return 'an id is a string or an integer (MCP allows no null id)'
  }
  if (value.jsonrpc !== '2.0') return '"jsonrpc" must be "2.0"'
  return 'not a JSON-RPC 2.0 request, notification or response (a string "method", "params" an object, no other members)'
}

/**
 * The -32602 of a `tools/call` naming a tool past MAX_TOOL_NAME_LENGTH (MCP: "1 to 128"
 * characters), which no toolsel server has; the SDK answered "Tool <the whole name> not found",
 * a 4 MB name echoed whole. Undefined for any other message.
 */
function toolNameTooLong(message: JSONRPCMessage): ErrorAnswer | undefined {
  if (!isJSONRPCRequest(message) || message.method !== 'tools/call') return undefined
  const name = (message.params as { name?: unknown } | undefined)?.name
  if (typeof name !== 'string' || name.length <= MAX_TOOL_NAME_LENGTH) return undefined
  const why = `Invalid params: the tool name ${shownName(name)} is ${name.length.toLocaleString('en-US')} characters long; MCP tool names are at most ${MAX_TOOL_NAME_LENGTH}`
  return errorAnswer(message.id, INVALID_PARAMS, why)
}

/** The message as the SDK reads it, or the answer to one it does not take. */
export function checkMessage(value: unknown): { message: JSONRPCMessage } | { refusal: Refusal } {
  const parsed = JSONRPCMessageSchema.safeParse(value)
  if (parsed.success) {
    const answer = toolNameTooLong(parsed.data)
    return answer ? { refusal: { answer, notification: false } } : { message: parsed.data }
  }
  const record = isRecord(value) ? value : undefined
  const notification = record !== undefined && 'method' in record && !('id' in record)
  // Its id, where it is a request's (a response's id is the client's own, not answered).
  const id = record && 'method' in record && isRequestId(record.id) ? record.id : null
  if (
    record &&
    Array.isArray(record.params) &&
    Object.keys(record).every((key) => MESSAGE_KEYS.has(key)) &&
    JSONRPCMessageSchema.safeParse({ ...record, params: {} }).success
  ) {
    const answer = errorAnswer(
      id,
      INVALID_PARAMS,
      'Invalid params: MCP methods take params by name (an object), not by position (an array)',
    )
    return { refusal: { answer, notification } }
  }
  const answer = errorAnswer(id, INVALID_REQUEST, `Invalid Request: ${whyInvalid(value)}`)
  return { refusal: { answer, notification: false } }
}

/** How /mcp answers a parsed body: itself, or by the transport (with errors to add). */
export type BodyPlan =
  | { status: 200 | 400; answer: ErrorAnswer | ErrorAnswer[] }
  | {
      /** What the transport reads (`parsedBody`). */
      forward: unknown
      /** A batch: the answer is an array, with `errors` added. */
      batch: boolean
      errors: ErrorAnswer[]
    }

/**
 * A batch's messages checked one by one: the good ones, and the errors of the bad ones (a
 * request whose id an earlier one of the batch has is a bad one: the SDK keeps one answer an id,
 * so the later went unanswered; MCP never uses an id twice), and how many notifications were
 * refused (JSON-RPC answers none). At most MAX_BATCH_SIZE items (the callers' bound).
 */
function splitBatch(items: unknown[]) {
  const good: JSONRPCMessage[] = []
  const errors: ErrorAnswer[] = []
  const ids = new Set<string | number>()
  let skipped = 0
  for (const item of items) {
    const checked = checkMessage(item)
    if ('message' in checked) {
      const { message } = checked
      if (isJSONRPCRequest(message) && ids.has(message.id)) {
        const shown = typeof message.id === 'string' ? shownName(message.id) : String(message.id)
        const why = `Invalid Request: the id ${shown} is used twice in this batch`
        errors.push(errorAnswer(message.id, INVALID_REQUEST, why))
        continue
      }
      if (isJSONRPCRequest(message)) ids.add(message.id)
      good.push(message)
    } else if (checked.refusal.notification) skipped += 1
    else errors.push(checked.refusal.answer)
  }
  return { good, errors, skipped }
}

/**
 * What /mcp does with a parsed body. A single message the SDK takes, and a batch over
 * MAX_BATCH_SIZE (the SDK's -32600), go to the transport unchanged. A single message it does not
 * take is answered here: 400 and -32600 (200 and -32602 for a request with params by position:
 * a request answered, as the SDK answers -32601). A batch's messages are checked one by one (at
 * most MAX_BATCH_SIZE, `splitBatch`), the good ones go to the transport, each bad one gets its
 * error in the array; none good: 400 and the errors alone.
 */
export function planBody(parsed: unknown): BodyPlan {
  if (!Array.isArray(parsed)) {
    const checked = checkMessage(parsed)
    if ('message' in checked) return { forward: parsed, batch: false, errors: [] }
    const { answer, notification } = checked.refusal
    const answered = answer.error.code === INVALID_PARAMS && !notification
    return { status: answered ? 200 : 400, answer }
  }
  if (parsed.length === 0) {
    return {
      status: 400,
      answer: errorAnswer(null, INVALID_REQUEST, 'Invalid Request: an empty batch'),
    }
  }
  if (parsed.length > MAX_BATCH_SIZE) return { forward: parsed, batch: true, errors: [] }
  const { good, errors, skipped } = splitBatch(parsed)
  if (good.length > 0) return { forward: good, batch: true, errors }
  if (errors.length > 0) return { status: 400, answer: errors }
  // Only notifications with params by position: nothing to answer, nothing taken.
  return {
    status: 400,
    answer: errorAnswer(
      null,
      INVALID_PARAMS,
      `Invalid params: ${skipped} notification(s) with params by position; MCP takes params by name`,
    ),
  }
}

/**
 * The transport's answer to a batch's good messages as JSON-RPC answers a batch: an array (the
 * SDK answers a batch holding one request with a bare object), the refused messages' errors
 * added (200 with only those when the good ones were notifications, which the transport answers
 * with 202). Its other answers (an error of the whole batch, e.g. two initialize requests) as
 * they are.
 */
export async function batchAnswer(response: Response, errors: ErrorAnswer[]): Promise<Response> {
  const headers = { 'content-type': 'application/json' }
  if (response.status === 202) {
    return errors.length === 0 ? response : new Response(JSON.stringify(errors), { headers })
  }
  const type = response.headers.get('content-type') ?? ''
  if (response.status !== 200 || !type.startsWith('application/json')) return response
  const text = await response.text()
  // The SDK writes `JSON.stringify` of one answer or of an array of them.
  const answers = text.startsWith('[') ? text.slice(1, -1) : text
  const parts = [answers, ...errors.map((error) => JSON.stringify(error))]
  return new Response(`[${parts.join(',')}]`, { headers })
}

/** What `toolsel mcp --stdio` does with a line the SDK's transport refused: answer it, or run a batch. */
export type LinePlan =
  { answer: ErrorAnswer | ErrorAnswer[] | null } | { run: JSONRPCMessage[]; errors: ErrorAnswer[] }

/**
 * What `toolsel mcp --stdio` does with a line that is JSON but not a message the SDK's transport
 * takes (`value`, the line parsed). A message is answered as /mcp answers one (null: a
 * notification, no answer). The transport reads no batches (MCP dropped them in 2025-06-18;
 * 2025-03-26 has them on stdio too), so a batch is checked here as /mcp checks one: `[]` and one
 * over MAX_BATCH_SIZE get one -32600 (a 10 MiB line of `1,` would be 5 million answers), only bad
 * messages their errors, `initialize` with another message one -32600 (the SDK's HTTP answer);
 * else its good messages are run and answered in one array with the errors (`run`).
 */
export function planLine(value: unknown): LinePlan {
  if (!Array.isArray(value)) {
    const checked = checkMessage(value)
    if ('message' in checked) return { answer: null }
    return { answer: checked.refusal.notification ? null : checked.refusal.answer }
  }
  if (value.length === 0) {
    return { answer: errorAnswer(null, INVALID_REQUEST, 'Invalid Request: an empty batch') }
  }
  if (value.length > MAX_BATCH_SIZE) {
    const why = `Invalid Request: Batch must not exceed ${MAX_BATCH_SIZE} messages`
    return { answer: errorAnswer(null, INVALID_REQUEST, why) }
  }
  const { good, errors } = splitBatch(value)
  if (good.length === 0) return { answer: errors.length > 0 ? errors : null }
  if (good.length > 1 && good.some(isInitializeRequest)) {
    const why = 'Invalid Request: Only one initialization request is allowed'
    return { answer: errorAnswer(null, INVALID_REQUEST, why) }
  }
  return { run: good, errors }
}
