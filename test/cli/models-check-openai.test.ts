/**
 * `toolsel models check openai:<model>` asks the endpoint what `toolsel serve` asks at start-up
 * (GET <baseUrl>/models with the key, one shared probe) and says ok, refused, unknown-model,
 * status or unreachable with exit 0 or 1, over real HTTP (a local OpenAI-compatible server).
 * Before, it took `openai:fake` for a directory: "No such directory", exit 2.
 */
import { describe, expect, it } from 'vitest'
import { main } from '../../src/main.ts'
import { deadPort } from '../helpers/dead-port.ts'
import { useKeyEndpoint } from '../helpers/openai-key-endpoint.ts'

const KEY = 'sk-right-key-0123456789'

const endpoint = useKeyEndpoint(KEY)

async function check(spec: string, env: Record<string, string>, json = true) {
  const stdout: string[] = []
  const stderr: string[] = []
  const code = await main(['models', 'check', spec, ...(json ? ['--json'] : [])], {
    stdout: (text) => stdout.push(text),
    stderr: (text) => stderr.push(text),
    env,
  })
  const text = stdout.join('')
  return { code, text, stderr: stderr.join(''), report: json && text ? JSON.parse(text) : {} }
}

describe('toolsel models check openai:<model>', () => {
  it('is ok (exit 0) when the endpoint takes the key and lists the model, as serve asks', async () => {
    endpoint.seen.length = 0
    const env = { TOOLSEL_OPENAI_BASE_URL: `${endpoint.baseUrl}/v1`, TOOLSEL_OPENAI_API_KEY: KEY }
    const { code, text } = await check('openai:fake', env, false)
    expect(code).toBe(0)
    expect(text).toBe(
      `Endpoint: GET ${endpoint.baseUrl}/v1/models\nResult: ok: the endpoint accepts the key and serves "fake" (HTTP 200).\n`,
    )
    expect(endpoint.seen).toEqual([`GET /v1/models Bearer ${KEY}`])
    expect((await check('llm:openai:fake', env)).report).toMatchObject({ ok: true, result: 'ok' })
  })

  it('says refused (exit 1) for a wrong key, without printing the key', async () => {
    const { code, report, text } = await check('openai:fake', {
      TOOLSEL_OPENAI_BASE_URL: `${endpoint.baseUrl}/v1`,
      TOOLSEL_OPENAI_API_KEY: 'sk-wrong-key',
    })
    expect(code).toBe(1)
    expect(report).toMatchObject({ ok: false, result: 'refused', status: 401 })
    expect(report.message).toMatch(/refuses the API key: HTTP 401 \(.*Incorrect API key provided/)
    expect(text).not.toContain('sk-wrong-key')
  })

  it('says unknown-model (exit 1) for a name the endpoint does not list', async () => {
    const { code, report } = await check('openai:Qwen/Qwen3-8B', {
      TOOLSEL_OPENAI_BASE_URL: `${endpoint.baseUrl}/v1`,
      TOOLSEL_OPENAI_API_KEY: KEY,
    })
    expect(code).toBe(1)
    expect(report).toMatchObject({ result: 'unknown-model', models: ['fake'] })
    expect(report.message).toMatch(/lists no model "Qwen\/Qwen3-8B" \(it serves "fake"\)/)
  })

  it('says status (exit 1) for an endpoint without /models and unreachable for none', async () => {
    const missing = await check('openai:fake', {
      TOOLSEL_OPENAI_BASE_URL: `${endpoint.baseUrl}/nomodels/v1`,
      TOOLSEL_OPENAI_API_KEY: KEY,
    })
    expect(missing.code).toBe(1)
    expect(missing.report).toMatchObject({ result: 'status', status: 404 })
    const port = await deadPort()
    const down = await check('openai:fake', {
      TOOLSEL_OPENAI_BASE_URL: `http://127.0.0.1:${port}/v1`,
    })
    expect(down.code).toBe(1)
    expect(down.report).toMatchObject({ result: 'unreachable', status: 0 })
    expect(down.report.message).toMatch(/ECONNREFUSED/)
  })

  it('refuses (exit 2) a spec without a base URL to ask', async () => {
    const { code, stderr, text } = await check('openai:fake', {})
    expect(code).toBe(2)
    expect(text).toBe('')
    expect(stderr).toContain('TOOLSEL_OPENAI_BASE_URL')
  })
})
