import type { Client } from '@modelcontextprotocol/sdk/client/index.js'
import { mkdtemp } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { call, dataOf, errorOf, startToolsel, type Harness } from './fixtures/toolsel-harness.ts'

interface Hit {
  id: string
  name: string
  server?: string
  description: string
  score: number
}

describe('MCP over Streamable HTTP at /mcp', () => {
  let harness: Harness
  let client: Client

  beforeAll(async () => {
    harness = await startToolsel({ log: { level: 'silent' } })
    client = await harness.connect()
  })
  afterAll(() => harness.close())

  it('lists the three iterative-loading tools with input and output schemas', async () => {
    const { tools } = await client.listTools()
    expect(tools.map((tool) => tool.name)).toEqual([
      'search_tools',
      'get_tool_schemas',
      'select_tools',
    ])
    for (const tool of tools) {
      expect(tool.description).toMatch(/get_tool_schemas|search_tools/)
      expect(tool.outputSchema?.type).toBe('object')
    }
    expect(client.getInstructions()).toMatch(/search_tools.*get_tool_schemas/s)
  })

  it('search_tools returns ids, one-line descriptions and scores, without schemas', async () => {
    const result = await call(client, 'search_tools', {
      query: 'post a message to a Slack channel',
      k: 3,
    })
    const data = dataOf<{ library: string; tools: Hit[] }>(result)
    expect(data.library).toBe('demo')
    expect(data.tools).toHaveLength(3)
    expect(data.tools[0]).toMatchObject({ id: 'slack.post_message', server: 'slack' })
    expect(data.tools[0]).not.toHaveProperty('inputSchema')
    expect(data.tools[0].description).not.toContain('\n')
    expect(data.tools[0].score).toBeGreaterThanOrEqual(data.tools[1].score)
    // The text content is the same payload, for models that read text only.
    const [text] = result.content
    expect(text.type === 'text' && JSON.parse(text.text)).toEqual(result.structuredContent)
  })

  it('get_tool_schemas returns full input schemas in request order', async () => {
    const data = dataOf<{ tools: Array<{ id: string; inputSchema: { required?: string[] } }> }>(
      await call(client, 'get_tool_schemas', {
        ids: ['weather.get_weather_forecast', 'slack.post_message'],
      }),
    )
    expect(data.tools.map((tool) => tool.id)).toEqual([
      'weather.get_weather_forecast',
      'slack.post_message',
    ])
    expect(data.tools[1].inputSchema).toMatchObject({
      type: 'object',
      required: ['channel', 'text'],
    })
  })

  it("get_tool_schemas and select_tools return the tools in a model API's shape (toolFormat)", async () => {
    // The SDK client checks structuredContent against each tool's outputSchema.
    const schemas = dataOf<{ tools: unknown[]; toolIds: Record<string, string> }>(
      await call(client, 'get_tool_schemas', {
        ids: ['slack.post_message', 'sms.send_sms'],
        toolFormat: 'anthropic',
      }),
    )
    expect(schemas.tools).toEqual([
      {
        name: 'slack--post_message',
        description: expect.any(String),
        input_schema: expect.objectContaining({ required: ['channel', 'text'] }),
      },
      { name: 'sms--send_sms', description: expect.any(String), input_schema: expect.any(Object) },
    ])
    expect(schemas.toolIds).toEqual({
      'slack--post_message': 'slack.post_message',
      'sms--send_sms': 'sms.send_sms',
    })
    for (const format of ['openai', 'openai-responses'] as const) {
      const selected = dataOf<{ tools: Array<Record<string, unknown>>; toolIds: object }>(
        await call(client, 'select_tools', {
          instruction: 'text Bob that I am late',
          toolFormat: format,
        }),
      )
      expect(selected.tools[0]).toMatchObject(
        format === 'openai'
          ? { type: 'function', function: { name: 'sms--send_sms' } }
          : { type: 'function', name: 'sms--send_sms', strict: false },
      )
      expect(selected.toolIds).toEqual({ 'sms--send_sms': 'sms.send_sms' })
    }
    // Without toolFormat (or with toolsel) nothing changes: no toolIds.
    const plain = dataOf<object>(
      await call(client, 'get_tool_schemas', { ids: ['sms.send_sms'], toolFormat: 'toolsel' }),
    )
    expect(plain).not.toHaveProperty('toolIds')
    const bad = errorOf(
      await call(client, 'get_tool_schemas', { ids: ['sms.send_sms'], toolFormat: 'gemini' }),
    )
    expect(bad.code).toBe('INVALID_INPUT')
    expect(bad.message).toContain('toolFormat')
  })

  it('get_tool_schemas fails with UNKNOWN_TOOL listing every unknown id', async () => {
    const error = errorOf(
      await call(client, 'get_tool_schemas', { ids: ['slack.post_message', 'slack.nope', 'x.y'] }),
    )
    expect(error.code).toBe('UNKNOWN_TOOL')
    expect(error.message).toContain('"slack.nope", "x.y"')
    expect(error.message).toContain('search_tools')
    expect(error.details).toEqual({ library: 'demo', ids: ['slack.nope', 'x.y'] })
    // A tool's name instead of its id: the id is named.
    const named = errorOf(await call(client, 'get_tool_schemas', { ids: ['send_sms'] }))
    expect(named.message).toContain('Did you mean "sms.send_sms"?')
  })

  it('select_tools answers with the chosen tools, their schemas and the steps', async () => {
    const data = dataOf<{
      tools: Array<{ id: string; inputSchema: object }>
      steps: Array<{ text: string; selected: string | null; alternatives: string[] }>
    }>(
      await call(client, 'select_tools', {
        instruction: 'Get the weather forecast for Paris, and email the forecast to Ann',
      }),
    )
    // The default learned selector takes the forecast; for this short two-clause request it
    // judges "email the forecast to Ann" too uncertain (see bench/README, demo suite).
    expect(data.tools.map((tool) => tool.id)).toEqual(['weather.get_weather_forecast'])
    expect(data.tools[0].inputSchema).toMatchObject({ type: 'object' })
    // Two clauses and the whole instruction, which the learned selector also reads.
    expect(data.steps).toHaveLength(3)
    expect(data.steps[0].alternatives.length).toBeGreaterThan(0)
    expect(data.steps[0].alternatives).not.toContain(data.steps[0].selected)
  })

  it('select_tools takes the /v1 options: k bounds the candidates of every step', async () => {
    type Steps = { steps: Array<{ selected: string | null; alternatives: string[] }> }
    const instruction = 'Get the weather forecast for Paris, and email the forecast to Ann'
    const wide = dataOf<Steps>(await call(client, 'select_tools', { instruction }))
    expect(wide.steps.some((step) => step.alternatives.length === 3)).toBe(true)
    for (const k of [1, 2, 3]) {
      const data = dataOf<Steps>(await call(client, 'select_tools', { instruction, k }))
      // Two clauses and the whole instruction (the default learned selector reads it too).
      expect(data.steps).toHaveLength(3)
      for (const step of data.steps) {
        expect(step.alternatives.length + (step.selected === null ? 0 : 1)).toBeLessThanOrEqual(k)
      }
    }
    const k1 = dataOf<Steps>(await call(client, 'select_tools', { instruction, k: 1 }))
    // With k = 1 a step that selected its one candidate has no alternative left.
    for (const step of k1.steps) if (step.selected !== null) expect(step.alternatives).toEqual([])
    expect(k1.steps.some((step) => step.selected !== null)).toBe(true)
  })

  it('select_tools takes planner, selector, tau and retriever ids, and names a bad one', async () => {
    type Steps = { steps: Array<{ text: string; selected: string | null }> }
    const instruction = 'Get the weather forecast for Paris, and email the forecast to Ann'
    const unplanned = dataOf<Steps>(
      await call(client, 'select_tools', { instruction, planner: 'none', selector: 'top1' }),
    )
    expect(unplanned.steps.map((step) => step.text)).toEqual([instruction])
    const strict = dataOf<Steps>(await call(client, 'select_tools', { instruction, tau: 1000 }))
    expect(strict.steps.every((step) => step.selected === null)).toBe(true)
    const error = errorOf(await call(client, 'select_tools', { instruction, retriever: 'dense' }))
    expect(error.code).toBe('UNKNOWN_COMPONENT')
    expect(error.message).toContain('has no "dense" retriever (available: bm25)')
    const search = errorOf(await call(client, 'search_tools', { query: 'x', retriever: 'nope' }))
    expect(search).toMatchObject({ code: 'INVALID_INPUT' })
    expect(search.message).toContain(
      '"retriever": no retriever kind "nope" (available: bm25, dense, hybrid, regex)',
    )
  })

  it('an unknown library is an UNKNOWN_LIBRARY tool error naming the loaded ones', async () => {
    const error = errorOf(await call(client, 'search_tools', { query: 'x', library: 'nope' }))
    expect(error.code).toBe('UNKNOWN_LIBRARY')
    expect(error.message).toContain('available: demo')
  })

  it('invalid arguments are INVALID_INPUT errors in the shape and words of the HTTP API', async () => {
    // They were the MCP SDK's own text ("MCP error -32602: Input validation error: …" and zod's
    // issues), not the {error: {code, message}} body of every other tool error.
    const empty = errorOf(await call(client, 'search_tools', { query: '' }))
    expect(empty).toMatchObject({ code: 'INVALID_INPUT' })
    expect(empty.message).toMatch(/^Invalid arguments for search_tools: "query": Too small: .*1/)
    const typed = errorOf(await call(client, 'search_tools', { query: 'x', k: 'three' }))
    expect(typed.message).toBe(
      'Invalid arguments for search_tools: "k": Invalid input: expected number, received string.',
    )
    expect(typed.details).toMatchObject({ issues: [{ path: ['k'] }] })
    const missing = errorOf(await call(client, 'get_tool_schemas', {}))
    expect(missing.code).toBe('INVALID_INPUT')
    expect(missing.message).toContain('"ids": Invalid input: expected array, received undefined')
    const tooMany = errorOf(
      await call(client, 'select_tools', { instruction: 'x'.repeat(100_000), k: 0 }),
    )
    expect(tooMany.message).toMatch(/"instruction": Too big.*; "k": Too small/)
    expect(tooMany.message.length).toBeLessThan(4_100)
  })

  it('refuses unknown argument keys, naming the ones the tool takes', async () => {
    // A model that writes "limit" for "k" got 10 results and no hint.
    const result = errorOf(await call(client, 'search_tools', { query: 'send an email', limit: 2 }))
    expect(result).toMatchObject({
      code: 'INVALID_INPUT',
      message:
        'Invalid arguments for search_tools: Unknown argument "limit": search_tools takes query, k, library, retriever.',
    })
    const schemas = errorOf(
      await call(client, 'get_tool_schemas', { ids: ['mail.send_email'], id: 'x' }),
    )
    expect(schemas.message).toContain('Unknown argument "id": get_tool_schemas takes ids, library')
    const { tools } = await client.listTools()
    for (const tool of tools) expect(tool.inputSchema.additionalProperties, tool.name).toBe(false)
    // tools/list shows the schema the arguments are checked with (not the SDK's pass-through one).
    expect(tools[0].inputSchema).toMatchObject({
      type: 'object',
      required: ['query'],
      properties: { query: { type: 'string', minLength: 1 }, k: { type: 'integer', minimum: 1 } },
    })
  })

  it('a tool error message quotes a long id cut, as the HTTP bodies', async () => {
    // As long as an id may be (MAX_TOOL_ID_CHARS, 500).
    const error = errorOf(await call(client, 'get_tool_schemas', { ids: ['x'.repeat(500)] }))
    expect(error.code).toBe('UNKNOWN_TOOL')
    // The message quoted the whole id (and details repeated it): 20,000+ characters. Now the id
    // is cut at 64 (shownName); boundedMessage still cuts any message at 4,000.
    expect(error.message.length).toBeLessThan(400)
    expect(error.message).toContain(`has no tool "${'x'.repeat(64)}"…`)
  })

  it('get_tool_schemas refuses an id longer than 500 characters, naming it and the limit', async () => {
    const long = `\u202e${'x'.repeat(10_000)}`
    const error = errorOf(
      await call(client, 'get_tool_schemas', { ids: ['mail.send_email', long] }),
    )
    // Was: UNKNOWN_TOOL after the library was searched for it (ids had no length bound).
    expect(error.code).toBe('INVALID_INPUT')
    expect(error.message).toContain(
      `tool id "\\u202e${'x'.repeat(63)}"… is 10001 characters long; a tool id has at most 500`,
    )
    expect(error.message.length).toBeLessThan(400)
    const { tools } = await client.listTools()
    const schemas = tools.find((tool) => tool.name === 'get_tool_schemas')!
    expect(schemas.inputSchema.properties?.ids).toMatchObject({
      items: { type: 'string', minLength: 1, maxLength: 500 },
    })
  })

  it('counts the JSON values of a body before parsing it: 413 past 100,000, -32700 for bad JSON', async () => {
    // The SDK parsed any body under its 4 MiB limit in one piece (3.9 MB of `1,`: 91-239 ms).
    const post = (body: string, contentType = 'application/json') =>
      fetch(`${harness.baseUrl}/mcp`, {
        method: 'POST',
        headers: {
          'content-type': contentType,
          accept: 'application/json, text/event-stream',
          'mcp-protocol-version': '2025-03-26',
        },
        body,
      })
    const call = (args: string) =>
      `{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"search_tools","arguments":${args}}}`
    const numbers = await post(call(`{"query":"mail","pad":[${'1,'.repeat(100_000)}1]}`))
    expect(numbers.status).toBe(413)
    expect(await numbers.json()).toMatchObject({
      jsonrpc: '2.0',
      error: { code: -32000, message: expect.stringMatching(/more than 100,000 JSON values/) },
      id: null,
    })
    const invalid = await post(`${call('{"query":"mail"}')}x`)
    expect(invalid.status).toBe(400)
    expect(await invalid.json()).toMatchObject({ error: { code: -32700 } })
    // Still the SDK's own answers: over its 4 MiB limit, and a body that is not JSON.
    expect((await post(call(`{"query":"${'x'.repeat(4_200_000)}"}`))).status).toBe(413)
    expect((await post('query=mail', 'text/plain')).status).toBe(415)
    // Commas inside strings are not values; a body within the limits is answered.
    const fine = await post(call(`{"query":"mail ${','.repeat(120_000)}","k":2}`))
    expect(fine.status).toBe(200)
    expect(JSON.stringify(await fine.json())).toContain('"result"')
  })

  it('answers GET with 405: the endpoint is stateless', async () => {
    const response = await fetch(`${harness.baseUrl}/mcp`, {
      headers: { accept: 'text/event-stream' },
    })
    expect(response.status).toBe(405)
    expect(response.headers.get('allow')).toBe('POST')
  })
})

describe('select_tools on a library with usage examples', () => {
  it('says when the examples answered, so a step selection outside tools is explained', async () => {
    const indexDir = await mkdtemp(join(tmpdir(), 'toolsel-mcp-examples-'))
    const harness = await startToolsel({ log: { level: 'silent' }, library: { indexDir } })
    try {
      const tools = [
        { name: 'get_weather', description: 'Get the weather for a city' },
        { name: 'send_email', description: 'Send an email' },
      ]
      const put = await fetch(`${harness.baseUrl}/v1/libraries/mine`, {
        method: 'PUT',
        headers: { 'content-type': 'application/json' },
        body: JSON.stringify(tools),
      })
      expect(put.status).toBe(201)
      const examples = await fetch(`${harness.baseUrl}/v1/libraries/mine/examples`, {
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body: JSON.stringify({
          examples: [
            { instruction: 'weather in Rome', tools: ['get_weather'] },
            { instruction: 'mail Bob', tools: ['send_email'] },
          ],
        }),
      })
      expect(examples.status).toBe(200)
      const instruction = 'email Ann the weather in Paris'
      const http = (await (
        await fetch(`${harness.baseUrl}/v1/select-tools`, {
          method: 'POST',
          headers: { 'content-type': 'application/json' },
          body: JSON.stringify({ instruction, library: 'mine' }),
        })
      ).json()) as { examples?: unknown }
      expect(http.examples).toBeDefined()
      const client = await harness.connect()
      const result = dataOf<{ examples?: unknown }>(
        await call(client, 'select_tools', { instruction, library: 'mine' }),
      )
      // The HTTP answer had it; the MCP one did not.
      expect(result.examples).toEqual(http.examples)
    } finally {
      await harness.close()
    }
  })
})
