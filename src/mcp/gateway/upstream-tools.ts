/**
 * Listing an upstream's tools (every page) and turning them into library tools: through the MCP
 * importer (so ids are `server.name`, exactly as for MCP files), one tool at a time so that one
 * malformed tool is skipped with a warning instead of hiding the whole server.
 * @module
 */
import type { Client } from '@modelcontextprotocol/sdk/client/index.js'
import type { ValidateFunction } from 'ajv'
import {
  ErrorCode,
  ListToolsResultSchema,
  McpError,
  ToolAnnotationsSchema,
  ToolSchema,
  type Tool as McpTool,
} from '@modelcontextprotocol/sdk/types.js'
import { z } from 'zod'
import { isToolselError } from '../../errors.ts'
import { importToolsFromText } from '../../library/importers/index.ts'
import {
  escapedName,
  MAX_TOOL_NAME_LENGTH,
  refusedNameCharacter,
  shownName,
} from '../../library/name-characters.ts'
import { MAX_PARAMETER_DEPTH, type Tool } from '../../library/tool.ts'
import { classifyUpstreamError } from './classify-upstream-error.ts'
import { OutputChecks, OutputSchemaCompiler } from './upstream-output-schemas.ts'

/** Most `tools/list` pages followed; guards against a server whose cursor never ends. */
export const MAX_PAGES = 1000

/**
 * Longest description taken from an upstream tool, in characters: a longer one is cut as its
 * page arrives ("…" at the end) and named in a warning. A hostile server's 1 MiB descriptions
 * were kept whole: 100 tools held 100 MB, indexed and served, and maxToolsPerServer (50,000)
 * of them would not fit in memory.
 */
export const MAX_UPSTREAM_DESCRIPTION_CHARS = 16_384

/** The tools listAllTools cut the description of, and how long it was (for upstreamTools). */
const cutDescriptions = new WeakMap<McpTool, number>()

/** `tool` with its description cut at MAX_UPSTREAM_DESCRIPTION_CHARS, or `tool` itself. */
function descriptionCut(tool: McpTool): McpTool {
  const description: unknown = tool?.description
  if (typeof description !== 'string' || description.length <= MAX_UPSTREAM_DESCRIPTION_CHARS)
    return tool
  const cut = { ...tool, description: `${description.slice(0, MAX_UPSTREAM_DESCRIPTION_CHARS)}…` }
  cutDescriptions.set(cut, description.length)
  return cut
}

/**
 * Longest inputSchema (and outputSchema, annotations, title: KEPT_LARGE_FIELDS) taken from an
 * upstream tool, in characters of its JSON: a tool with a longer one is dropped as its page
 * arrives and named in a warning (a schema cannot be cut and still mean what it said). With descriptions cut, a hostile server put its megabytes in the
 * schemas instead: 1,000 pages of maxMessageBytes (8 MiB) each were all held for one listing.
 */
export const MAX_UPSTREAM_SCHEMA_CHARS = 65_536

/**
 * The tools listAllTools refused as their page arrived (an inputSchema or another kept field over
 * MAX_UPSTREAM_SCHEMA_CHARS, or nested past the stack), and why: upstreamTools skips them with
 * that reason. What stands for them in the listing holds their name (cut) and nothing else.
 */
const refusedTools = new WeakMap<McpTool, string>()

/** A stand-in for `tool`, refused for `reason` (its name cut at MAX_TOOL_NAME_LENGTH + 1). */
function refused(tool: unknown, reason: string): McpTool {
  const name: unknown = (tool as { name?: unknown } | null | undefined)?.name
  const stub = {
    name: typeof name === 'string' ? name.slice(0, MAX_TOOL_NAME_LENGTH + 1) : '',
    inputSchema: { type: 'object' as const },
  }
  refusedTools.set(stub, reason)
  return stub
}

/**
 * A page as listAllTools reads it: the SDK's ListToolsResultSchema with each tool left as it came.
 * The SDK's own parse failed the whole page, and so the whole listing, for one tool that is not
 * an MCP tool (no inputSchema, a name that is no string): each is parsed by itself in `kept`.
 */
const LISTED_PAGE = ListToolsResultSchema.extend({ tools: z.array(z.unknown()) })

/**
 * A listed tool as the gateway reads it: the SDK's ToolSchema, but with `annotations` kept
 * whole. ToolSchema's annotations hold only the five hints it knows (title, readOnlyHint,
 * destructiveHint, idempotentHint, openWorldHint): any other key (a vendor's, a later spec's)
 * was dropped, while an MCP tools file's import keeps them all in the tool's `source`. The
 * hints it knows are still checked (a readOnlyHint that is no boolean refuses the tool).
 */
const LISTED_TOOL = ToolSchema.extend({
  annotations: ToolAnnotationsSchema.catchall(z.unknown()).optional(),
})

/** Longest problem ToolSchema states quoted in a warning (its messages are short). */
const MAX_ISSUE_CHARS = 120

/**
 * Why ToolSchema refused a listed tool: the first problem's field (escaped and cut as a name: a
 * path can hold the server's property names) and what is wrong with it.
 */
function notATool(error: z.ZodError): string {
  const issue = error.issues[0]
  const path = issue.path.map(String).join('.')
  const where = path === '' ? 'it is not an MCP tool' : `its ${escapedName(path)} is not valid`
  return `${where}: ${issue.message.slice(0, MAX_ISSUE_CHARS)}`
}

/**
 * `raw` (one tool of a listed page) as the listing keeps it: parsed as an MCP tool (LISTED_TOOL:
 * fields it does not know are dropped, as the SDK's parse did, but annotations are kept whole,
 * unless they are nested past the stack: then as ToolSchema reads them), its description cut, or a
 * stand-in when it is refused (not an MCP tool; a kept field over MAX_UPSTREAM_SCHEMA_CHARS or
 * nested past the stack; an outputSchema that does not compile); and how many characters that
 * counts against `gateway.maxListChars`: the length of its JSON; and its outputSchema compiled.
 */
function kept(
  raw: unknown,
  schemas: OutputSchemaCompiler,
  schema: typeof ToolSchema = LISTED_TOOL,
): { tool: McpTool; chars: number; validator?: ValidateFunction } {
  const parsed = schema.safeParse(raw)
  if (!parsed.success) {
    const stub = refused(raw, notATool(parsed.error))
    return { tool: stub, chars: JSON.stringify(stub).length }
  }
  const tool = parsed.data
  const cut = descriptionCut(tool)
  let chars: number
  try {
    chars = JSON.stringify(cut)?.length ?? 0
    // Only a tool this long can have a field that long: most are never measured again.
    if (chars > MAX_UPSTREAM_SCHEMA_CHARS) {
      for (const field of KEPT_LARGE_FIELDS) {
        const length = JSON.stringify((cut as Record<string, unknown>)[field])?.length ?? 0
        if (length > MAX_UPSTREAM_SCHEMA_CHARS) {
          const stub = refused(
            tool,
            `its ${field} is ${length.toLocaleString('en-US')} characters long, over ${MAX_UPSTREAM_SCHEMA_CHARS.toLocaleString('en-US')}`,
          )
          return { tool: stub, chars: JSON.stringify(stub).length }
        }
      }
    }
  } catch (error) {
    if (!(error instanceof RangeError)) throw error
    // An annotation MCP does not define, nested past the stack: the tool as the SDK's parse
    // keeps it (its five hints only), as before annotations were kept whole.
    if (schema === LISTED_TOOL) return kept(raw, schemas, ToolSchema)
    const stub = refused(tool, nestedTooDeep(tool))
    return { tool: stub, chars: JSON.stringify(stub).length }
  }
  // Compiled now, by itself (the SDK compiled a page's schemas together, and one failing failed
  // the listing); the listing's OutputChecks take the validator once the listing is complete.
  if (!cut.outputSchema) return { tool: cut, chars }
  const validator = schemas.compile(cut.outputSchema)
  if (typeof validator === 'string') {
    const stub = refused(tool, `its outputSchema ${validator}`)
    return { tool: stub, chars: JSON.stringify(stub).length }
  }
  return { tool: cut, chars, validator }
}

/**
 * The fields of an upstream tool the gateway keeps besides its name and (cut) description: the
 * MCP importer keeps `inputSchema` as the parameters and `outputSchema`, `annotations` and
 * `title` in the tool's source. Each is held to MAX_UPSTREAM_SCHEMA_CHARS: with only the
 * inputSchema capped, a hostile server moved its bulk to the outputSchema, and kept up to
 * gateway.maxListChars (64 Mi characters) in the served library.
 */
const KEPT_LARGE_FIELDS = ['inputSchema', 'outputSchema', 'annotations', 'title'] as const

/**
 * Why `tool`, whose JSON.stringify overflowed the stack, is skipped: naming its field that does
 * (its inputSchema, outputSchema or _meta: the fields ToolSchema keeps whatever they hold).
 */
function nestedTooDeep(tool: unknown): string {
  for (const [field, value] of Object.entries(tool as object)) {
    try {
      JSON.stringify(value)
    } catch (error) {
      if (!(error instanceof RangeError)) throw error
      const taken =
        field === 'inputSchema' ? ` (at most ${MAX_PARAMETER_DEPTH} levels are taken)` : ''
      return `its ${escapedName(field)} is nested too deep to read${taken}`
    }
  }
  return 'it is nested too deep to read'
}

/** `pages` and `tools` as a failed listing's error says them: "1 page (0 tools) read". */
function readSoFar(pages: number, tools: number): string {
  const count = (n: number, what: string) =>
    `${n.toLocaleString('en-US')} ${what}${n === 1 ? '' : 's'}`
  return `${count(pages, 'page')} (${count(tools, 'tool')}) read`
}

/** Work on a page's tools between two yields to the event loop, in ms. */
const SLICE_MS = 10

/** What bounds one listing of a server's tools (`gateway` settings). */
export interface ListBounds {
  /** Each page (`gateway.listTimeoutMs`, default `connectTimeoutMs`). */
  pageTimeoutMs: number
  /** The whole listing, every page (`gateway.listDeadlineMs`). */
  deadlineMs: number
  /** Most tools (`gateway.maxToolsPerServer`). */
  maxTools: number
  /** Most characters of tools kept, every page together (`gateway.maxListChars`). */
  maxChars: number
  /** Most time compiling output schemas, every page together (`gateway.listCompileBudgetMs`). */
  compileBudgetMs: number
}

/** A complete listing: its tools as listed (kept or stand-ins), and how to check their calls. */
export interface Listing {
  tools: McpTool[]
  checks: OutputChecks
}

/**
 * Every page of `tools/list`, following `nextCursor`, all or nothing: a listing that fails
 * returns no tools (the caller keeps the server's earlier ones). Each page gets
 * `pageTimeoutMs`, and no more than what is left of `deadlineMs`: a server answering every page
 * just under the page limit, or never ending its cursor, is stopped there (a timeout, the
 * outstanding page cancelled) instead of holding start-up or a re-list for up to
 * `MAX_PAGES` pages. Timeouts are `McpError` RequestTimeout naming the setting that ran out;
 * more than `maxTools` tools, more than `maxChars` characters of them (each tool's JSON, as
 * kept: its description cut, a tool refused for its schema as a stand-in), or a cursor still
 * going after `MAX_PAGES` pages, a plain Error (the connection marks the server down). A tool
 * that is not an MCP tool, or whose outputSchema does not compile, is only skipped (upstreamTools
 * names it). Compiling the output schemas may take `compileBudgetMs` in all, a plain Error past
 * it. A page's tools are checked (their output schemas compiled) in slices of the event
 * loop, the deadline checked between them. A complete listing comes with its OutputChecks
 * (each kept tool's compiled outputSchema), which UpstreamConnection.callTool checks results with.
 */
export async function listAllTools(client: Client, bounds: ListBounds): Promise<Listing> {
  const { pageTimeoutMs, deadlineMs, maxTools, maxChars, compileBudgetMs } = bounds
  const schemas = new OutputSchemaCompiler()
  const checks = new OutputChecks()
  const started = performance.now()
  const listed: McpTool[] = []
  let chars = 0
  let cursor: string | undefined
  for (let page = 0; page < MAX_PAGES; page += 1) {
    const left = deadlineMs - (performance.now() - started)
    const timeout = Math.min(pageTimeoutMs, Math.max(0, Math.floor(left)))
    const pastDeadline = () =>
      new McpError(
        ErrorCode.RequestTimeout,
        `tools/list did not finish within ${deadlineMs} ms (gateway.listDeadlineMs): ${readSoFar(page, listed.length)}; none of them were taken`,
      )
    if (timeout <= 0) throw pastDeadline()
    let result: z.infer<typeof LISTED_PAGE>
    try {
      // Not client.listTools: its parse and its compile of the output schemas fail the whole
      // listing for one tool; each is checked by itself in `kept`.
      const params = cursor === undefined ? undefined : { cursor }
      result = await client.request({ method: 'tools/list', params }, LISTED_PAGE, { timeout })
    } catch (error) {
      if (classifyUpstreamError(error) !== 'timeout') throw error
      if (timeout < pageTimeoutMs) throw pastDeadline()
      // Still a timeout (the server is slow, not gone), now naming the setting to raise.
      throw new McpError(
        ErrorCode.RequestTimeout,
        `a tools/list page did not answer within ${pageTimeoutMs} ms (gateway.listTimeoutMs)`,
      )
    }
    let sliceStart = performance.now()
    if (listed.length + result.tools.length > maxTools) {
      throw new Error(
        `tools/list listed more than ${maxTools.toLocaleString('en-US')} tools (gateway.maxToolsPerServer); none of them were taken`,
      )
    }
    // Not push(...page): a page of ~150,000 tools or more (under maxMessageBytes with short
    // tools and a raised maxToolsPerServer) overflowed the call stack as arguments.
    // Long descriptions are cut here, page by page: the listing never holds them whole, nor a
    // schema over MAX_UPSTREAM_SCHEMA_CHARS, nor more than maxChars across its pages (1,000
    // pages of maxMessageBytes each were all held: ~1 GB for one listing).
    for (const tool of result.tools) {
      // Compiling an outputSchema is slow (~25-50 µs a character on a loaded host): a page of
      // 8 MiB of them held the event loop, every request of the server, for minutes. Between
      // tools, a yield once SLICE_MS have passed, and the deadline then, as between pages.
      if (performance.now() - sliceStart >= SLICE_MS) {
        await new Promise((resolve) => setImmediate(resolve))
        if (performance.now() - started >= deadlineMs) throw pastDeadline()
        sliceStart = performance.now()
      }
      const keep = kept(tool, schemas)
      // Checked after each compile (one is not split): a hostile server's schemas slow to
      // compile held a core for the whole listDeadlineMs of every listing.
      if (schemas.compiledMs > compileBudgetMs) {
        throw new Error(
          `tools/list's output schemas took more than ${compileBudgetMs.toLocaleString('en-US')} ms to compile (gateway.listCompileBudgetMs): ${readSoFar(page + 1, listed.length)}; none of them were taken`,
        )
      }
      chars += keep.chars
      if (chars > maxChars) {
        throw new Error(
          `tools/list sent more than ${maxChars.toLocaleString('en-US')} characters of tools (gateway.maxListChars): ${readSoFar(page + 1, listed.length)}; none of them were taken`,
        )
      }
      listed.push(keep.tool)
      // A stand-in is not served: a later tool of its name is (upstreamTools), with its checks.
      if (!refusedTools.has(keep.tool)) checks.add(keep.tool, keep.validator)
    }
    cursor = result.nextCursor
    if (!cursor) return { tools: listed, checks }
  }
  throw new Error(
    `tools/list still gave a next cursor after ${MAX_PAGES.toLocaleString('en-US')} pages; none of them were taken`,
  )
}

/**
 * Why an upstream tool's name is not taken, or undefined when it is fine. A name is at most
 * MAX_TOOL_NAME_LENGTH characters: a hostile server's 10 KB names went into every answer naming them.
 */
function nameProblem(name: unknown): string | undefined {
  if (typeof name !== 'string') return undefined // the importer names what is missing
  if (name.length > MAX_TOOL_NAME_LENGTH)
    return `its name is ${name.length.toLocaleString('en-US')} characters long, over ${MAX_TOOL_NAME_LENGTH}`
  // Control, format (bidi overrides and isolates, zero-width) characters and lone surrogates:
  // stricter than an import, which takes the other format characters.
  const bad = refusedNameCharacter(name, { anyFormat: true })
  if (bad) {
    return `its name holds ${bad.codePoint} (a control or invisible formatting character) at ${bad.index}`
  }
  return undefined
}

export interface UpstreamTools {
  tools: Tool[]
  /** One line per skipped tool, naming it and why. */
  warnings: string[]
}

export function upstreamTools(
  server: string,
  listed: readonly McpTool[],
  tags: readonly string[],
): UpstreamTools {
  const tools: Tool[] = []
  const warnings: string[] = []
  const seen = new Set<string>()
  for (const [position, item] of listed.entries()) {
    try {
      const problem = refusedTools.get(item) ?? nameProblem(item?.name)
      if (problem) throw new Error(problem)
      const [tool] = importToolsFromText(JSON.stringify({ tools: [item] }), {
        format: 'mcp',
        namespace: server,
      }).tools
      if (seen.has(tool.id)) throw new Error(`a second tool named "${tool.name}"`)
      seen.add(tool.id)
      const long = cutDescriptions.get(item)
      if (long !== undefined) {
        warnings.push(
          `Upstream "${server}": tool #${position} (${shownName(item.name)}): its description is ${long.toLocaleString('en-US')} characters long: cut at ${MAX_UPSTREAM_DESCRIPTION_CHARS.toLocaleString('en-US')}`,
        )
      }
      if (tags.length > 0) tool.tags = [...tags]
      tool.source = { ...tool.source, format: 'mcp', server, record: position }
      tools.push(tool)
    } catch (error) {
      // JSON.stringify of a schema nested past the stack: say that, not "Maximum call stack".
      const reason =
        error instanceof RangeError
          ? nestedTooDeep(item)
          : isToolselError(error) || error instanceof Error
            ? error.message
            : String(error)
      warnings.push(
        `Upstream "${server}": skipped tool #${position} (${shownName(item?.name)}): ${reason}`,
      )
    }
  }
  return { tools, warnings }
}
