/**
 * The TypeScript client against a real HTTPS endpoint with a private CA: a TLS-terminating Node
 * `https` proxy (a throwaway CA and a certificate for `localhost` made by `openssl` here) in front
 * of a real `toolsel serve`. Refused by default (Node's roots) with a message naming `ca`, trusted
 * with `ca`, refused for another host name even with `ca`; connections kept alive; the time, size
 * and abort behaviour as over HTTP. Needs openssl on PATH; without it it is skipped and says why.
 */
import { spawn } from 'node:child_process'
import { once } from 'node:events'
import { readFile } from 'node:fs/promises'
import { join } from 'node:path'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { ToolselClient } from '../../src/client/index.ts'
import { failure } from '../helpers/client-failure.ts'
import { opensslMissing, startHttpsProxy, type HttpsProxy } from '../helpers/https-proxy.ts'
import { ROOT } from '../helpers/start-serve.ts'

const skipped = opensslMissing()
let https: HttpsProxy | undefined
let ca = ''
let url = ''

const ids = (answer: { tools: Array<{ id: string }> }) => answer.tools.map((tool) => tool.id)

describe.skipIf(skipped !== undefined)(
  `the TypeScript client over HTTPS${skipped ? ` (skipped: ${skipped})` : ''}`,
  () => {
    beforeAll(async () => {
      https = await startHttpsProxy()
      ca = await readFile(join(https.dir, 'ca.pem'), 'utf8')
      url = `https://localhost:${https.port}`
    }, 120_000)

    afterAll(async () => {
      await https?.close()
    })

    it('refuses the private CA by default, naming the ca option', async () => {
      const error = await failure(new ToolselClient({ baseUrl: url }).listLibraries())
      expect(error.code).toBe('NETWORK')
      expect(error.message).toMatch(/SELF_SIGNED_CERT_IN_CHAIN|UNABLE_TO_VERIFY_LEAF_SIGNATURE/)
      expect(error.message).toContain('pass its CA as the ca option')
      expect(error.message).toContain('NODE_EXTRA_CA_CERTS')
    })

    it('trusts it with ca (text, bytes, a list); refuses another host name even then', async () => {
      const instruction = 'text Bob that I am late'
      for (const given of [ca, Buffer.from(ca), new Uint8Array(Buffer.from(ca)), [ca]]) {
        const client = new ToolselClient({ baseUrl: url, ca: given })
        expect(ids(await client.select(instruction))).toEqual(['sms.send_sms'])
      }
      const client = new ToolselClient({ baseUrl: url, ca })
      expect((await client.listLibraries()).map((library) => library.name)).toContain('demo')
      expect((await client.getTool('demo', 'sms.send_sms')).id).toBe('sms.send_sms')
      // A service error comes through as itself.
      const unknown = await failure(client.getLibrary('nope'))
      expect([unknown.code, unknown.status]).toEqual(['UNKNOWN_LIBRARY', 404])
      // The certificate is for localhost only.
      const other = new ToolselClient({ baseUrl: `https://127.0.0.1:${https!.port}`, ca })
      const error = await failure(other.listLibraries())
      expect(error.code).toBe('NETWORK')
      expect(error.message).toMatch(/ERR_TLS_CERT_ALTNAME_INVALID|not in the cert's list/)
      expect(error.message).toContain('certificate is for another host name')
    })

    it('keeps its TLS connections for many calls', async () => {
      const client = new ToolselClient({ baseUrl: url, ca })
      const before = https!.handshakes()
      // Calls one right after another: undici frees a connection a tick after its answer's body
      // has ended, so the second call, started within that tick, opens a second one (Node's
      // global fetch, the same undici, does so too); then both are reused.
      for (let call = 0; call < 10; call += 1) await client.search({ query: 'send an SMS', k: 3 })
      const first = https!.handshakes() - before
      expect(first).toBeGreaterThanOrEqual(1)
      expect(first).toBeLessThanOrEqual(2)
      for (let call = 0; call < 20; call += 1) await client.search({ query: 'send an SMS', k: 3 })
      expect(https!.handshakes() - before).toBe(first)
      // With a moment between calls, one connection serves them all.
      const spaced = new ToolselClient({ baseUrl: url, ca })
      const start = https!.handshakes()
      for (let call = 0; call < 10; call += 1) {
        await spaced.search({ query: 'send an SMS', k: 3 })
        await new Promise((resolve) => setTimeout(resolve, 5))
      }
      expect(https!.handshakes() - start).toBe(1)
    })

    it('the time limit, the size limit and an abort hold over TLS', async () => {
      const drip = new ToolselClient({ baseUrl: `${url}/drip`, ca, timeoutMs: 1000 })
      expect((await failure(drip.listLibraries())).code).toBe('CLIENT_TIMEOUT')
      const huge = new ToolselClient({ baseUrl: `${url}/huge`, ca, maxResponseBytes: 100_000 })
      expect((await failure(huge.listLibraries())).code).toBe('BAD_RESPONSE')
      const controller = new AbortController()
      const call = drip.listLibraries({ signal: controller.signal, timeoutMs: 30_000 })
      setTimeout(() => controller.abort(), 300)
      expect((await failure(call)).code).toBe('CLIENT_ABORTED')
    })

    it('NODE_EXTRA_CA_CERTS still trusts it without ca (the global fetch)', async () => {
      const script = `import { ToolselClient } from './src/client/index.ts'
const answer = await new ToolselClient({ baseUrl: process.argv[1] }).select('text Bob that I am late')
console.log(JSON.stringify(answer.tools.map((tool) => tool.id)))`
      const child = spawn(
        process.execPath,
        ['--import', 'tsx', '--input-type=module', '--eval', script, url],
        {
          cwd: ROOT,
          env: { ...process.env, NODE_EXTRA_CA_CERTS: join(https!.dir, 'ca.pem') },
          stdio: ['ignore', 'pipe', 'pipe'],
        },
      )
      let out = ''
      let err = ''
      child.stdout.on('data', (chunk: Buffer) => (out += chunk.toString()))
      child.stderr.on('data', (chunk: Buffer) => (err += chunk.toString()))
      const [code] = await once(child, 'exit')
      expect(code, err).toBe(0)
      expect(JSON.parse(out)).toEqual(['sms.send_sms'])
    })
  },
)

describe('the ca option, checked when the client is made', () => {
  const pem = '-----BEGIN CERTIFICATE-----\nMIIB\n-----END CERTIFICATE-----\n'
  it('needs an https baseUrl, no fetch of its own, PEM certificates', () => {
    expect(() => new ToolselClient({ baseUrl: 'http://localhost:8080', ca: pem })).toThrow(
      /ca is for an https:\/\/ baseUrl/,
    )
    expect(
      () => new ToolselClient({ baseUrl: 'https://localhost', ca: pem, fetch: globalThis.fetch }),
    ).toThrow(/give ca or fetch, not both/)
    expect(() => new ToolselClient({ baseUrl: 'https://localhost', ca: 'ca.pem' })).toThrow(
      /ca must be PEM certificates .*a file name\? pass its contents/,
    )
    expect(() => new ToolselClient({ baseUrl: 'https://localhost', ca: [pem, ''] })).toThrow(
      /ca must be PEM certificates/,
    )
    expect(() => new ToolselClient({ baseUrl: 'https://localhost', ca: [pem] })).not.toThrow()
  })
})
