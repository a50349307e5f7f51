/**
 * The gateway's MCP client for an upstream, and the output schemas of that upstream's tools,
 * compiled one tool at a time. The SDK's `listTools` compiles (Ajv) the outputSchema of every
 * tool a page lists, so that `callTool` checks a result's structuredContent against it: one
 * schema Ajv cannot compile (nested ~500 levels deep, a `$ref` to nowhere, `"type": "bogus"`, a
 * `pattern` that is no regular expression) threw out of `listTools` and marked the whole server
 * down. listAllTools (upstream-tools.ts) compiles each kept tool's schema here as its page
 * arrives, skipping a tool whose schema does not compile, then hands the kept tools of the whole
 * listing to the SDK's cache (`cacheToolMetadata`), which finds them compiled.
 *
 * The schemas' `pattern` and `patternProperties` run on RE2 (re2js), not JavaScript's
 * backtracking RegExp: an upstream's `"pattern": "^(a+)+$"` and a 40-character result held the
 * event loop for hours in Ajv's default engine. RE2 runs in time linear in the input; a pattern
 * it cannot run (look-around, back-references) does not compile, and the tool is skipped with a
 * warning as for any schema that does not compile.
 * @module
 */
import { Client } from '@modelcontextprotocol/sdk/client/index.js'
import type { Tool as McpTool } from '@modelcontextprotocol/sdk/types.js'
import { AjvJsonSchemaValidator } from '@modelcontextprotocol/sdk/validation/ajv'
import { Ajv, type Options as AjvOptions } from 'ajv'
import ajvFormats from 'ajv-formats'
import { RE2JS } from 're2js'
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
  #ajv = newValidator()
  #compiled = new WeakMap<object, JsonSchemaValidator<unknown>>()

  /**
   * A listing starts: what earlier ones compiled is let go (the SDK's cache keeps its validators
   * until a listing completes).
   */
  restart(): void {
    this.#ajv = newValidator()
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

/** `\\uXXXX` and `\\u{X…}` (JavaScript's escapes, common in JSON Schema patterns) as RE2's `\\x{…}`. */
function re2Syntax(pattern: string): string {
  return pattern.replace(
    /(?<!\\)((?:\\\\)*)\\u(?:\{([0-9a-fA-F]{1,6})\}|([0-9a-fA-F]{4}))/g,
    (_match, slashes: string, braced: string | undefined, four: string | undefined) =>
      `${slashes}\\x{${braced ?? four}}`,
  )
}

/** Ajv's engine for `pattern` and `patternProperties`: RE2, which finds a match in linear time. */
const re2Engine: NonNullable<NonNullable<AjvOptions['code']>['regExp']> = Object.assign(
  (pattern: string) => {
    const compiled = RE2JS.compile(re2Syntax(pattern))
    return { test: (text: string) => compiled.matcher(text).find(), toString: () => pattern }
  },
  { code: 're2js' },
)

/** ajv-formats is CommonJS: its default export is the plugin itself at run time. */
const addFormats = ajvFormats as unknown as typeof ajvFormats.default

/** The SDK's validator on an Ajv as the SDK makes its own, but for the pattern engine. */
function newValidator(): AjvJsonSchemaValidator {
  const ajv = new Ajv({
    strict: false,
    validateFormats: true,
    validateSchema: false,
    allErrors: true,
    code: { regExp: re2Engine },
  })
  addFormats(ajv)
  return new AjvJsonSchemaValidator(ajv)
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
