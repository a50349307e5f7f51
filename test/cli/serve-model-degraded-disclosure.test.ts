/**
 * What `/readyz` `degraded` shows of a failing model endpoint to whom, with API keys configured.
 * The planner and selector serve every library, and a failure's message quotes the endpoint's
 * answer: here a hostile or careless OpenAI-compatible endpoint answers 400 echoing the prompt's
 * last message (a request's instruction, for whichever library) and the Authorization header.
 * Without a key: the status alone. A read key, limited to another library or to none: the
 * entries, without their messages (before round 39 the limited one read the other library's
 * instruction and tool candidates; before round 40 the one limited to none read another
 * caller's instruction). The admin key: the message, the API key hidden. Real HTTP: a serve
 * process, an endpoint.
 */
import { createServer, type Server } from 'node:http'
import type { AddressInfo } from 'node:net'
import { mkdtemp, rm, writeFile } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { DEGRADED_MESSAGE_HIDDEN } from '../../src/server/routes/health-routes.ts'
import { startServe, type RunningServe } from '../helpers/start-serve.ts'

const API_KEY = 'sk-endpoint-key-0123456789'
const ADMIN_KEY = 'admin-key-0123456789abcdef'
const OTHER_TENANT = 'tenant-b-key-0123456789abcdef'
const FULL_READER = 'full-reader-key-0123456789abc'
const INSTRUCTION = 'wire 5000 dollars to the account of Ann Example'

let endpoint: Server | undefined
let running: RunningServe | undefined
let configDir: string | undefined
beforeAll(async () => {
  endpoint = createServer(async (request, response) => {
    let body = ''
    for await (const chunk of request) body += chunk
    response.writeHead(request.url?.endsWith('/models') ? 200 : 400, {
      'content-type': 'application/json',
    })
    if (request.url?.endsWith('/models')) {
      response.end(JSON.stringify({ object: 'list', data: [{ id: 'fake', object: 'model' }] }))
      return
    }
    const messages = (JSON.parse(body) as { messages: Array<{ content: string }> }).messages
    const prompt = String(messages.at(-1)?.content).slice(0, 2000)
    response.end(
      JSON.stringify({
        error: { message: `rejected (${request.headers.authorization}): ${prompt}` },
      }),
    )
  })
  await new Promise<void>((resolve) => endpoint!.listen(0, '127.0.0.1', resolve))
  const port = (endpoint.address() as AddressInfo).port
  configDir = await mkdtemp(join(tmpdir(), 'toolsel-degraded-'))
  const config = join(configDir, 'config.json')
  await writeFile(
    config,
    JSON.stringify({
      auth: {
        adminKey: ADMIN_KEY,
        readKeys: [{ key: OTHER_TENANT, name: 'tenant-b', libraries: ['other'] }, FULL_READER],
      },
    }),
  )
  running = await startServe(
    ['--config', config, '--planner', 'llm:openai:fake', '--selector', 'llm:openai:fake'],
    {
      savedDemo: true,
      env: {
        TOOLSEL_OPENAI_BASE_URL: `http://127.0.0.1:${port}/v1`,
        TOOLSEL_OPENAI_API_KEY: API_KEY,
      },
    },
  )
})
afterAll(async () => {
  await running?.stop()
  await new Promise((resolve) => (endpoint ? endpoint.close(resolve) : resolve(undefined)))
  if (configDir) await rm(configDir, { recursive: true, force: true })
})

async function readyz(key?: string): Promise<{ text: string; body: Record<string, unknown> }> {
  const response = await fetch(`${running!.url}/readyz`, {
    headers: key ? { authorization: `Bearer ${key}` } : {},
  })
  expect(response.status).toBe(200)
  const text = await response.text()
  return { text, body: JSON.parse(text) as Record<string, unknown> }
}

describe('/readyz degraded when the endpoint echoes the prompt and the key', () => {
  it('shows the messages only to the admin key, without the API key', async () => {
    const selected = await fetch(`${running!.url}/v1/select-tools`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', authorization: `Bearer ${ADMIN_KEY}` },
      body: JSON.stringify({ instruction: INSTRUCTION }),
    })
    expect(selected.status).toBe(200)
    const selection = await selected.text()
    expect(selection).toContain('HTTP 400')
    expect(selection).not.toContain(API_KEY)

    const anonymous = await readyz()
    expect(anonymous.body).toEqual({ status: 'ready' })

    const tenant = await readyz(OTHER_TENANT)
    const limited = tenant.body.degraded as Array<Record<string, unknown>>
    expect(limited.map(({ stage, code, status }) => ({ stage, code, status }))).toEqual([
      { stage: 'planner', code: 'MODEL_CALL_FAILED', status: 400 },
      { stage: 'selector', code: 'MODEL_CALL_FAILED', status: 400 },
    ])
    for (const entry of limited) expect(entry.message).toBe(DEGRADED_MESSAGE_HIDDEN)
    expect(tenant.text).not.toContain('Ann Example')
    expect(tenant.text).not.toContain(API_KEY)

    // A read key limited to none may use every library, not read other callers' requests.
    const reader = await readyz(FULL_READER)
    const hidden = reader.body.degraded as Array<Record<string, unknown>>
    expect(hidden.map(({ stage, status }) => ({ stage, status }))).toEqual([
      { stage: 'planner', status: 400 },
      { stage: 'selector', status: 400 },
    ])
    for (const entry of hidden) expect(entry.message).toBe(DEGRADED_MESSAGE_HIDDEN)
    expect(reader.text).not.toContain('Ann Example')
    expect(reader.text).not.toContain(API_KEY)

    const admin = await readyz(ADMIN_KEY)
    const full = admin.body.degraded as Array<Record<string, unknown>>
    expect(full).toHaveLength(2)
    expect(String(full[0].message)).toMatch(/HTTP 400: .*rejected \(Bearer \*\*\*\)/)
    expect(admin.text).toContain('Ann Example')
    expect(admin.text).not.toContain(API_KEY)
  })
})
