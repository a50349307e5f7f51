import { readFile } from 'node:fs/promises'
import { describe, expect, it } from 'vitest'
import {
  detectFormat,
  importTools,
  importToolsFromFile,
  importToolsFromText,
} from '../../../src/library/importers/index.ts'
import { expectToolselError, expectToolselErrorAsync } from './expect-toolsel-error.ts'

const fixture = (name: string) =>
  new URL(`../../fixtures/formats/${name}`, import.meta.url).pathname

describe('plain function lists', () => {
  it('imports [{name, description, parameters}] without conversion, types made JSON Schema', async () => {
    const result = await importToolsFromFile(fixture('functions.json'), { onDuplicate: 'first' })
    expect(result.format).toBe('functions')
    const sushi = result.tools.find((tool) => tool.id === 'get_best_sushi_places')!
    expect(sushi).toMatchObject({
      name: 'get_best_sushi_places',
      description: 'Returns the best sushi places given the city, review_rate and top number.',
      parameters: {
        type: 'object',
        properties: { review_rate: { type: 'number' }, top: { type: 'integer' } },
        required: ['city', 'top'],
      },
      source: { format: 'functions', record: 0 },
    })
    expect(result.schemaChanges.find((change) => change.id === 'get_best_sushi_places')).toEqual({
      id: 'get_best_sushi_places',
      changes: ['type: "dict" → "object"', 'properties.review_rate.type: "float" → "number"'],
    })
  })

  it('reads LangChain args_schema / args and warns about a schema under another key', () => {
    // Before: all three imported with empty parameters and no warning.
    const text = JSON.stringify([
      {
        name: 'search',
        description: 'Search the web',
        args_schema: {
          title: 'SearchInput',
          type: 'object',
          properties: { query: { type: 'string' } },
          required: ['query'],
        },
      },
      { name: 'calculator', description: 'Math', args: { expression: { type: 'string' } } },
      {
        name: 'read_file',
        description: 'Read a file',
        jsonSchema: { type: 'object', properties: { path: { type: 'string' } } },
      },
    ])
    const { format, tools, warnings } = importToolsFromText(text)
    expect(format).toBe('functions')
    expect(tools.map((tool) => tool.parameters)).toEqual([
      {
        title: 'SearchInput',
        type: 'object',
        properties: { query: { type: 'string' } },
        required: ['query'],
      },
      { type: 'object', properties: { expression: { type: 'string' } } },
      { type: 'object', properties: {} },
    ])
    expect(warnings).toHaveLength(1)
    expect(JSON.stringify(warnings[0])).toContain(
      'its field \\"jsonSchema\\" looks like a JSON Schema',
    )
  })

  it('reads a single pasted function and text without a file name', () => {
    const text = JSON.stringify({ name: 'ping', description: 'Check a host is up.' })
    expect(detectFormat(text)).toBe('functions')
    const { tools } = importToolsFromText(text, { namespace: 'net' })
    expect(tools).toEqual([
      {
        id: 'net.ping',
        name: 'ping',
        namespace: 'net',
        description: 'Check a host is up.',
        parameters: { type: 'object', properties: {} },
        source: { format: 'functions', record: 0 },
      },
    ])
  })

  it('reads Berkeley Function-Calling Leaderboard records, each function a tool', async () => {
    const result = await importToolsFromFile(fixture('bfcl-records.jsonl'), {
      onDuplicate: 'rename',
    })
    expect(result.tools.map((tool) => [tool.id, tool.source?.line, tool.source?.function])).toEqual(
      [
        ['calculate_triangle_area', 1, 0],
        ['convert_currency', 2, 0],
        ['get_weather', 2, 1],
        ['calculate_triangle_area_2', 3, 0],
      ],
    )
    expect(result.tools[3].parameters).toEqual({
      type: 'object',
      properties: {
        sides: { type: 'array', items: { type: 'number' }, description: 'The three side lengths.' },
      },
      required: ['sides'],
    })
  })

  it('reads Gemini functionDeclarations, upper-case types and parametersJsonSchema', async () => {
    const result = await importToolsFromFile(fixture('gemini-tools.json'))
    expect(result.format).toBe('functions')
    expect(result.tools.map((tool) => tool.id)).toEqual(['schedule_meeting', 'set_light_values'])
    expect(result.tools[0].parameters).toMatchObject({
      type: 'object',
      properties: { attendees: { type: 'array', items: { type: 'string' } } },
    })
    expect(result.tools[1].parameters.required).toEqual(['brightness', 'color_temp'])
    expect(result.tools[0].source).toMatchObject({ record: 0, function: 0 })
  })

  it('names the record and field of a bad function', () => {
    const text = JSON.stringify([
      { name: 'ok', parameters: {} },
      { name: 7, description: 'x' },
    ])
    expectToolselError(
      () => importToolsFromText(text, { fileName: 'fns.json', format: 'functions' }),
      'IMPORT_FAILED',
      'fns.json: record 1: field "name": expected a non-empty string, got 7',
    )
    const bfcl = JSON.stringify({ id: 'a', question: [], function: [{ name: 'f' }, { name: '' }] })
    expectToolselError(
      () => importToolsFromText(bfcl, { fileName: 'bfcl.json' }),
      'IMPORT_FAILED',
      'bfcl.json: record 0: field "function[1].name": expected a non-empty string',
    )
  })
})

describe('Anthropic and OpenAI Responses tools', () => {
  it('imports Anthropic client tools from a request body, skipping server tools', async () => {
    const result = await importToolsFromFile(fixture('anthropic-tools.json'))
    expect(result.format).toBe('anthropic')
    expect(result.tools.map((tool) => tool.id)).toEqual(['get_stock_price', 'get_time'])
    expect(result.tools[0].parameters.required).toEqual(['ticker'])
    // No usage-example feature in this build: the examples stay with the tool's source.
    expect(result.tools[0].source?.inputExamples).toEqual([{ ticker: 'AAPL' }, { ticker: 'MSFT' }])
    expect(result.warnings).toEqual([
      expect.stringContaining('record 2: skipped the server tool "web_search_20250305"'),
    ])
    // Messages name the path as given; the served tools only the file's base name.
    expect(result.warnings[0]).toContain(fixture('anthropic-tools.json'))
    expect(result.tools[0].source?.file).toBe('anthropic-tools.json')
  })

  it('names the bad field of an Anthropic tool', () => {
    const text = JSON.stringify([{ name: 'a', input_schema: { type: 'string' } }])
    expectToolselError(
      () => importToolsFromText(text, { fileName: 'claude.json' }),
      'IMPORT_FAILED',
      'claude.json: record 0: field "input_schema.type": expected one of "object", got "string"',
    )
  })

  it('imports flat Responses API function tools and skips built-ins', async () => {
    const result = await importToolsFromFile(fixture('openai-responses-tools.json'))
    expect(result.format).toBe('openai')
    expect(result.tools.map((tool) => [tool.id, tool.source?.strict])).toEqual([
      ['get_weather', true],
      ['send_email', true],
    ])
    expect(result.warnings[0]).toContain('skipped a built-in "web_search_preview" tool')
  })
})

describe('OpenAPI specs', () => {
  it('makes one tool per operation of an OpenAPI 3 YAML spec, $refs resolved', async () => {
    const result = await importToolsFromFile(fixture('petstore.yaml'))
    expect(result.format).toBe('openapi')
    expect(result.tools.map((tool) => [tool.id, tool.source?.method, tool.source?.path])).toEqual([
      ['listPets', 'GET', '/pets'],
      ['createPets', 'POST', '/pets'],
      ['showPetById', 'GET', '/pets/{petId}'],
      ['delete_pets_petId', 'DELETE', '/pets/{petId}'],
      ['placeOrder', 'POST', '/store/orders'],
      ['getCategoryTree', 'GET', '/store/categories/{categoryId}'],
      ['replaceCategory', 'PUT', '/store/categories/{categoryId}'],
    ])
    const [listPets, createPets, showPetById, deletePet] = result.tools
    expect(listPets).toMatchObject({
      description: 'List all pets. Returns the pets the store has, a page at a time.',
      tags: ['pets'],
      parameters: {
        type: 'object',
        properties: {
          limit: {
            type: 'integer',
            maximum: 100,
            description: 'How many items to return at one time (max 100)',
          },
          tags: { type: 'array', items: { type: 'string' } },
        },
      },
    })
    expect(listPets.parameters.required).toBeUndefined()
    expect(createPets.parameters).toEqual({
      type: 'object',
      properties: {
        body: {
          type: 'object',
          required: ['name'],
          properties: {
            name: { type: 'string', description: "The pet's name" },
            tag: { type: ['string', 'null'] },
          },
          description: 'Pet to add to the store',
        },
      },
      required: ['body'],
    })
    // Path-level parameters apply to every operation of the path.
    expect(showPetById.parameters.required).toEqual(['petId'])
    // Authorization is the client's business; other headers are parameters.
    expect(Object.keys(deletePet.parameters.properties as object)).toEqual([
      'petId',
      'X-Request-Reason',
    ])
    expect(deletePet.description).toBe('Deletes a single pet based on the id supplied.')
    // A recursive schema is inlined twice, then cut and reported.
    const tree = result.tools[6].parameters as { properties: { body: { properties: object } } }
    expect(JSON.stringify(tree)).not.toContain('$ref')
    expect(result.schemaChanges.find((change) => change.id === 'replaceCategory')?.changes).toEqual(
      [
        'properties.body.properties.children.items.properties.children.items.$ref: "#/components/schemas/Category" does not resolve inside the schema → removed (any value)',
      ],
    )
    expect(result.invalidSchemas).toEqual([])
  })

  it('reads a Swagger 2 spec: body and formData parameters, definitions', async () => {
    const result = await importToolsFromFile(fixture('petstore-swagger2.json'))
    expect(result.format).toBe('openapi')
    expect(result.tools.map((tool) => tool.id)).toEqual([
      'addPet',
      'findPetsByStatus',
      'uploadFile',
      'getOrderById',
      'delete_store_order_orderId',
    ])
    expect(result.tools[0].parameters).toMatchObject({
      properties: {
        body: {
          required: ['name', 'photoUrls'],
          properties: { category: { type: 'object', properties: { name: { type: 'string' } } } },
        },
      },
      required: ['body'],
    })
    expect(result.tools[1].parameters).toMatchObject({
      properties: { status: { type: 'array', items: { enum: ['available', 'pending', 'sold'] } } },
      required: ['status'],
    })
    expect(result.tools[2].parameters.properties).toMatchObject({
      petId: { type: 'integer', format: 'int64' },
      file: { type: 'string', format: 'binary', description: 'file to upload' },
    })
  })

  it('detects a YAML spec uploaded without a file name', async () => {
    const text = await readFile(fixture('petstore.yaml'), 'utf8')
    expect(detectFormat(text)).toBe('openapi')
    expect(detectFormat(text, 'upload.json')).toBe('openapi')
    const result = await importTools(text, { namespace: 'petstore' })
    expect(result.tools[0]).toMatchObject({ id: 'petstore.listPets', namespace: 'petstore' })
  })

  it('keeps whole operationIds: two that share their first 64 characters are two tools', async () => {
    // api.github.com.json failed to import: names were cut to 64 characters and collided.
    const shared = 'orgs/custom-properties-for-repos-create-or-update-organization-d'
    const operation = (operationId: string) => ({
      put: { operationId, responses: { '200': { description: 'ok' } } },
    })
    const spec = {
      openapi: '3.1.0',
      info: { title: 'github', version: '1' },
      paths: {
        '/a': operation(`${shared}efinition`),
        '/b': operation(`${shared}efinitions`),
      },
    }
    const result = await importTools(JSON.stringify(spec))
    expect(result.tools.map((tool) => tool.id)).toEqual([
      'orgs_custom-properties-for-repos-create-or-update-organization-definition',
      'orgs_custom-properties-for-repos-create-or-update-organization-definitions',
    ])
  })

  it('reads a referenced request body or parameter whose schema is recursive', async () => {
    // The parser leaves the whole referenced object a $ref when a schema inside it is recursive;
    // the body and the parameter were dropped without a word.
    const spec = {
      openapi: '3.1.0',
      info: { title: 'store', version: '1' },
      paths: {
        '/orders': {
          post: {
            operationId: 'createOrder',
            parameters: [{ $ref: '#/components/parameters/Filter' }],
            requestBody: { $ref: '#/components/requestBodies/OrderBody' },
            responses: { '201': { description: 'created' } },
          },
        },
      },
      components: {
        parameters: {
          Filter: {
            name: 'filter',
            in: 'query',
            content: { 'application/json': { schema: { $ref: '#/components/schemas/Order' } } },
          },
        },
        requestBodies: {
          OrderBody: {
            required: true,
            content: { 'application/json': { schema: { $ref: '#/components/schemas/Order' } } },
          },
        },
        schemas: {
          Order: {
            type: 'object',
            properties: {
              item: { type: 'string' },
              parent: { $ref: '#/components/schemas/Order' },
            },
          },
        },
      },
    }
    const result = await importTools(JSON.stringify(spec))
    const parameters = result.tools[0].parameters as {
      properties: Record<string, { properties: Record<string, unknown> }>
      required: string[]
    }
    expect(Object.keys(parameters.properties)).toEqual(['filter', 'body'])
    expect(parameters.required).toEqual(['body'])
    expect(parameters.properties.body.properties.item).toEqual({ type: 'string' })
    expect(parameters.properties.filter.properties.item).toEqual({ type: 'string' })
    expect(JSON.stringify(parameters)).not.toContain('$ref')
  })

  it('adds a path template parameter the spec does not declare, with a warning', async () => {
    // Before: GET /items/{itemId} without parameters imported with no parameters at all.
    const spec = {
      openapi: '3.0.3',
      info: { title: 'items', version: '1' },
      paths: {
        '/items/{itemId}': {
          get: { summary: 'An item', responses: { '200': { description: 'ok' } } },
        },
        '/items/{itemId}/notes/{noteId}': {
          parameters: [{ name: 'itemId', in: 'path', required: true, schema: { type: 'integer' } }],
          get: { operationId: 'getNote', responses: { '200': { description: 'ok' } } },
        },
      },
    }
    const result = await importTools(JSON.stringify(spec))
    expect(result.tools.map((tool) => tool.parameters)).toEqual([
      { type: 'object', properties: { itemId: { type: 'string' } }, required: ['itemId'] },
      {
        type: 'object',
        properties: { itemId: { type: 'integer' }, noteId: { type: 'string' } },
        required: ['itemId', 'noteId'],
      },
    ])
    expect(result.warnings).toHaveLength(2)
    expect(result.warnings[1]).toContain(
      'GET /items/{itemId}/notes/{noteId}: path parameter(s) "noteId" not declared',
    )
  })

  it('never fetches remote references and reports them', async () => {
    const spec = {
      openapi: '3.1.0',
      info: { title: 'remote', version: '1' },
      paths: {
        '/things': {
          get: {
            operationId: 'listThings',
            parameters: [
              { name: 'q', in: 'query', schema: { $ref: 'https://example.invalid/q.json' } },
            ],
            responses: { '200': { description: 'ok' } },
          },
        },
      },
    }
    const result = await importTools(JSON.stringify(spec))
    expect(result.tools[0].parameters).toEqual({ type: 'object', properties: { q: {} } })
    expect(result.schemaChanges[0].changes[0]).toContain(
      'properties.q.$ref: "https://example.invalid/q.json" does not resolve inside the schema',
    )
  })

  it('reports a whole parameter or request body that is a remote reference, left out', async () => {
    const spec = {
      openapi: '3.1.0',
      info: { title: 'remote', version: '1' },
      paths: {
        '/things': {
          post: {
            operationId: 'addThing',
            parameters: [
              { $ref: 'https://example.invalid/params.yaml#/Limit' },
              { name: 'q', in: 'query', schema: { type: 'string' } },
            ],
            requestBody: { $ref: 'other.yaml#/Thing' },
            responses: { '200': { description: 'ok' } },
          },
        },
      },
    }
    const result = await importTools(JSON.stringify(spec), { fileName: 'spec.json' })
    expect(result.tools[0].parameters).toEqual({
      type: 'object',
      properties: { q: { type: 'string' } },
    })
    expect(result.warnings).toEqual([
      'spec.json: record 0: POST /things: "https://example.invalid/params.yaml#/Limit", "other.yaml#/Thing" not resolved (references to other files or URLs are never fetched); that parameter or body is left out',
    ])
  })

  it('fails with the line of a YAML syntax error and says what a non-spec YAML is', async () => {
    await expectToolselErrorAsync(
      () => importTools('openapi: 3.0.0\npaths:\n  /a: [unclosed\n', { fileName: 'bad.yaml' }),
      'IMPORT_FAILED',
      'bad.yaml: invalid YAML at line',
    )
    // The parser's own "at line …:" and code frame are not repeated after its message.
    const nested = await expectToolselErrorAsync(
      () =>
        importTools(
          'openapi: 3.0.0\npaths:\n  /a:\n    get:\n     operationId: x\n      responses: {}\n',
          {
            fileName: 'nested.yaml',
          },
        ),
      'IMPORT_FAILED',
    )
    expect(nested.message).toBe(
      'nested.yaml: invalid YAML at line 5, column 19: Nested mappings are not allowed in compact mappings',
    )
    await expectToolselErrorAsync(
      () => importTools('name: x\nitems: []\n', { fileName: 'other.yml' }),
      'UNKNOWN_FORMAT',
      'other.yml: cannot tell the tool format; saw a YAML document with keys "name", "items"; YAML files are read as OpenAPI 3 or Swagger 2 specs',
    )
    await expectToolselErrorAsync(
      () => importTools('openapi: 3.0.0\ninfo: {title: t, version: "1"}\npaths: {}\n'),
      'IMPORT_FAILED',
      '<input>: field "paths": the spec has no paths',
    )
    // A web page saved in place of the file.
    await expectToolselErrorAsync(
      () =>
        importTools('<!DOCTYPE html>\n<html><body>Not Found</body></html>\n', {
          fileName: 'tools.json',
        }),
      'IMPORT_FAILED',
      'tools.json: invalid JSON at line 1, column 1: unexpected "<", expected a value; the file is an HTML page, not JSON (a web page saved in place of the raw file?)',
    )
    // Without paths at all the parser said "[object Object] is not a valid Openapi API definition".
    const missing = await expectToolselErrorAsync(
      () => importTools('{"openapi": "3.1.0", "info": {"title": "t", "version": "1"}}'),
      'IMPORT_FAILED',
    )
    expect(missing.message).toBe(
      '<input>: field "paths": the spec has no paths, so no operations to import',
    )
  })

  it('tells synchronous callers to use importTools for OpenAPI', async () => {
    const text = await readFile(fixture('petstore.yaml'), 'utf8')
    expectToolselError(
      () => importToolsFromText(text),
      'IMPORT_FAILED',
      'OpenAPI specs are imported asynchronously: use importTools',
    )
  })
})
