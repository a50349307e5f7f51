/**
 * The TypeScript client and `toolsel libraries --server` pointed at a hostile or wrong URL (real
 * HTTP servers started here): redirects must not carry the API key anywhere, and an answer that
 * never ends, is too large, or drips must fail with a named error without being read whole.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { ToolselClient } from '../../src/client/index.ts'
import { runCli } from '../cli/run-cli.ts'
import {
  startHostileServer,
  startRecordingServer,
  type HostileServer,
} from '../helpers/hostile-server.ts'
import { failure } from '../helpers/client-failure.ts'

let hostile: HostileServer
let target: Awaited<ReturnType<typeof startRecordingServer>>

beforeAll(async () => {
  target = await startRecordingServer()
  hostile = await startHostileServer(target.url)
})

afterAll(async () => {
  await hostile?.close()
  await target?.close()
})

const client = (attack: string, options: { maxResponseBytes?: number; timeoutMs?: number } = {}) =>
  new ToolselClient({ baseUrl: `${hostile.url}/${attack}`, apiKey: 'sk-secret', ...options })

describe('redirects: the API key never follows one', () => {
  for (const status of [302, 307, 308]) {
    it(`a ${status} to another origin is an error naming the Location; nothing reaches it`, async () => {
      const before = target.requests.length
      const error = await failure(client(`redirect-${status}`).listLibraries())
      expect(error.code).toBe('BAD_RESPONSE')
      expect(error.status).toBe(status)
      expect(error.message).toContain(`${target.url}/v1/libraries`)
      // A PUT with a body (307/308 resend it) is refused the same way.
      await failure(client(`redirect-${status}`).putLibrary('x', [{ name: 'a', description: 'b' }]))
      expect(target.requests.slice(before)).toEqual([])
    })
  }

  it('a same-origin redirect is refused too (the base URL is what to fix)', async () => {
    const error = await failure(client('redirect-same-origin').listLibraries())
    expect(error.code).toBe('BAD_RESPONSE')
    expect(error.message).toContain('/elsewhere/v1/libraries')
  })

  it('toolsel libraries --server with TOOLSEL_API_KEY: exit 1, the Location named, no key sent', async () => {
    const before = target.requests.length
    const { main } = await import('../../src/main.ts')
    const stderr: string[] = []
    const code = await main(['libraries', 'list', '--server', `${hostile.url}/redirect-307`], {
      stdout: () => {},
      stderr: (text) => stderr.push(text),
      env: { TOOLSEL_API_KEY: 'sk-secret' },
    })
    expect(code).toBe(1)
    expect(stderr.join('')).toContain(`redirect`)
    expect(stderr.join('')).toContain(`${target.url}/v1/libraries`)
    expect(target.requests.slice(before)).toEqual([])
  })
})

describe('unbounded answers: read up to maxResponseBytes, then BAD_RESPONSE', () => {
  it('a Content-Length of 10 GB is refused before its body is read', async () => {
    const error = await failure(
      client('huge-length', { maxResponseBytes: 1024 ** 2 }).listLibraries(),
    )
    expect(error.code).toBe('BAD_RESPONSE')
    expect(error.message).toMatch(/larger than 1048576 bytes/)
    expect(error.message).toContain('maxResponseBytes')
  })

  it('an endless chunked body is cut at the limit (the server stops writing soon after)', async () => {
    const error = await failure(client('endless', { maxResponseBytes: 1024 ** 2 }).listLibraries())
    expect(error.code).toBe('BAD_RESPONSE')
    expect(error.message).toMatch(/larger than 1048576 bytes/)
    // Socket buffers on both sides hold a few MiB at most; the client did not read on.
    expect(hostile.written()).toBeLessThan(64 * 1024 ** 2)
  })

  it('the default limit (64 MiB) applies with no option', async () => {
    const error = await failure(client('endless').listLibraries())
    expect(error.code).toBe('BAD_RESPONSE')
    expect(error.message).toMatch(/larger than 67108864 bytes/)
    expect(hostile.written()).toBeLessThan(128 * 1024 ** 2)
  })

  it('an endless error body is cut at 1 MiB (error bodies are small), BAD_RESPONSE with the status', async () => {
    const error = await failure(client('endless-error').listLibraries())
    expect(error.code).toBe('BAD_RESPONSE')
    expect(error.status).toBe(500)
    expect(error.message).toMatch(/larger than 1048576 bytes/)
    expect(hostile.written()).toBeLessThan(64 * 1024 ** 2)
  })

  it('the time limit covers the body: a body that drips a byte every 50 ms is CLIENT_TIMEOUT', async () => {
    const error = await failure(client('drip', { timeoutMs: 600 }).listLibraries())
    expect(error.code).toBe('CLIENT_TIMEOUT')
  })

  it('toolsel libraries --server against an endless answer: a named error, exit 1', async () => {
    const { code, stderr } = await runCli([
      'libraries',
      'list',
      '--server',
      `${hostile.url}/endless`,
    ])
    expect(code).toBe(1)
    expect(stderr).toMatch(/larger than 67108864 bytes/)
  })

  it('a bad maxResponseBytes is refused when the client is made', () => {
    expect(() => new ToolselClient({ baseUrl: 'http://x', maxResponseBytes: 0 })).toThrow(
      /maxResponseBytes/,
    )
  })
})
