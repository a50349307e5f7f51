/** Library management and schema loading: `/v1/libraries…`. */
import { Hono } from 'hono'
import type { LibrarySummary, ToolselService } from '../../service/toolsel-service.ts'
import type { AppEnv } from '../app-env.ts'
import { throwIfAborted, ToolselError } from '../../errors.ts'
import type { Tool } from '../../library/tool.ts'
import { groupWarnings } from '../../library/importers/group-warnings.ts'
import { providerTool, providerToolIds, providerToolsAnswer } from '../../library/provider-tools.ts'
import { MAX_EXAMPLE_TOOLS } from '../../examples/usage-example.ts'
import { inScope, narrowScope, type ToolScope } from '../../mcp/tool-scope.ts'
import { canUseLibrary, type Principal } from '../auth/api-keys.ts'
import { assertLibraryAccess, libraryFor, principalOf } from '../middleware/auth.ts'
import { MAX_EXAMPLES_PER_REQUEST, type RequestSchemas } from '../schemas.ts'
import { jsonBody, pathParams, queryParams, requireJson } from '../validate.ts'
import { examplesBody } from '../examples-body.ts'
import { bodyBytes } from '../body-bytes.ts'
import { readyImportWorker } from '../../store/upload-import.ts'
import { shownNames } from '../../library/name-characters.ts'
import { assertToolIdLengths } from '../../library/tool-id-limit.ts'

/**
 * The tools a caller may load from `library`: its key's servers and tags, and for the gateway
 * library also the configured MCP scope (`mcp.servers`, `mcp.tags`), as over MCP.
 */
function scopeFor(service: ToolselService, principal: Principal, library: string): ToolScope {
  const { config } = service
  const base: ToolScope =
    library === config.gateway.library
      ? { servers: config.mcp.servers, tags: config.mcp.tags }
      : { servers: [], tags: [] }
  return narrowScope(base, principal)
}

/** Tools by id as `getTools` returns them; ids outside the caller's scope are unknown to it. */
function toolsInScope(
  service: ToolselService,
  principal: Principal,
  library: string | undefined,
  ids: string[],
): Tool[] {
  const name = libraryFor(principal, library, service.defaultLibraryName)
  assertLibraryAccess(principal, name, service.libraries)
  // GET …/tools/:id takes the id from the path, unbounded by any schema.
  assertToolIdLengths(ids)
  const scope = scopeFor(service, principal, name)
  const known = service.library(name).library
  // Before any tool is read (the scope check reads them).
  known.assertAnswerBytes(ids)
  const hidden = ids.filter((id) => known.has(id) && !inScope(known.require(id), scope))
  if (hidden.length > 0) {
    throw new ToolselError(
      'UNKNOWN_TOOL',
      `Library "${name}" has no tool ${shownNames(hidden)} within this key's scope.`,
      { details: { library: name, ids: hidden } },
    )
  }
  // A hint about what an unknown id meant names only tools within the key's scope.
  return service.getTools(name, ids, (id) => inScope(known.require(id), scope))
}

/**
 * A library as `principal` sees it: `isDefault` marks the library its calls that name none use
 * (for a key limited to libraries without the server's default, its first library).
 */
function asSeenBy(
  service: ToolselService,
  principal: Principal,
  entry: LibrarySummary,
): LibrarySummary {
  return {
    ...entry,
    isDefault: entry.name === libraryFor(principal, undefined, service.defaultLibraryName),
  }
}

/** Library names that only the MCP gateway writes. */
function assertWritable(service: ToolselService, name: string): void {
  if (name === service.config.gateway.library) {
    throw new ToolselError(
      'FORBIDDEN',
      `Library "${name}" belongs to the MCP gateway (gateway.library) and is rebuilt from the upstream servers; it can't be written through /v1. Upload under another name.`,
    )
  }
}

/**
 * A path id that is not valid percent-encoding (`%ZZ`, a lone `%`) is kept as it is by the router,
 * so a client sending a literal "%" unencoded still gets its tool; when no tool has that id either,
 * the answer is this 400 naming the encoding, not a 404 about a tool id the client did not mean.
 */
function badEncoding(error: unknown, url: string): ToolselError | undefined {
  if (!(error instanceof ToolselError) || error.code !== 'UNKNOWN_TOOL') return undefined
  // ['', 'v1', 'libraries', <library>, 'tools', ...the id's segments]
  const raw = new URL(url).pathname.split('/').slice(5).join('/')
  try {
    decodeURIComponent(raw)
    return undefined
  } catch {
    return new ToolselError(
      'INVALID_INPUT',
      `Tool id "${raw}" in the path is not valid percent-encoding; URL-encode ids (encodeURIComponent: "%" is "%25").`,
      { details: { id: raw } },
    )
  }
}

/**
 * `curl -F file=@tools.json` sends a multipart form: its boundary line would be read as the tool
 * file ("invalid JSON at line 1, column 1: unexpected \"-\""). Say what to send instead.
 */
function assertNotMultipart(contentType: string | undefined): void {
  if (contentType === undefined || !/^\s*multipart\//i.test(contentType)) return
  throw new ToolselError(
    'INVALID_INPUT',
    'Send the tool file itself as the request body (curl --data-binary @tools.json), not as a multipart form (curl -F, FormData).',
  )
}

/**
 * `curl -d @tools.jsonl` (`--data`) sends a file as a form, `application/x-www-form-urlencoded`,
 * with its line breaks removed: JSON Lines become one line ("unexpected \"{\" after the end of
 * the JSON value"), YAML and CSV another text. Whether `body` came so (checked before the import,
 * which may transfer the bytes to its worker).
 */
function isOneLineForm(contentType: string | undefined, body: Uint8Array): boolean {
  return (
    contentType !== undefined &&
    /^\s*application\/x-www-form-urlencoded\s*(;|$)/i.test(contentType) &&
    !body.includes(0x0a)
  )
}

/** An import of a body `isOneLineForm` that failed: its error, saying why and what to send. */
function withFormBodyHint(error: unknown): unknown {
  if (!(error instanceof ToolselError) || error.code !== 'IMPORT_FAILED') return error
  // A parse error has no final period ('… after the end of the JSON value'): one before the hint.
  const ended = /[.!?]$/.test(error.message) ? '' : '.'
  return new ToolselError(
    'IMPORT_FAILED',
    `${error.message}${ended} The body came as a form (content-type: application/x-www-form-urlencoded) without a line break, as curl -d @<file> sends a file: -d removes its line breaks. Send the file as it is: curl --data-binary @<file>.`,
    { details: error.details, cause: error },
  )
}

export function libraryRoutes(service: ToolselService, schemas: RequestSchemas) {
  return new Hono<AppEnv>()
    .get('/', (c) => {
      const principal = principalOf(c)
      const libraries = service
        .listLibraries()
        .filter((entry) => canUseLibrary(principal, entry.name))
        .map((entry) => asSeenBy(service, principal, entry))
      return c.json({ libraries })
    })
    .get('/:library', pathParams(schemas.libraryParam), (c) => {
      const { library } = c.req.valid('param')
      const principal = principalOf(c)
      assertLibraryAccess(principal, library, service.libraries)
      service.library(library)
      const entry = service.listLibraries().find((listed) => listed.name === library)!
      return c.json(asSeenBy(service, principal, entry))
    })
    .put(
      '/:library',
      pathParams(schemas.libraryParam),
      queryParams(schemas.putLibraryQuery),
      async (c) => {
        const { library } = c.req.valid('param')
        assertWritable(service, library)
        const { format, namespace, retriever, onDuplicate, providerNames, examples, rebuild } =
          c.req.valid('query')
        assertNotMultipart(c.req.header('content-type'))
        // The body's bytes: a large one is decoded and parsed in the import worker, not here,
        // which starts while they come (its start followed the read).
        readyImportWorker(service.config.server, Number(c.req.header('content-length')))
        const body = await bodyBytes(c)
        const oneLineForm = isOneLineForm(c.req.header('content-type'), body)
        const result = await service
          .putLibrary(library, body, {
            format,
            namespace,
            retriever,
            onDuplicate,
            providerNames,
            examples,
            rebuild: rebuild === 'true',
            signal: c.get('abort').signal,
            requestId: c.get('requestId'),
            beforeCommit: () => {
              if (!c.get('commit')()) throwIfAborted(c.get('abort'))
            },
          })
          .catch((error: unknown) => {
            throw oneLineForm ? withFormBodyHint(error) : error
          })
        // Thousands of warnings of one kind (a large OpenAPI spec): the first of each, counted.
        const { warnings, counts } = groupWarnings(result.warnings)
        return c.json(
          {
            ...result.summary,
            unchanged: result.unchanged,
            warnings,
            ...(counts && { warningCounts: counts }),
            import: result.import,
          },
          result.created ? 201 : 200,
        )
      },
    )
    .delete('/:library', pathParams(schemas.libraryParam), async (c) => {
      assertWritable(service, c.req.valid('param').library)
      await service.deleteLibrary(c.req.valid('param').library, {
        requestId: c.get('requestId'),
      })
      return c.body(null, 204)
    })
    .post(
      '/:library/examples',
      pathParams(schemas.libraryParam),
      // Who may write the library is known before its body is read and parsed.
      async (c, next) => {
        const { library } = c.req.valid('param')
        assertLibraryAccess(principalOf(c), library, service.libraries)
        assertWritable(service, library)
        await next()
      },
      // 10,000 examples of up to 64 tools each: up to ~700,000 values.
      examplesBody(
        schemas.addExamples,
        MAX_EXAMPLES_PER_REQUEST * (MAX_EXAMPLE_TOOLS + 6),
        service.config.library.maxExamples,
        service.config.server.importWorkers,
        service.config.server.bodyLimitBytes,
        service.config.server.requestReceiveTimeoutMs,
      ),
      async (c) => {
        const { library } = c.req.valid('param')
        const result = await service.addExamples(library, c.req.valid('json').examples, {
          signal: c.get('abort').signal,
          requestId: c.get('requestId'),
          beforeCommit: () => {
            if (!c.get('commit')()) throwIfAborted(c.get('abort'))
          },
        })
        return c.json(result)
      },
    )
    .post(
      '/:library/tools/batch',
      pathParams(schemas.libraryParam),
      requireJson,
      jsonBody(schemas.batchTools),
      (c) => {
        const { ids, toolFormat } = c.req.valid('json')
        const tools = toolsInScope(service, principalOf(c), c.req.valid('param').library, ids)
        if (toolFormat === undefined || toolFormat === 'toolsel') return c.json({ tools })
        return c.json(providerToolsAnswer(tools, toolFormat))
      },
    )
    .get('/:library/tools/:id{.+}', queryParams(schemas.toolQuery), (c) => {
      const id = c.req.param('id')
      const { toolFormat } = c.req.valid('query')
      let tool: Tool
      try {
        tool = toolsInScope(service, principalOf(c), c.req.param('library'), [id])[0]
      } catch (error) {
        throw badEncoding(error, c.req.url) ?? error
      }
      if (toolFormat === undefined || toolFormat === 'toolsel') return c.json({ tool })
      return c.json({ tool: providerTool(tool, toolFormat), toolIds: providerToolIds([tool]) })
    })
}
