/**
 * The Python client against a real HTTPS endpoint: a TLS-terminating proxy started here (Node
 * `https`, a throwaway CA and server certificate made by `openssl` at test time) in front of a
 * real `toolsel serve`. Certificate checking is on by default (an unknown CA, or a certificate
 * for another host, is refused), `verify=` (a CA file, an `ssl.SSLContext`, `False`) and
 * `SSL_CERT_FILE` trust it as requests and httpx users expect, connections are kept alive over
 * TLS, and the time and size limits still hold. Both clients, sync and asyncio. Needs python3
 * (3.9+) and openssl on PATH; without them it is skipped and says why.
 */
import { join } from 'node:path'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { opensslMissing, startHttpsProxy, type HttpsProxy } from '../helpers/https-proxy.ts'
import { findPython, runPython, type PythonRun } from '../helpers/run-python.ts'
import { ROOT } from '../helpers/start-serve.ts'

const python = findPython()
const skipped = !python.ok ? python.reason : opensslMissing()

let https: HttpsProxy | undefined
let dir = ''
let port = 0

/** python3 with the client importable; `args` after `-c <script>`. */
function runClient(script: string, args: string[], env: Record<string, string> = {}) {
  return runPython('python3', ['-c', script, ...args], {
    env: {
      PATH: process.env.PATH,
      HOME: process.env.HOME,
      PYTHONDONTWRITEBYTECODE: '1',
      PYTHONPATH: join(ROOT, 'clients/python/src'),
      ...env,
    },
  })
}

function json(run: PythonRun): Record<string, { ok?: unknown; code?: string; message?: string }> {
  expect(run.code, run.err).toBe(0)
  return JSON.parse(run.out) as Record<string, { ok?: unknown; code?: string; message?: string }>
}

// Each case's outcome: {"ok": value} or {"code", "message"} of the ToolselError.
const PRELUDE = `
import asyncio, json, ssl, sys
from toolsel import AsyncToolselClient, ToolselClient, ToolselError

def outcome(call):
    try:
        return {"ok": call()}
    except ToolselError as error:
        return {"code": error.code, "message": error.message}

def run_async(url, method, *args, **options):
    async def main():
        async with AsyncToolselClient(url, **options) as client:
            return await getattr(client, method)(*args)
    return outcome(lambda: asyncio.run(main()))

def ids(answer):
    return [tool["id"] for tool in answer["tools"]]
`

describe.skipIf(skipped !== undefined)(
  `the Python client over HTTPS${skipped ? ` (skipped: ${skipped})` : ''}`,
  () => {
    beforeAll(async () => {
      https = await startHttpsProxy()
      ;({ dir, port } = https)
    }, 120_000)

    afterAll(async () => {
      await https?.close()
    })

    it('refuses an untrusted certificate by default, and one for another host; trusts verify=<CA>', async () => {
      const script = `${PRELUDE}
url, ip_url, ca = sys.argv[1:4]
instruction = "text Bob that I am late"
json.dump({
    "default": outcome(lambda: ToolselClient(url).list_libraries()),
    "default_async": run_async(url, "list_libraries"),
    "other_host": outcome(lambda: ToolselClient(ip_url, verify=ca).list_libraries()),
    "other_host_async": run_async(ip_url, "list_libraries", verify=ca),
    "ca_file": outcome(lambda: ids(ToolselClient(url, verify=ca).select(instruction))),
    "ca_file_async": run_async(url, "select", instruction, verify=ca),
    "context": outcome(lambda: ids(ToolselClient(url, verify=ssl.create_default_context(cafile=ca)).select(instruction))),
    "no_check": outcome(lambda: ids(ToolselClient(url, verify=False).select(instruction))),
    "no_check_async": run_async(url, "select", instruction, verify=False),
}, sys.stdout)
`
      const result = json(
        await runClient(script, [
          `https://localhost:${port}`,
          `https://127.0.0.1:${port}`,
          join(dir, 'ca.pem'),
        ]),
      )
      for (const name of ['default', 'default_async']) {
        expect(result[name].code, name).toBe('NETWORK')
        expect(result[name].message, name).toMatch(/CERTIFICATE_VERIFY_FAILED/)
        expect(result[name].message, name).toContain("verify='<CA bundle file>'")
      }
      for (const name of ['other_host', 'other_host_async']) {
        expect(result[name].code, name).toBe('NETWORK')
        expect(result[name].message, name).toMatch(/mismatch|doesn't match|not valid for/i)
        // As the TypeScript client: the name is wrong, not the CA (verify= would not help).
        expect(result[name].message, name).toContain(
          "the service's certificate is for another host name: use the name it was issued for in base_url",
        )
        expect(result[name].message, name).not.toContain('verify=')
      }
      expect(result.ca_file.ok).toEqual(['sms.send_sms'])
      expect(
        (result.ca_file_async.ok as { tools: Array<{ id: string }> }).tools.map((tool) => tool.id),
      ).toEqual(['sms.send_sms'])
      expect(result.context.ok).toEqual(['sms.send_sms'])
      expect(result.no_check.ok).toEqual(['sms.send_sms'])
      expect(result.no_check_async.code).toBeUndefined()
    }, 60_000)

    it('a wrong verify= is a ValueError at construction, before anything is sent', async () => {
      const script = `
import json, sys
from toolsel import ToolselClient, AsyncToolselClient
errors = []
for verify in (sys.argv[2] + ".missing", sys.argv[3], 1):
    for make in (ToolselClient, AsyncToolselClient):
        try:
            make(sys.argv[1], verify=verify)
            errors.append(None)
        except ValueError as error:
            errors.append(str(error))
json.dump(errors, sys.stdout)
`
      const run = await runClient(script, [
        `https://localhost:${port}`,
        join(dir, 'ca.pem'),
        join(dir, 'server.ext'),
      ])
      expect(run.code, run.err).toBe(0)
      const errors = JSON.parse(run.out) as Array<string | null>
      expect(errors).toHaveLength(6)
      expect(errors[0]).toMatch(/is no CA bundle file or directory/)
      expect(errors[2]).toMatch(/holds no PEM certificate/)
      expect(errors[4]).toMatch(/verify must be True, False, a CA bundle path or an ssl.SSLContext/)
      expect(errors.every((error) => error !== null)).toBe(true)
    })

    it('SSL_CERT_FILE trusts the CA with the default verify=True, as the standard library does', async () => {
      const script = `${PRELUDE}
json.dump({
    "sync": outcome(lambda: ids(ToolselClient(sys.argv[1]).select("text Bob that I am late"))),
    "async": run_async(sys.argv[1], "list_libraries"),
}, sys.stdout)
`
      const result = json(
        await runClient(script, [`https://localhost:${port}`], {
          SSL_CERT_FILE: join(dir, 'ca.pem'),
        }),
      )
      expect(result.sync.ok).toEqual(['sms.send_sms'])
      expect(result.async.code).toBeUndefined()
    })

    it('keeps one TLS connection for many calls (keep-alive), sync and asyncio', async () => {
      const script = `${PRELUDE}
url, ca = sys.argv[1:3]
with ToolselClient(url, verify=ca) as client:
    for _ in range(5):
        client.select("text Bob that I am late")
async def main():
    async with AsyncToolselClient(url, verify=ca) as client:
        for _ in range(5):
            await client.search("send an SMS")
asyncio.run(main())
print("done")
`
      const before = https!.handshakes()
      const run = await runClient(script, [`https://localhost:${port}`, join(dir, 'ca.pem')])
      expect(run.code, run.err).toBe(0)
      expect(https!.handshakes() - before).toBe(2)
    })

    it('the time limit and the size limit hold over TLS', async () => {
      const script = `${PRELUDE}
base, ca = sys.argv[1:3]
json.dump({
    "drip": outcome(lambda: ToolselClient(base + "/drip", verify=ca, timeout=1).list_libraries()),
    "drip_async": run_async(base + "/drip", "list_libraries", verify=ca, timeout=1),
    "huge": outcome(lambda: ToolselClient(base + "/huge", verify=ca, max_response_bytes=100_000).list_libraries()),
    "huge_async": run_async(base + "/huge", "list_libraries", verify=ca, max_response_bytes=100_000),
}, sys.stdout)
`
      const result = json(
        await runClient(script, [`https://localhost:${port}`, join(dir, 'ca.pem')]),
      )
      expect(result.drip.code).toBe('CLIENT_TIMEOUT')
      expect(result.drip_async.code).toBe('CLIENT_TIMEOUT')
      expect(result.huge.code).toBe('BAD_RESPONSE')
      expect(result.huge_async.code).toBe('BAD_RESPONSE')
    }, 30_000)
  },
)
