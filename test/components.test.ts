import { createServer, type Server } from 'node:http'
import type { AddressInfo } from 'node:net'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { COMPONENT_CACHE_SIZE, createComponents } from '../src/components.ts'
import { parseConfig } from '../src/config/load-config.ts'
import { ToolLibrary } from '../src/library/tool-library.ts'
import { createMemoryLogger } from '../src/log.ts'
import { main } from '../src/main.ts'
import { selectTools } from '../src/pipeline.ts'
import { buildIndexedLibrary } from '../src/store/library-lifecycle.ts'
import { SAMPLE_TOOLS } from './helpers/sample-tools.ts'
import { TINY_MODELS_MISSING, tinyModel } from './models/language/tiny-models.ts'

const config = parseConfig({})

describe('component lookup', () => {
  it('builds the embedded components and reuses instances', () => {
    const components = createComponents(config, createMemoryLogger())
    expect(components.planner().name).toBe('rule')
    expect(components.planner('none').name).toBe('none')
    expect(components.selector().name).toBe('learned')
    expect(components.selector('top1').name).toBe('top1')
    expect(components.planner('rule')).toBe(components.planner('rule'))
    expect(components.selector('learned')).toBe(components.selector('learned'))
  })

  it('names what exists when an id is unknown', () => {
    const components = createComponents(config, createMemoryLogger())
    expect(() => components.planner('magic')).toThrow(
      'No such planner: "magic" (available: rule, none, llm:onnx:<dir>, llm:openai:<model>).',
    )
    expect(() => components.selector('best')).toThrow(
      'No such selector: "best" (available: top1, learned, llm:onnx:<dir>, llm:openai:<model>).',
    )
    expect(() => components.reranker('cross')).toThrow(
      'No such reranker: "cross" (available: identity).',
    )
    expect(() => components.selector('best')).toThrowError(
      expect.objectContaining({ code: 'UNKNOWN_COMPONENT' }),
    )
  })

  it('reports a model that fails to load from ready(), and retries on next use', async () => {
    const components = createComponents(config, createMemoryLogger())
    const planner = components.planner('llm:onnx:/nonexistent/model')
    expect(planner.name).toBe('llm(onnx:/nonexistent/model)')
    await expect(components.ready()).rejects.toMatchObject({ code: 'MODEL_LOAD_FAILED' })
    await new Promise((resolve) => setImmediate(resolve))
    expect(components.planner('llm:onnx:/nonexistent/model')).not.toBe(planner)
  })

  it('keeps at most COMPONENT_CACHE_SIZE ids besides the configured ones, least recently used out', () => {
    const components = createComponents(config, createMemoryLogger())
    const configured = components.planner()
    const kept = components.planner('rule:0')
    for (let index = 1; index < 1000; index += 1) {
      components.planner(`rule:${index}`)
      // Used again and again: stays the most recently used.
      expect(components.planner('rule:0')).toBe(kept)
    }
    const planners = components.states!().filter((entry) => entry.kind === 'planner')
    expect(planners).toHaveLength(COMPONENT_CACHE_SIZE + 1)
    expect(planners.map((entry) => entry.id)).toContain(config.plan.planner)
    expect(planners.map((entry) => entry.id)).toContain('rule:0')
    expect(planners.map((entry) => entry.id)).toContain('rule:999')
    expect(planners.map((entry) => entry.id)).not.toContain('rule:1')
    // The configured planner is never evicted: the same instance after 1,000 others.
    expect(components.planner()).toBe(configured)
    expect(planners.every((entry) => entry.state === 'loaded')).toBe(true)
  })

  it('needs a base URL for openai models', async () => {
    const components = createComponents(config, createMemoryLogger())
    components.selector('llm:openai:qwen3-8b')
    await expect(components.ready()).rejects.toMatchObject({
      code: 'INVALID_CONFIG',
      message: expect.stringContaining('TOOLSEL_OPENAI_BASE_URL'),
    })
  })
})

describe.skipIf(TINY_MODELS_MISSING)('LLM components on the tiny Qwen3 models', () => {
  it('runs the whole pipeline with an ONNX planner and selector, answering valid candidates only', async () => {
    const components = createComponents(config, createMemoryLogger())
    const planner = components.planner(`llm:onnx:${tinyModel('tiny-qwen3-planner')}`)
    const selector = components.selector(`onnx:${tinyModel('tiny-qwen3-selector')}`)
    await components.ready()
    const indexed = await buildIndexedLibrary(new ToolLibrary('sample', SAMPLE_TOOLS), config)
    const result = await selectTools(
      'What is the weather in Paris tomorrow, and email the forecast to Ann',
      {
        library: indexed.library,
        planner,
        retriever: indexed.retrievers.get('bm25')!,
        selector,
        k: 15,
        minScore: 0,
      },
    )
    // The tiny planner always answers this two-step plan; the tiny selector favours weather.get_forecast.
    expect(result.steps.map((step) => step.text)).toEqual([
      'get the weather forecast for Paris tomorrow',
      'email it to Ann',
    ])
    expect(result.steps[0].selected).toBe('weather.get_forecast')
    for (const step of result.steps) {
      if (step.selected !== null)
        expect(step.candidates.map((candidate) => candidate.id)).toContain(step.selected)
    }
    expect(result.components.planner).toBe('llm(onnx:tiny-qwen3-planner)')
    expect(result.components.selector).toBe('llm(onnx:tiny-qwen3-selector)')
    expect(result.usage.inputTokens).toBeGreaterThan(0)
    expect(result.usage.outputTokens).toBeGreaterThan(0)
  })

  it('falls back to the rule planner, visibly, when the model answers garbage', async () => {
    const components = createComponents(config, createMemoryLogger())
    const planner = components.planner(`llm:onnx:${tinyModel('tiny-qwen3-garbage')}`)
    const plan = await planner.plan('Find flights to Rome and book a hotel there.')
    expect(plan.planner).toBe('rule')
    expect(plan.steps).toEqual(['Find flights to Rome', 'book a hotel there'])
    expect(plan.fallback).toMatchObject({ stage: 'planner', to: 'rule', code: 'PLAN_UNPARSABLE' })
    expect(plan.fallback?.raw?.length).toBeGreaterThan(0)
  })

  it('runs from the command line: toolsel select --planner onnx:<dir> --selector onnx:<dir> --json', async () => {
    const output: string[] = []
    const code = await main(
      [
        'select',
        'What is the weather in Paris tomorrow, and email the forecast to Ann',
        '--planner',
        `onnx:${tinyModel('tiny-qwen3-planner')}`,
        '--selector',
        `onnx:${tinyModel('tiny-qwen3-selector')}`,
        '--json',
        '--log-level',
        'silent',
      ],
      { stdout: (text) => output.push(text), stderr: () => undefined, env: {} },
    )
    expect(code).toBe(0)
    const result = JSON.parse(output.join(''))
    expect(result.steps).toHaveLength(2)
    for (const step of result.steps) {
      const ids = step.candidates.map((candidate: { id: string }) => candidate.id)
      if (step.selected !== null) expect(ids).toContain(step.selected)
    }
    expect(result.components.planner).toBe('llm(onnx:tiny-qwen3-planner)')
  })
})

/** A minimal OpenAI-compatible server: plans with JSON, selects the first listed choice. */
function startChatServer(): Promise<Server> {
  const server = createServer((request, response) => {
    let body = ''
    request.on('data', (chunk: Buffer) => (body += chunk.toString()))
    request.on('end', () => {
      const payload = JSON.parse(body) as {
        response_format?: {
          json_schema?: { schema?: { properties?: { choice?: { enum?: string[] } } } }
        }
      }
      const choices = payload.response_format?.json_schema?.schema?.properties?.choice?.enum
      const content = choices ? JSON.stringify({ choice: choices[0] }) : '["send an email to Ann"]'
      response.setHeader('content-type', 'application/json')
      response.end(
        JSON.stringify({
          id: 'x',
          object: 'chat.completion',
          model: 'test',
          choices: [{ index: 0, finish_reason: 'stop', message: { role: 'assistant', content } }],
          usage: { prompt_tokens: 10, completion_tokens: 3, total_tokens: 13 },
        }),
      )
    })
  })
  return new Promise((resolve) => server.listen(0, '127.0.0.1', () => resolve(server)))
}

describe('LLM components behind an OpenAI-compatible server', () => {
  let server: Server
  beforeAll(async () => {
    server = await startChatServer()
  })
  afterAll(() => new Promise<void>((resolve) => server.close(() => resolve())))

  it('runs the pipeline with openai: planner and selector ids', async () => {
    const { port } = server.address() as AddressInfo
    const openaiConfig = parseConfig({
      models: { openai: { baseUrl: `http://127.0.0.1:${port}/v1` } },
    })
    const components = createComponents(openaiConfig, createMemoryLogger())
    const planner = components.planner('llm:openai:test')
    const selector = components.selector('llm:openai:test')
    await components.ready()
    const indexed = await buildIndexedLibrary(new ToolLibrary('sample', SAMPLE_TOOLS), openaiConfig)
    const result = await selectTools('Please send an email to Ann', {
      library: indexed.library,
      planner,
      retriever: indexed.retrievers.get('bm25')!,
      selector,
      k: 15,
      minScore: 0,
    })
    expect(result.steps.map((step) => step.text)).toEqual(['send an email to Ann'])
    const [step] = result.steps
    expect(step.candidates.map((candidate) => candidate.id)).toContain(step.selected)
    expect(result.components).toMatchObject({
      planner: 'llm(openai:test)',
      selector: 'llm(openai:test)',
    })
  })

  it('runs from the command line with an OpenAI-compatible server URL', async () => {
    const { port } = server.address() as AddressInfo
    const output: string[] = []
    const code = await main(
      [
        'select',
        'Please send an email to Ann',
        '--planner',
        'llm:openai:test',
        '--selector',
        'openai:test',
        '--json',
        '--tau',
        '0',
      ],
      {
        stdout: (text) => output.push(text),
        stderr: () => undefined,
        env: {
          TOOLSEL_OPENAI_BASE_URL: `http://127.0.0.1:${port}/v1`,
          TOOLSEL_LOG_LEVEL: 'silent',
        },
      },
    )
    expect(code).toBe(0)
    const result = JSON.parse(output.join(''))
    expect(result.components).toMatchObject({
      planner: 'llm(openai:test)',
      selector: 'llm(openai:test)',
    })
    const [step] = result.steps
    expect(step.text).toBe('send an email to Ann')
    expect(step.candidates.map((candidate: { id: string }) => candidate.id)).toContain(
      step.selected,
    )
  })
})
