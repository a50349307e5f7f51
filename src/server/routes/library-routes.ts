/** Library management and schema loading: `/v1/libraries…`. */
import { Hono } from 'hono'
import type { ToolselService } from '../../service/toolsel-service.ts'
import type { TimeoutEnv } from '../middleware/request-timeout.ts'
import type { RequestSchemas } from '../schemas.ts'
import { jsonBody, pathParams, queryParams, requireJson } from '../validate.ts'

export function libraryRoutes(service: ToolselService, schemas: RequestSchemas) {
  return new Hono<TimeoutEnv>()
    .get('/', (c) => c.json({ libraries: service.listLibraries() }))
    .get('/:library', pathParams(schemas.libraryParam), (c) => {
      const { library } = c.req.valid('param')
      service.library(library)
      return c.json(service.listLibraries().find((entry) => entry.name === library)!)
    })
    .put(
      '/:library',
      pathParams(schemas.libraryParam),
      queryParams(schemas.putLibraryQuery),
      async (c) => {
        const { library } = c.req.valid('param')
        const { format, namespace, retriever, examples } = c.req.valid('query')
        const text = await c.req.text()
        const result = await service.putLibrary(library, text, {
          format,
          namespace,
          retriever,
          examples,
          signal: c.get('signal'),
        })
        return c.json({ ...result.summary, warnings: result.warnings }, result.created ? 201 : 200)
      },
    )
    .delete('/:library', pathParams(schemas.libraryParam), async (c) => {
      await service.deleteLibrary(c.req.valid('param').library)
      return c.body(null, 204)
    })
    .post(
      '/:library/examples',
      pathParams(schemas.libraryParam),
      requireJson,
      jsonBody(schemas.addExamples),
      async (c) => {
        const { library } = c.req.valid('param')
        const result = await service.addExamples(library, c.req.valid('json').examples, {
          signal: c.get('signal'),
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
        const tools = service.getTools(c.req.valid('param').library, c.req.valid('json').ids)
        return c.json({ tools })
      },
    )
    .get('/:library/tools/:id{.+}', (c) => {
      const [tool] = service.getTools(c.req.param('library'), [c.req.param('id')])
      return c.json({ tool })
    })
}
