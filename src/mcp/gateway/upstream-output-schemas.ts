/**
 * The gateway's MCP client for an upstream, and the output schemas of that upstream's tools,
 * compiled one tool at a time. The SDK's `listTools` compiles (Ajv) the outputSchema of every
 * tool a page lists, so that `callTool` checks a result's structuredContent against it: one
 * schema Ajv cannot compile (nested ~500 levels deep, a `$ref` to nowhere, `"type": "bogus"`, a
 * `pattern` that is no regular expression) threw out of `listTools` and marked the whole server
 * down. listAllTools (upstream-tools.ts) compiles each kept tool's schema here as its page
 * arrives, skipping a tool whose schema does not compile, then hands the kept tools of the whole
 * listing to the SDK's cache (`cacheToolMetadata`), which finds them compiled.
 * @module
 */
import { Client } from '@modelcontextprotocol/sdk/client/index.js'
import type { Tool as McpTool } from '@modelcontextprotocol/sdk/types.js'
import { AjvJsonSchemaValidator } from '@modelcontextprotocol/sdk/validation/ajv'
import type {
  JsonSchemaType,
  JsonSchemaValidator,
  jsonSchemaValidator,
} from '@modelcontextprotocol/sdk/validation/types.js'
import { MCP_GATEWAY_CLIENT_INFO } from '../server-info.ts'

/** Longest compile error quoted in the warning that skips a tool (Ajv quotes the schema's text). */
const MAX_COMPILE_ERROR_CHARS = 200

/**
 * The SDK's Ajv validator for one upstream's client, each schema compiled once a listing (the
 * SDK's cache asks again for the ones listAllTools compiled), and a fresh Ajv for each listing:
 * Ajv holds every schema it compiled, and the client's one Ajv grew by a whole listing's output
 * schemas at each re-list.
 */
export class OutputSchemaCompiler implements jsonSchemaValidator {
  #ajv = new AjvJsonSchemaValidator()
  #compiled = new WeakMap<object, JsonSchemaValidator<unknown>>()

  /**
   * A listing starts: what earlier ones compiled is let go (the SDK's cache keeps its validators
   * until a listing completes).
   */
  restart(): void {
    this.#ajv = new AjvJsonSchemaValidator()
    this.#compiled = new WeakMap()
  }

  /** Why `schema` cannot be compiled (after "its outputSchema"), or undefined when it compiles. */
  problem(schema: JsonSchemaType): string | undefined {
    try {
      this.getValidator(schema)
      return undefined
    } catch (error) {
      if (error instanceof RangeError) return 'is nested too deep to compile'
      const message = error instanceof Error ? error.message : String(error)
      const cut =
        message.length > MAX_COMPILE_ERROR_CHARS
          ? `${message.slice(0, MAX_COMPILE_ERROR_CHARS)}…`
          : message
      return `does not compile: ${JSON.stringify(cut)}`
    }
  }

  getValidator<T>(schema: JsonSchemaType): JsonSchemaValidator<T> {
    const known = this.#compiled.get(schema)
    if (known) return known as JsonSchemaValidator<T>
    const made = this.#ajv.getValidator<T>(schema)
    this.#compiled.set(schema, made as JsonSchemaValidator<unknown>)
    return made
  }
}

const compilers = new WeakMap<Client, OutputSchemaCompiler>()

/** A client for an upstream, its output schemas compiled by an OutputSchemaCompiler. */
export function newUpstreamClient(): Client {
  const compiler = new OutputSchemaCompiler()
  const client = new Client(MCP_GATEWAY_CLIENT_INFO, { jsonSchemaValidator: compiler })
  compilers.set(client, compiler)
  return client
}

/** The compiler of a client made by newUpstreamClient. */
export function outputSchemaCompiler(client: Client): OutputSchemaCompiler {
  const compiler = compilers.get(client)
  if (!compiler) throw new Error('this MCP client was not made by newUpstreamClient()')
  return compiler
}

/**
 * Hands a listing's tools to the SDK's cache, as its `listTools` does for each page (the
 * Client's private `cacheToolMetadata`): their output validators, which `callTool` checks
 * structuredContent with, and which of them need task-based calls. Once for the whole listing:
 * the SDK clears the cache at each page, so only the last page's tools were checked. An SDK
 * without it fails the listing by name, not every output check silently.
 */
export function cacheToolMetadata(client: Client, tools: readonly McpTool[]): void {
  const cache = (client as unknown as { cacheToolMetadata?: unknown }).cacheToolMetadata
  if (typeof cache !== 'function') {
    throw new Error(
      "the MCP SDK's Client has no cacheToolMetadata method (toolsel relies on it to check tools/call results against each tool's outputSchema): install the SDK version package.json names",
    )
  }
  cache.call(client, tools)
}
