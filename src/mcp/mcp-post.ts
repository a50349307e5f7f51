/**
 * The answer to a POST to `/mcp` (mcp-routes.ts): a fresh MCP server and the SDK's web-standard
 * transport per request. Loaded on the first such request, not at start: the MCP SDK's server,
 * transport and types are about 0.25 s of CPU that a server no MCP client calls would pay for
 * nothing (bench/README.md, "CLI start cost", round 49).
 * @module
 */
import {
  DEFAULT_MAX_REQUEST_BODY_SIZE,
  requestBodyTooLargeMessage,
} from '@modelcontextprotocol/sdk/server/requestBody.js'
import { WebStandardStreamableHTTPServerTransport } from '@modelcontextprotocol/sdk/server/webStandardStreamableHttp.js'
import { isJsonContentType } from '@modelcontextprotocol/sdk/shared/mediaType.js'
import type { Context } from 'hono'
import { createMcpServer } from './create-mcp-server.ts'
import type { McpContext, McpSession } from './mcp-context.ts'
import { OPEN_PRINCIPAL, type Principal } from '../server/auth/api-keys.ts'
import { principalOf } from '../server/middleware/auth.ts'
import { countJsonValues, MAX_BODY_VALUES } from '../server/validate.ts'
import { decodeUtf8, InvalidUtf8Error } from '../read-text-file.ts'
import { batchAnswer, planBody, tooDeep } from './jsonrpc-answers.ts'
import { createCallTurns } from './tool-result.ts'
import { narrowScope, parseList, SCOPE_HEADERS } from './tool-scope.ts'

import { rpcError } from './rpc-error.ts'

/**
 * A request body's bytes, up to `maxBytes` (the SDK's `readRequestBody` bound: a larger
 * Content-Length is refused unread, a longer body as soon as it passes the limit), or undefined
 * when it is larger. Bytes, not the SDK's text, so that they can be checked as UTF-8.
 */
async function readBodyBytes(request: Request, maxBytes: number): Promise<Uint8Array | undefined> {
  if (Number(request.headers.get('content-length')) > maxBytes) return undefined
  if (request.body === null) return new Uint8Array(0)
  const chunks: Uint8Array[] = []
  let received = 0
  const reader = request.body.getReader()
  try {
    for (;;) {
      const { done, value } = await reader.read()
      if (done) break
      received += value.byteLength
      if (received > maxBytes) return undefined
      chunks.push(value)
    }
  } finally {
    reader.releaseLock()
  }
  return Buffer.concat(chunks, received)
}

/**
 * The body of a JSON POST, read within the SDK's bound (its default 4 MiB), checked as UTF-8
 * (`decodeUtf8`, the check of the JSON routes and tool files: bytes that are not were read as
 * U+FFFD), counted (`countJsonValues`, at most MAX_BODY_VALUES as on the query routes) and
 * parsed, for the transport's `parsedBody`; or the JSON-RPC error the transport would answer
 * (413, -32700), or -32600 for valid JSON nested past MAX_MESSAGE_DEPTH (`tooDeep`), or undefined for a body that is not JSON (the transport answers 415 without
 * reading it). The SDK parses what it reads in one piece: 3.9 MB of `1,` held the event loop
 * 91-239 ms (bench/README round 22).
 */
async function boundedBody(c: Context): Promise<{ parsed: unknown } | Response | undefined> {
  if (!isJsonContentType(c.req.header('content-type') ?? null)) return undefined
  const bytes = await readBodyBytes(c.req.raw, DEFAULT_MAX_REQUEST_BODY_SIZE)
  if (bytes === undefined) {
    return rpcError(c, 413, requestBodyTooLargeMessage(DEFAULT_MAX_REQUEST_BODY_SIZE))
  }
  let text: string
  try {
    text = decodeUtf8(bytes)
  } catch (error) {
    if (!(error instanceof InvalidUtf8Error)) throw error
    return rpcError(
      c,
      400,
      `Parse error: the request body is not UTF-8 text at byte ${error.offset}`,
      -32700,
    )
  }
  if (countJsonValues(text, MAX_BODY_VALUES) > MAX_BODY_VALUES) {
    return rpcError(
      c,
      413,
      `Payload Too Large: the request body holds more than ${MAX_BODY_VALUES.toLocaleString('en-US')} JSON values (array items and object members); send fewer at once.`,
    )
  }
  let parsed: unknown
  try {
    parsed = JSON.parse(text) as unknown
  } catch {
    return rpcError(c, 400, 'Parse error: Invalid JSON', -32700)
  }
  const deep = tooDeep(parsed)
  return deep ? c.json(deep, 400) : { parsed }
}

/**
 * The client's scope and default library, from query parameters or headers, within what the
 * configuration and the client's API key allow (a key limited to servers, tags or libraries
 * can't widen them).
 */
function sessionFromRequest(
  context: McpContext,
  c: Context,
  principal: Principal = OPEN_PRINCIPAL,
): McpSession {
  const pick = (name: 'servers' | 'tags') =>
    parseList(c.req.query(name) ?? c.req.header(SCOPE_HEADERS[name]))
  const library = c.req.query('library') ?? c.req.header('x-toolsel-library')
  const allowed = narrowScope(context.scope, principal)
  return {
    scope: narrowScope(allowed, { servers: pick('servers'), tags: pick('tags') }),
    ...(library ? { library } : {}),
    libraries: principal.libraries,
    keyName: principal.name,
    key: principal,
    turns: createCallTurns(),
  }
}

/** The answer to a POST to `/mcp` from a ready service. */
export async function answerPost(context: McpContext, c: Context): Promise<Response> {
  const body = await boundedBody(c)
  if (body instanceof Response) return body
  // JSON-RPC's answers where the SDK's differ (jsonrpc-answers.ts); the rest is the SDK's.
  const plan = body === undefined ? undefined : planBody(body.parsed)
  if (plan !== undefined && 'answer' in plan) return c.json(plan.answer, plan.status)
  const server = createMcpServer(context, sessionFromRequest(context, c, principalOf(c)))
  const transport = new WebStandardStreamableHTTPServerTransport({
    sessionIdGenerator: undefined,
    // Plain JSON answers: nothing streams, and the response is complete when returned.
    enableJsonResponse: true,
  })
  await server.connect(transport)
  try {
    if (plan === undefined) return await transport.handleRequest(c.req.raw)
    const response = await transport.handleRequest(c.req.raw, { parsedBody: plan.forward })
    return plan.batch ? await batchAnswer(response, plan.errors) : response
  } finally {
    void server.close()
  }
}
