/** `POST /v1/select-tools`, `POST /v1/search-tools` and `POST /v1/feedback`. */
import { Hono } from 'hono'
import { throwIfAborted, ToolselError } from '../../errors.ts'
import type { ToolselService } from '../../service/toolsel-service.ts'
import type { AppEnv } from '../app-env.ts'
import { assertLibraryAccess, assertUnscoped, libraryFor, principalOf } from '../middleware/auth.ts'
import { selectToolsFastPath, type RequestSchemas } from '../schemas.ts'
import { selectResponseJson } from '../select-response.ts'
import { jsonBody, requireJson } from '../validate.ts'
import type { ToolFormat } from '../../library/provider-tools.ts'

/** A provider's tool shape holds the parameters' schema: `includeSchemas: false` can't give one. */
function assertSchemasFor(toolFormat: ToolFormat, includeSchemas: boolean | undefined): void {
  if (toolFormat === 'toolsel' || includeSchemas !== false) return
  throw new ToolselError(
    'INVALID_INPUT',
    `toolFormat "${toolFormat}" returns each tool with its parameters' schema: leave includeSchemas out (or true), or ask for toolFormat "toolsel".`,
    { details: { toolFormat } },
  )
}

export function selectRoutes(service: ToolselService, schemas: RequestSchemas) {
  const selectBody = jsonBody(schemas.selectTools, selectToolsFastPath(service.config))
  return new Hono<AppEnv>()
    .post('/select-tools', requireJson, selectBody, async (c) => {
      const { includeSchemas, toolFormat = 'toolsel', ...request } = c.req.valid('json')
      assertSchemasFor(toolFormat, includeSchemas)
      const principal = principalOf(c)
      assertUnscoped(principal, 'select-tools')
      const library = libraryFor(principal, request.library, service.defaultLibraryName)
      c.set('library', library)
      assertLibraryAccess(principal, library, service.libraries)
      const result = await service.select({ ...request, library }, c.get('abort'))
      // The same bytes as c.json({ ...result, tools: [{ id, name, description, [parameters,]
      // namespace }] }) (or the tools in `toolFormat`'s shape, then toolIds), with what repeats
      // from request to request serialised once.
      return c.body(selectResponseJson(result, includeSchemas === true, toolFormat), 200, {
        'Content-Type': 'application/json',
      })
    })
    .post('/feedback', requireJson, jsonBody(schemas.feedback), async (c) => {
      const { instruction, library, used } = c.req.valid('json')
      const principal = principalOf(c)
      const name = libraryFor(principal, library, service.defaultLibraryName)
      c.set('library', name)
      assertLibraryAccess(principal, name, service.libraries)
      const result = await service.addExamples(name, [{ instruction, tools: used }], {
        signal: c.get('abort').signal,
        requestId: c.get('requestId'),
        subject: "The feedback's `used` names",
        beforeCommit: () => {
          if (!c.get('commit')()) throwIfAborted(c.get('abort'))
        },
      })
      return c.json(result)
    })
    .post('/search-tools', requireJson, jsonBody(schemas.searchTools), async (c) => {
      const request = c.req.valid('json')
      const principal = principalOf(c)
      assertUnscoped(principal, 'search-tools')
      const library = libraryFor(principal, request.library, service.defaultLibraryName)
      c.set('library', library)
      assertLibraryAccess(principal, library, service.libraries)
      return c.json(await service.search({ ...request, library }, c.get('abort')))
    })
}
