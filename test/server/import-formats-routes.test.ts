import { readFile } from 'node:fs/promises'
import { Ajv } from 'ajv'
import { describe, expect, it } from 'vitest'
import { createTestApp, postJson, readJson } from './test-service.ts'

const fixture = (name: string) =>
  readFile(new URL(`../fixtures/formats/${name}`, import.meta.url), 'utf8')

const put = (body: string, contentType = 'application/json') => ({
  method: 'PUT',
  body,
  headers: { 'content-type': contentType },
})

/** What an agent framework does with a served schema: compile it (throws when invalid). */
function expectUsableSchema(parameters: unknown, id: string) {
  // Formats (int64, date-time) are the client's to check; without validateFormats: false ajv
  // warned about each one on the test process's stderr.
  const ajv = new Ajv({ strict: false, validateFormats: false })
  expect(() => ajv.compile(parameters as object), id).not.toThrow()
  expect((parameters as { type?: unknown }).type, id).toBe('object')
}

describe('PUT /v1/libraries/{name} with other tool formats', () => {
  it('refuses a multipart form (curl -F) with what to send instead, and changes nothing', async () => {
    const { app } = await createTestApp()
    const form = new FormData()
    form.append('file', new Blob([await fixture('functions.json')]), 'functions.json')
    const response = await app.request('/v1/libraries/fns', { method: 'PUT', body: form })
    expect(response.status).toBe(400)
    expect((await readJson(response)).error).toEqual({
      code: 'INVALID_INPUT',
      message:
        'Send the tool file itself as the request body (curl --data-binary @tools.json), not as a multipart form (curl -F, FormData).',
    })
    expect((await app.request('/v1/libraries/fns')).status).toBe(404)
  })

  it('says curl -d removed the line breaks when a one-line form body does not import', async () => {
    // `curl -X PUT …/v1/libraries/x -d @tools.jsonl` sends the file as a form without its line
    // breaks. Before: only 'invalid JSON at line 1, column 94: unexpected "{" after the end of
    // the JSON value', about a line the user's file does not have.
    const { app } = await createTestApp()
    const record = (at: number) =>
      JSON.stringify({ id: `a.t${at}`, name: `t${at}`, description: `tool ${at}` })
    const form = 'application/x-www-form-urlencoded'
    const hint =
      'The body came as a form (content-type: application/x-www-form-urlencoded) without a line break, as curl -d @<file> sends a file: -d removes its line breaks. Send the file as it is: curl --data-binary @<file>.'
    const small = await app.request('/v1/libraries/jl', put(record(1) + record(2), form))
    expect(small.status).toBe(400)
    const error = (await readJson(small)).error
    expect(error.code).toBe('IMPORT_FAILED')
    // One sentence ends before the hint starts (was "…the JSON value The body came…").
    expect(error.message).toContain(`after the end of the JSON value. ${hint}`)
    expect(error.message.endsWith(hint)).toBe(true)
    // Over server.importWorkerMinChars the bytes go to the import worker; the hint still comes.
    const many = Array.from({ length: 20_000 }, (_, at) => record(at)).join('')
    expect(many.length).toBeGreaterThan(1_048_576)
    const large = await app.request('/v1/libraries/jl', put(many, form))
    expect(large.status).toBe(400)
    expect((await readJson(large)).error.message.endsWith(hint)).toBe(true)
    // The same text sent as JSON, or a form with line breaks, gets the import's error alone.
    const json = await app.request('/v1/libraries/jl', put(record(1) + record(2)))
    expect((await readJson(json)).error.message).not.toContain('curl')
    const broken = await app.request('/v1/libraries/jl', put(`${record(1)}\n{`, form))
    expect((await readJson(broken)).error.message).not.toContain('curl')
    // A form that imports is taken as before (a JSON array keeps its meaning without breaks).
    const ok = await app.request('/v1/libraries/jl', put(`[${record(1)},${record(2)}]`, form))
    expect(ok.status).toBe(201)
  })

  it('imports a plain function list with repeated names under ?onDuplicate=rename', async () => {
    const { app } = await createTestApp()
    const body = await fixture('functions.json')
    const refused = await app.request('/v1/libraries/fns', put(body))
    expect(refused.status).toBe(400)
    expect((await readJson(refused)).error).toMatchObject({
      code: 'DUPLICATE_TOOL_ID',
      message: expect.stringContaining('tool id "calculate_triangle_area" appears twice'),
    })

    const created = await app.request('/v1/libraries/fns?onDuplicate=rename', put(body))
    expect(created.status).toBe(201)
    const summary = await readJson(created)
    expect(summary).toMatchObject({ name: 'fns', toolCount: 5 })
    expect(summary.import).toMatchObject({
      format: 'functions',
      tools: 5,
      counts: { renamed: 1, dropped: 0, identical: 1, schemaChanges: 5, invalidSchemas: 0 },
      duplicates: [
        {
          id: 'calculate_triangle_area',
          action: 'renamed',
          to: 'calculate_triangle_area_2',
          record: 3,
        },
        { id: 'get_best_sushi_places', action: 'identical', record: 4 },
      ],
    })
    expect(summary.import.schemaChanges[0]).toEqual({
      id: 'get_best_sushi_places',
      changes: ['type: "dict" → "object"', 'properties.review_rate.type: "float" → "number"'],
    })

    // Every served schema is valid JSON Schema, "dict" and "float" included before import.
    const ids = [
      'get_best_sushi_places',
      'calculate_triangle_area',
      'plot_points',
      'calculate_triangle_area_2',
      'CarRental.findCars',
    ]
    const batch = await readJson(
      await app.request('/v1/libraries/fns/tools/batch', postJson({ ids })),
    )
    expect(batch.tools).toHaveLength(5)
    for (const tool of batch.tools) expectUsableSchema(tool.parameters, tool.id)

    // The description filter keeps the sushi tool's only sentence, so a query finds it.
    const selected = await readJson(
      await app.request(
        '/v1/select-tools',
        postJson({ instruction: 'find the best sushi places in Tokyo', library: 'fns' }),
      ),
    )
    expect(selected.tools.map((tool: { id: string }) => tool.id)).toEqual(['get_best_sushi_places'])
    for (const tool of selected.tools) expectUsableSchema(tool.parameters, tool.id)
  })

  it('rejects an unknown onDuplicate value with the choices', async () => {
    const { app } = await createTestApp()
    const response = await app.request(
      '/v1/libraries/fns?onDuplicate=merge',
      put(await fixture('functions.json')),
    )
    expect(response.status).toBe(400)
    const { error } = await readJson(response)
    expect(error.code).toBe('INVALID_INPUT')
    expect(error.message).toContain('onDuplicate')
  })

  it('imports an OpenAPI YAML spec, one tool per operation, and selects from it', async () => {
    const { app } = await createTestApp()
    const created = await app.request(
      '/v1/libraries/petstore',
      put(await fixture('petstore.yaml'), 'application/yaml'),
    )
    expect(created.status).toBe(201)
    const summary = await readJson(created)
    expect(summary).toMatchObject({ toolCount: 7, import: { format: 'openapi' } })
    const selected = await readJson(
      await app.request(
        '/v1/select-tools',
        postJson({ instruction: 'place an order for a pet', library: 'petstore' }),
      ),
    )
    expect(selected.tools.map((tool: { id: string }) => tool.id)).toEqual(['placeOrder'])
    expectUsableSchema(selected.tools[0].parameters, 'placeOrder')
  })

  it('names a YAML or CSV upload by what it is, and detects a CRAFT CSV', async () => {
    const { app } = await createTestApp()
    const yaml = [
      'openapi: 3.1.0',
      'info: {title: t, version: "1"}',
      'paths:',
      '  /weather:',
      '    get:',
      '      operationId: getWeather',
      '      summary: Get the weather for a city',
      '      parameters:',
      '        - {name: days, in: query, schema: {type: int}}',
    ].join('\n')
    const created = await readJson(
      await app.request('/v1/libraries/spec', put(yaml, 'application/yaml')),
    )
    // It was labelled spec.json, although nothing in it is JSON.
    expect(created.warnings).toEqual([
      'spec.yaml: parameters of 1 tool(s) rewritten into JSON Schema: getWeather: properties.days.type: "int" → "integer"',
    ])
    expect(created.import.files).toEqual([{ file: 'spec.yaml', format: 'openapi', tools: 1 }])

    // A CRAFT CSV upload was read as JSON ("invalid JSON at line 1") unless ?format=craft.
    const csv = 'tool_id,tool\n1,"def add_numbers(a, b):\n    return a + b"\n'
    const response = await app.request('/v1/libraries/math', put(csv, 'text/csv'))
    expect(response.status).toBe(201)
    expect((await readJson(response)).import).toMatchObject({
      format: 'craft',
      files: [{ file: 'math.csv', format: 'craft', tools: 1 }],
    })

    const bad = await readJson(await app.request('/v1/libraries/bad', put('tools: nope')))
    expect(bad.error.message).toContain('bad.json: ')
  })

  it('documents the import options and summary in /openapi.json', async () => {
    const { app } = await createTestApp()
    const document = await readJson(await app.request('/openapi.json'))
    const put = document.paths['/v1/libraries/{library}'].put
    const names = put.parameters.map((parameter: { name: string }) => parameter.name)
    expect(names).toEqual(
      expect.arrayContaining(['format', 'namespace', 'onDuplicate', 'retriever']),
    )
    const onDuplicate = put.parameters.find(
      (parameter: { name: string }) => parameter.name === 'onDuplicate',
    )
    expect(onDuplicate.schema.enum).toEqual(['error', 'rename', 'first', 'last'])
    const format = put.parameters.find((parameter: { name: string }) => parameter.name === 'format')
    expect(format.schema.enum).toEqual(
      expect.arrayContaining(['functions', 'anthropic', 'openapi']),
    )
    const response = put.responses['201'].content['application/json'].schema
    expect(Object.keys(response.properties)).toEqual(expect.arrayContaining(['warnings', 'import']))
  })
})

describe('instructions in languages written without spaces', () => {
  it('selects the right tool from a library described in Chinese', async () => {
    const { app } = await createTestApp()
    const created = await app.request('/v1/libraries/zh', put(await fixture('chinese-tools.json')))
    expect(created.status).toBe(201)
    const cases = [
      ['帮我查询一下明天上海的天气', 'query_weather'],
      ['预订下周一从北京到上海的机票', 'book_flight'],
      ['把这段话翻译成英文', 'translate_text'],
      ['明天早上七点设置闹钟提醒我', 'set_alarm'],
      ['帮我订一张去上海的机票', 'book_flight'], // 订: short for 预订 ("book")
      ['给张三发一封邮件', 'send_email'],
      ['点一份外卖', 'order_food'],
    ]
    for (const [instruction, expected] of cases) {
      const selected = await readJson(
        await app.request('/v1/select-tools', postJson({ instruction, library: 'zh' })),
      )
      expect(
        selected.tools.map((tool: { id: string }) => tool.id),
        instruction,
      ).toEqual([expected])
    }
  })

  it('finds English tools named in a Chinese instruction', async () => {
    const { app } = await createTestApp()
    const selected = await readJson(
      await app.request(
        '/v1/select-tools',
        postJson({ instruction: '请用 send_sms 给妈妈发一条短信', library: 'sample' }),
      ),
    )
    expect(selected.tools.map((tool: { id: string }) => tool.id)).toEqual(['sms.send_sms'])
  })
})
