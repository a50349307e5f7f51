import { createServer, type Server } from 'node:http'
import { readFile } from 'node:fs/promises'
import { Ajv2020 } from 'ajv/dist/2020.js'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import type OpenAI from 'openai'
import {
  CLIENT_OPERATIONS,
  ToolselClient,
  ToolselClientError,
  type AnthropicTool,
} from '../../src/client/index.ts'
import { startServe, type RunningServe } from '../helpers/start-serve.ts'

let serve: RunningServe
let client: ToolselClient
let openapi: {
  paths: Record<string, Record<string, { responses: Record<string, { content?: any }> }>>
}

beforeAll(async () => {
  serve = await startServe([], { savedDemo: true })
  client = new ToolselClient({ baseUrl: serve.url })
  openapi = (await (await fetch(`${serve.url}/openapi.json`)).json()) as typeof openapi
}, 90_000)

afterAll(async () => {
  await serve?.stop()
})

/**
 * Validates a body against the response schema `/openapi.json` publishes for an operation, with
 * no property the schema leaves out (a field the service sends but does not publish is missing
 * from the client's types too).
 */
function expectMatchesOpenApi(operation: string, status: number, body: unknown) {
  const [method, path] = operation.split(' ')
  const response = openapi.paths[path][method.toLowerCase()].responses[String(status)]
  const schema = response.content?.['application/json']?.schema
  expect(schema, `${operation} ${status} has a published schema`).toBeDefined()
  const validate = new Ajv2020({ strict: false }).compile(closed(schema) as object)
  expect(validate(body) ? [] : validate.errors, operation).toEqual([])
}

/** A copy of a JSON Schema whose objects with listed `properties` allow no others. */
function closed(schema: unknown): unknown {
  if (Array.isArray(schema)) return schema.map(closed)
  if (typeof schema !== 'object' || schema === null) return schema
  const copy = Object.fromEntries(
    Object.entries(schema).map(([key, value]) => [key, closed(value)]),
  ) as Record<string, unknown>
  if (copy.properties !== undefined && copy.additionalProperties === undefined)
    copy.additionalProperties = false
  return copy
}

describe('ToolselClient against a running toolsel serve', () => {
  it('has a method for every operation of /openapi.json (no drift)', () => {
    const published = Object.entries(openapi.paths).flatMap(([path, item]) =>
      Object.keys(item)
        .filter((key) => key !== 'parameters')
        .map((method) => `${method.toUpperCase()} ${path}`),
    )
    expect(new Set(Object.values(CLIENT_OPERATIONS))).toEqual(new Set(published))
  })

  it('selects and searches; the answers match the published schemas', async () => {
    const selected = await client.select(
      'What is the weather in Paris tomorrow, and email the forecast to Ann',
    )
    expect(selected.steps.length).toBeGreaterThan(0)
    expect(selected.tools.map((tool) => tool.id)).toContain('weather.get_weather_forecast')
    expectMatchesOpenApi(CLIENT_OPERATIONS.select, 200, selected)
    // Every field typed: the reranker and its time (were sent, not published), explain's features.
    expect(selected.components.reranker).toBe('identity')
    expect(selected.timings.rerankMs).toBeGreaterThanOrEqual(0)
    const explained = await client.select({
      instruction: 'text Bob that I am late',
      explain: true,
      includeSchemas: false,
    })
    expectMatchesOpenApi(CLIENT_OPERATIONS.select, 200, explained)

    const found = await client.search({ query: 'send an SMS text message', k: 3 })
    expect(found.results.length).toBeLessThanOrEqual(3)
    expect(found.results[0].id).toBe('sms.send_sms')
    expectMatchesOpenApi(CLIENT_OPERATIONS.search, 200, found)
  })

  it('returns the tools as OpenAI and Anthropic take them, named validly, with toolIds', async () => {
    const instruction = 'What is the weather in Paris tomorrow, and email the forecast to Ann'
    const chat = await client.select({ instruction, toolFormat: 'openai' })
    expectMatchesOpenApi(CLIENT_OPERATIONS.select, 200, chat)
    // The client's types are the SDK's: these assignments are checked by `npm run typecheck`.
    const chatTools: OpenAI.Chat.Completions.ChatCompletionFunctionTool[] = chat.tools
    expect(chatTools.map((tool) => chat.toolIds[tool.function.name])).toEqual([
      'weather.get_weather_forecast',
      'mail.send_email',
    ])
    expect(chat.tools[0]).toEqual({
      type: 'function',
      function: {
        name: 'weather--get_weather_forecast',
        description: expect.any(String),
        parameters: expect.objectContaining({ type: 'object' }),
      },
    })
    // Everything else is the default answer's.
    const plain = await client.select(instruction)
    expect(chat.steps).toEqual(plain.steps)
    expect(chat.tools.map((tool) => tool.function.parameters)).toEqual(
      plain.tools.map((tool) => tool.parameters),
    )

    const responses = await client.select({ instruction, toolFormat: 'openai-responses' })
    expectMatchesOpenApi(CLIENT_OPERATIONS.select, 200, responses)
    const responseTools: OpenAI.Responses.FunctionTool[] = responses.tools
    expect(responseTools[1]).toMatchObject({
      type: 'function',
      name: 'mail--send_email',
      strict: false,
    })

    const anthropic = await client.select({ instruction, toolFormat: 'anthropic' })
    expectMatchesOpenApi(CLIENT_OPERATIONS.select, 200, anthropic)
    // Anthropic's Messages API reference (https://docs.anthropic.com/en/api/messages, tools):
    // a custom tool is {name, description?, input_schema}, name ^[a-zA-Z0-9_-]{1,64}$, the input
    // schema a JSON Schema object of type "object".
    const validate = new Ajv2020({ strict: false }).compile({
      type: 'array',
      items: {
        type: 'object',
        required: ['name', 'input_schema'],
        additionalProperties: false,
        properties: {
          name: { type: 'string', pattern: '^[a-zA-Z0-9_-]{1,64}$' },
          description: { type: 'string' },
          input_schema: {
            type: 'object',
            required: ['type'],
            properties: { type: { const: 'object' } },
          },
        },
      },
    })
    const anthropicTools: AnthropicTool[] = anthropic.tools
    expect(validate(anthropicTools) ? [] : validate.errors).toEqual([])
    expect(anthropic.toolIds).toEqual({
      'weather--get_weather_forecast': 'weather.get_weather_forecast',
      'mail--send_email': 'mail.send_email',
    })

    // The schema batch in a provider's shape.
    const loaded = await client.getProviderTools('demo', ['sms.send_sms'], 'anthropic')
    expect(loaded.toolIds).toEqual({ 'sms--send_sms': 'sms.send_sms' })
    expect(validate(loaded.tools) ? [] : validate.errors).toEqual([])
    expectMatchesOpenApi(CLIENT_OPERATIONS.getProviderTools, 200, loaded)
    // One tool in a provider's shape: GET …/tools/:id?toolFormat=.
    const one = await fetch(`${serve.url}/v1/libraries/demo/tools/sms.send_sms?toolFormat=openai`)
    const oneBody = await one.json()
    expect(oneBody).toMatchObject({
      tool: { type: 'function', function: { name: 'sms--send_sms' } },
      toolIds: { 'sms--send_sms': 'sms.send_sms' },
    })
    expectMatchesOpenApi(CLIENT_OPERATIONS.getTool, 200, oneBody)
    const mistyped = await fetch(
      `${serve.url}/v1/libraries/demo/tools/sms.send_sms?toolFromat=openai`,
    )
    expect(mistyped.status).toBe(400)
    expect((await mistyped.json()).error.message).toContain('did you mean "toolFormat"?')

    // A provider's shape holds the schema: includeSchemas false is refused, not half answered.
    await expect(
      client.select({ instruction, toolFormat: 'openai', includeSchemas: false }),
    ).rejects.toMatchObject({ code: 'INVALID_INPUT', status: 400 })
  })

  it('loads tools one by one and in batches', async () => {
    const tools = await client.getTools('demo', ['sms.send_sms', 'mail.send_email'])
    expect(tools.map((tool) => tool.id)).toEqual(['sms.send_sms', 'mail.send_email'])
    expect(tools[0].parameters).toMatchObject({ type: 'object' })
    expectMatchesOpenApi(CLIENT_OPERATIONS.getTools, 200, { tools })
    const tool = await client.getTool('demo', 'sms.send_sms')
    expect(tool.id).toBe('sms.send_sms')
    expectMatchesOpenApi(CLIENT_OPERATIONS.getTool, 200, { tool })
  })

  it('manages libraries: put (any format, onDuplicate), get, list, delete', async () => {
    const functions = await readFile(
      new URL('../fixtures/formats/functions.json', import.meta.url),
      'utf8',
    )
    const created = await client.putLibrary('fns', functions, { onDuplicate: 'rename' })
    expect(created).toMatchObject({ name: 'fns', toolCount: 5, import: { format: 'functions' } })
    expectMatchesOpenApi(CLIENT_OPERATIONS.putLibrary, 201, created)

    const fromObject = await client.putLibrary(
      'one',
      [{ name: 'ping', description: 'Check that a host answers.' }],
      { namespace: 'net' },
    )
    expect(fromObject.toolCount).toBe(1)
    expect((await client.getTool('one', 'net.ping')).name).toBe('ping')

    const added = await client.addExamples('one', [
      { instruction: 'is example.com up?', tools: ['net.ping'] },
    ])
    expect(added).toMatchObject({ library: 'one', added: 1, examples: 1 })
    expectMatchesOpenApi(CLIENT_OPERATIONS.addExamples, 200, added)
    const recorded = await client.feedback({
      instruction: 'does the host answer',
      library: 'one',
      used: ['net.ping'],
    })
    expect(recorded).toMatchObject({ added: 1, examples: 2 })
    expectMatchesOpenApi(CLIENT_OPERATIONS.feedback, 200, recorded)

    // The PUT's examples=keep|drop and a retriever comma list (before: no examples option, the
    // PUT kept the examples; retriever typed bm25 | dense | hybrid only).
    const kept = await client.putLibrary(
      'one',
      [{ name: 'ping', description: 'Check that a host answers.' }],
      { namespace: 'net', retriever: 'bm25,regex' },
    )
    expect(kept).toMatchObject({ examples: { count: 2 }, retrievers: ['bm25', 'regex'] })
    const dropped = await client.putLibrary(
      'one',
      [{ name: 'ping', description: 'Check that a host answers.' }],
      { namespace: 'net', examples: 'drop' },
    )
    expect(dropped.examples).toMatchObject({ count: 0 })

    const library = await client.getLibrary('fns')
    expect(library.toolCount).toBe(5)
    expectMatchesOpenApi(CLIENT_OPERATIONS.getLibrary, 200, library)
    const libraries = await client.listLibraries()
    expectMatchesOpenApi(CLIENT_OPERATIONS.listLibraries, 200, { libraries })
    const names = libraries.map((entry) => entry.name)
    expect(names).toEqual(expect.arrayContaining(['demo', 'fns', 'one']))

    await client.deleteLibrary('fns')
    await client.deleteLibrary('one')
    expect((await client.listLibraries()).map((entry) => entry.name)).not.toContain('fns')
    await client.health()
    const ready = await client.ready()
    expect(ready).toMatchObject({ status: 'ready', failedIndexes: [] })
    expect(ready.libraries).toContain('demo')
    expectMatchesOpenApi(CLIENT_OPERATIONS.ready, 200, ready)
    expectMatchesOpenApi(CLIENT_OPERATIONS.components, 200, await client.components())
    const metrics = await client.metrics()
    expect(metrics).toMatch(/^toolsel_library_tools\{library="demo"\} \d+$/m)
    expect(metrics).toContain('method="POST",route="/v1/select-tools",status="200"')
  })

  it('computes planner and selector rewards', async () => {
    const planner = await client.plannerRewards({
      instruction: 'Text Bob that I am late',
      gold: ['sms.send_sms'],
      completions: ['1. Send an SMS text message to Bob'],
    })
    expect(planner.rewards).toHaveLength(1)
    expect(planner.rewards[0].reward).toBeGreaterThan(0)
    expectMatchesOpenApi(CLIENT_OPERATIONS.plannerRewards, 200, planner)
    const selector = await client.selectorRewards({
      gold: 'sms.send_sms',
      completions: ['sms.send_sms', 'mail.send_email'],
    })
    expect(selector.rewards.map((entry) => entry.reward)).toEqual([1, 0])
    expectMatchesOpenApi(CLIENT_OPERATIONS.selectorRewards, 200, selector)
  })

  it("throws the service's errors as ToolselClientError with code and status", async () => {
    const error = await client.getLibrary('nope').catch((caught: unknown) => caught)
    expect(error).toBeInstanceOf(ToolselClientError)
    expect(error).toMatchObject({ code: 'UNKNOWN_LIBRARY', status: 404 })
    const invalid = await client.select({ instruction: '' }).catch((caught: unknown) => caught)
    expect(invalid).toMatchObject({ code: 'INVALID_INPUT', status: 400 })
    const duplicate = await client
      .putLibrary('dup', [
        { name: 'a', description: 'x' },
        { name: 'a', description: 'y' },
      ])
      .catch((caught: unknown) => caught)
    expect(duplicate).toMatchObject({ code: 'DUPLICATE_TOOL_ID', status: 400 })
  })
})

describe('ToolselClient failures before an answer', () => {
  let silent: Server
  let silentUrl: string

  beforeAll(async () => {
    // Accepts connections and never answers: what a hung service looks like.
    silent = createServer(() => {})
    await new Promise<void>((resolve) => silent.listen(0, '127.0.0.1', resolve))
    const address = silent.address() as { port: number }
    silentUrl = `http://127.0.0.1:${address.port}`
  })

  afterAll(async () => {
    silent.closeAllConnections()
    await new Promise((resolve) => silent.close(resolve))
  })

  it('times out with CLIENT_TIMEOUT', async () => {
    const hung = new ToolselClient({ baseUrl: silentUrl, timeoutMs: 200 })
    const error = await hung.select('anything').catch((caught: unknown) => caught)
    expect(error).toMatchObject({ code: 'CLIENT_TIMEOUT' })
    expect((error as Error).message).toContain('took longer than 200 ms')
  })

  it("stops with CLIENT_ABORTED when the caller's signal aborts", async () => {
    const hung = new ToolselClient({ baseUrl: silentUrl })
    const controller = new AbortController()
    const pending = hung.search('anything', { signal: controller.signal })
    setTimeout(() => controller.abort(), 50)
    await expect(pending).rejects.toMatchObject({ code: 'CLIENT_ABORTED' })
  })

  it('reports NETWORK when nothing listens, and rejects a base URL that is not http(s)', async () => {
    const closed = new ToolselClient({ baseUrl: 'http://127.0.0.1:9' })
    await expect(closed.health()).rejects.toMatchObject({ code: 'NETWORK' })
    expect(() => new ToolselClient({ baseUrl: 'localhost:8080' })).toThrow(
      'baseUrl must be an http(s) URL',
    )
  })

  it('sends the API key as a bearer token', async () => {
    let seen: string | undefined
    const fake: typeof fetch = async (_url, init) => {
      seen = new Headers(init?.headers).get('authorization') ?? undefined
      return new Response('', { status: 200 })
    }
    // A key read from a file, its line break last: fetch drops it. One it can't send is refused
    // at construction, unquoted (before, each call was NETWORK "… \"Bearer <key>\" is an invalid
    // header value …; is toolsel serving at …?").
    for (const [apiKey, sent] of [
      ['k-123', 'Bearer k-123'],
      ['k-456\n', 'Bearer k-456'],
    ]) {
      await new ToolselClient({ baseUrl: 'http://toolsel.test', apiKey, fetch: fake }).health()
      expect(seen).toBe(sent)
    }
    for (const apiKey of ['secret key', 'secret\nkey', 'secret-caf\u00e9', 'secret-\u2026']) {
      const refused = (() => {
        try {
          new ToolselClient({ baseUrl: 'http://toolsel.test', apiKey, fetch: fake })
        } catch (error) {
          return error as Error
        }
      })()
      expect(refused).toBeInstanceOf(TypeError)
      expect(refused?.message).toContain('API keys are visible ASCII')
      expect(refused?.message).not.toContain('secret')
    }
  })
})
