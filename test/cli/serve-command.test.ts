import { spawn, type ChildProcess } from 'node:child_process'
import { once } from 'node:events'
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest'
import { ROOT, startServe, type RunningServe } from '../helpers/start-serve.ts'

let server: ChildProcess | undefined

afterEach(async () => {
  if (server && server.exitCode === null) server.kill('SIGKILL')
})

describe('toolsel serve', () => {
  // One server on the demo library for these two, in this order: the second stops it (a start
  // is seconds on a loaded machine).
  describe('on the demo library', () => {
    let demo: RunningServe
    beforeAll(async () => {
      demo = await startServe()
    }, 120_000)
    afterAll(async () => {
      await demo?.stop()
    })

    it('serves the demo library: the README request returns a tool for each request, with candidates', async () => {
      const { url } = demo
      expect((await fetch(`${url}/readyz`)).status).toBe(200)
      const response = await fetch(`${url}/v1/select-tools`, {
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body: JSON.stringify({
          instruction: 'What is the weather in Paris tomorrow, and email the forecast to Ann',
        }),
      })
      expect(response.status).toBe(200)
      const body = (await response.json()) as {
        tools: Array<{ id: string; parameters: unknown }>
        steps: Array<{ text: string; selected: string; candidates: Array<{ id: string }> }>
      }
      expect(body.tools.map((tool) => tool.id)).toEqual([
        'weather.get_weather_forecast',
        'mail.send_email',
      ])
      expect(body.tools.every((tool) => typeof tool.parameters === 'object')).toBe(true)
      // The two clauses and the whole instruction (read by the default learned selector).
      expect(body.steps).toHaveLength(3)
      for (const step of body.steps) expect(step.candidates.length).toBeGreaterThan(1)
    })

    it('shuts down gracefully on SIGTERM', async () => {
      const { url, logs, child } = demo
      const search = await fetch(`${url}/v1/search-tools`, {
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body: JSON.stringify({ query: 'send an email' }),
      })
      expect(search.status).toBe(200)
      child.kill('SIGTERM')
      const [code] = await once(child, 'exit')
      expect(code).toBe(0)
      expect(logs()).toContain('SIGTERM received')
      expect(logs()).toContain('Stopped')
    })
  })

  it('refuses to start on an unknown library, saying how to build it', async () => {
    const child = spawn(
      process.execPath,
      ['bin/toolsel.mjs', 'serve', '--port', '0', '--library', 'nope'],
      {
        cwd: ROOT,
        stdio: ['ignore', 'ignore', 'pipe'],
      },
    )
    let stderr = ''
    child.stderr.on('data', (chunk: Buffer) => (stderr += chunk.toString()))
    const [code] = await once(child, 'exit')
    expect(code).toBe(1)
    expect(stderr).toContain('error [UNKNOWN_LIBRARY]')
    expect(stderr).toContain('toolsel index <file> --name nope')
  })

  it('without a key listens on 127.0.0.1 only, and says so', async () => {
    let logs = ''
    server = spawn(process.execPath, ['bin/toolsel.mjs', 'serve', '--port', '0'], {
      cwd: ROOT,
      env: { ...process.env, TOOLSEL_HOST: '', TOOLSEL_ADMIN_KEY: '', TOOLSEL_PORT: '' },
      stdio: ['ignore', 'ignore', 'pipe'],
    })
    server.stderr!.on('data', (chunk: Buffer) => (logs += chunk.toString()))
    const deadline = Date.now() + 30_000
    while (!/Ready:/.test(logs)) {
      if (Date.now() > deadline || server.exitCode !== null)
        throw new Error(`serve did not start:\n${logs}`)
      await new Promise((resolve) => setTimeout(resolve, 50))
    }
    expect(logs).toMatch(/Listening on http:\/\/127\.0\.0\.1:\d+/)
    expect(logs).toContain('No API key configured (TOOLSEL_ADMIN_KEY): listening on 127.0.0.1 only')
  })

  it('refuses another address without a key unless --insecure-no-auth', async () => {
    const child = spawn(
      process.execPath,
      ['bin/toolsel.mjs', 'serve', '--port', '0', '--host', '0.0.0.0'],
      {
        cwd: ROOT,
        env: { ...process.env, TOOLSEL_ADMIN_KEY: '' },
        stdio: ['ignore', 'ignore', 'pipe'],
      },
    )
    let stderr = ''
    child.stderr.on('data', (chunk: Buffer) => (stderr += chunk.toString()))
    const [code] = await once(child, 'exit')
    expect(code).toBe(2)
    expect(stderr).toContain(
      'error [INVALID_CONFIG]: Refusing to listen on 0.0.0.0 without an API key',
    )
  })
})
