import { readFile } from 'node:fs/promises'
import SwaggerParser from '@apidevtools/swagger-parser'
import { describe, expect, it } from 'vitest'
import { createTestApp, readJson } from './test-service.ts'
import { LIBRARY_NAME_PATTERN } from '../../src/library/tool-library.ts'

/**
 * Routes /openapi.json leaves out on purpose: the document itself, the playground's HTML pages
 * (`GET /` redirects to `/ui`) and MCP's JSON-RPC endpoint (docs/mcp.md documents it).
 */
const UNDOCUMENTED = [
  'GET /',
  'GET /openapi.json',
  'GET /ui',
  'GET /ui/report',
  'GET /mcp',
  'POST /mcp',
  'DELETE /mcp',
]

describe('/openapi.json against the routes the app really has', () => {
  it('documents every route, and every documented route exists', async () => {
    const { app } = await createTestApp()
    const document = await readJson(await app.request('/openapi.json'))
    const documented = Object.entries(document.paths as Record<string, object>).flatMap(
      ([path, item]) =>
        Object.keys(item)
          .filter((method) => method !== 'parameters')
          .map((method) => `${method.toUpperCase()} ${path}`),
    )
    // Hono's paths in OpenAPI's spelling: `:library` → `{library}`, `:id{.+}` → `{id}`;
    // `ALL` routes are middleware (`/*`, `/v1/*`), not endpoints.
    const real = app.routes
      .filter((route) => route.method !== 'ALL')
      .map((route) => `${route.method} ${route.path.replace(/:(\w+)(\{[^}]*\})?/g, '{$1}')}`)
    expect(new Set(real).size).toBeGreaterThan(15)
    expect([...new Set(documented)].sort()).toEqual(
      [...new Set(real)].filter((route) => !UNDOCUMENTED.includes(route)).sort(),
    )
    for (const route of UNDOCUMENTED) expect(real, route).toContain(route)
    // Each documented path parameter is declared.
    for (const [path, item] of Object.entries(document.paths as Record<string, any>)) {
      const names = [...path.matchAll(/\{(\w+)\}/g)].map((match) => match[1])
      for (const operation of Object.values(item) as any[]) {
        const declared = [...(item.parameters ?? []), ...(operation.parameters ?? [])]
          .filter((parameter: any) => parameter.in === 'path')
          .map((parameter: any) => parameter.name)
        expect(declared.sort(), path).toEqual([...names].sort())
      }
    }
  })

  it("README's HTTP API table lists every route, and the upload's query parameters", async () => {
    const { app } = await createTestApp()
    const document = await readJson(await app.request('/openapi.json'))
    const readme = await readFile(new URL('../../README.md', import.meta.url), 'utf8')
    const section = readme.slice(readme.indexOf('\n## HTTP API'), readme.indexOf('\n### '))
    const cells = section
      .split('\n')
      .filter((line) => line.startsWith('| `'))
      .map((line) => line.split('|')[1])
    const listed = cells.flatMap((cell) =>
      [...cell.matchAll(/`(GET|POST|PUT|DELETE) (\/[^`[]*)/g)].map(
        ([, method, path]) => `${method} ${path.replace(/:(\w+)/g, '{$1}')}`,
      ),
    )
    const real = app.routes
      .filter((route) => route.method !== 'ALL')
      .map((route) => `${route.method} ${route.path.replace(/:(\w+)(\{[^}]*\})?/g, '{$1}')}`)
    // Named in the text, not as rows: `/` redirects to /ui (the row's note), GET and DELETE /mcp
    // answer 405 (the paragraph above the table).
    const inText = ['GET /', 'GET /mcp', 'DELETE /mcp']
    expect([...new Set(listed)].sort()).toEqual(
      [...new Set(real)].filter((route) => !inText.includes(route)).sort(),
    )
    const upload = cells.find((cell) => cell.includes('`PUT /v1/libraries/:library['))
    const queryNames = [...(upload?.match(/\[\?([^\]]*)\]/)?.[1] ?? '').matchAll(/(\w+)=/g)]
    const parameters = document.paths['/v1/libraries/{library}'].put.parameters as Array<{
      in: string
      name: string
    }>
    expect(queryNames.map((match) => match[1]).sort()).toEqual(
      parameters
        .filter((parameter) => parameter.in === 'query')
        .map((parameter) => parameter.name)
        .sort(),
    )
  })

  it("README's list of statuses names each route whose own 429 is more than the shared limits'", async () => {
    const { app } = await createTestApp()
    const document = await readJson(await app.request('/openapi.json'))
    const shared = document.paths['/v1/libraries'].get.responses['429'].description
    const readme = await readFile(new URL('../../README.md', import.meta.url), 'utf8')
    // The 429 of the README's list of statuses: "429 (…), 431".
    const start = readme.indexOf('429 (`RATE_LIMITED`')
    const clause = readme.slice(start, readme.indexOf('), 431', start))
    expect(start).toBeGreaterThan(0)
    const own: string[] = []
    for (const [path, item] of Object.entries(document.paths as Record<string, any>))
      for (const [method, operation] of Object.entries(item as Record<string, any>)) {
        const description = operation.responses?.['429']?.description
        if (description !== undefined && description !== shared)
          own.push(`${method.toUpperCase()} ${path}`)
      }
    expect(own.length).toBeGreaterThan(0)
    for (const route of own) expect(clause, route).toContain(route)
  })

  it("says tau's default as each route has it", async () => {
    const { app } = await createTestApp()
    const document = await readJson(await app.request('/openapi.json'))
    // tau: the learned selector (the default) retrieves with a floor of 0 unless a request sets
    // one (pipeline.ts, retrievalMinScore 0: on dense:static:glove-100d it cut 125 of the demo's
    // 197 candidates, negative cosines; round 55 said "none"); the planner reward has no
    // selector: BM25's 3. Both said "Default 3 for BM25" before round 55.
    const bodyOf = (path: string) =>
      document.paths[path].post.requestBody.content['application/json'].schema
    expect(bodyOf('/v1/select-tools').properties.tau.description).toContain(
      'Default: 0 with the learned selector',
    )
    expect(bodyOf('/v1/rewards/planner').properties.tau.description).toContain(
      "Default: the retriever's own (3 for BM25)",
    )
  })

  it('says the retriever field takes a part the library has, as the routes do', async () => {
    const { app } = await createTestApp()
    const document = await readJson(await app.request('/openapi.json'))
    for (const path of ['/v1/select-tools', '/v1/search-tools']) {
      const body = document.paths[path].post.requestBody.content['application/json'].schema
      expect(body.properties.retriever.description, path).toMatch(
        /^Retriever of the library: bm25, [^;]*, or a part it has \(dense:<embedder>, hybrid:<part>\+<part>\); auto: the library's own\./,
      )
    }
    // A part's name passes the body's check: the library lacks it (400 UNKNOWN_COMPONENT, naming
    // the parts it has), not a malformed field (INVALID_INPUT).
    const answer = await app.request('/v1/search-tools', {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ query: 'weather', retriever: 'dense:static:glove-100d' }),
    })
    expect(answer.status).toBe(400)
    expect((await readJson(answer)).error.code).toBe('UNKNOWN_COMPONENT')
  })

  it('bounds the path parameters as the routes do: a library name, a tool id of 500 characters', async () => {
    const { app } = await createTestApp()
    const document = await readJson(await app.request('/openapi.json'))
    const [library, id] = document.paths['/v1/libraries/{library}/tools/{id}'].parameters
    expect(id).toMatchObject({ name: 'id', schema: { type: 'string', maxLength: 500 } })
    expect(library).toMatchObject({
      name: 'library',
      schema: { type: 'string', pattern: LIBRARY_NAME_PATTERN.source },
    })
    for (const path of ['/v1/libraries/{library}', '/v1/libraries/{library}/tools/batch']) {
      expect(document.paths[path].parameters[0], path).toEqual(library)
    }
    // The bounds the document states are the routes': the longest id is looked up, one more
    // character is a 400 before any lookup; a name the pattern refuses is a 400 too.
    const longest = await app.request(`/v1/libraries/sample/tools/${'a'.repeat(500)}`)
    expect(longest.status).toBe(404)
    expect((await readJson(longest)).error.code).toBe('UNKNOWN_TOOL')
    const tooLong = await app.request(`/v1/libraries/sample/tools/${'a'.repeat(501)}`)
    expect(tooLong.status).toBe(400)
    expect((await readJson(tooLong)).error.code).toBe('INVALID_INPUT')
    for (const name of ['a'.repeat(65), '-sample', 'sam ple']) {
      expect(new RegExp(library.schema.pattern).test(name), name).toBe(false)
      const answer = await app.request(`/v1/libraries/${encodeURIComponent(name)}`)
      expect(answer.status, name).toBe(400)
    }
  })

  it("is a valid OpenAPI 3.1 document (the specification's own schema, through swagger-parser)", async () => {
    const { app } = await createTestApp()
    const document = await readJson(await app.request('/openapi.json'))
    expect(document.openapi).toBe('3.1.0')
    // validate() checks a copy against the OpenAPI 3.1 schema and resolves every $ref; it throws
    // naming the first path that breaks it (a response without its description, say).
    await expect(SwaggerParser.validate(structuredClone(document))).resolves.toBeDefined()
  })
})
