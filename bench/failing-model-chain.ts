/**
 * The model calls and the time one `POST /v1/select-tools` takes when every chat call fails
 * (bench/README "Round 43: retries along a fallback list"): a real `toolsel serve`
 * (`bin/toolsel.mjs` of `--root`, default this checkout) whose OpenAI-compatible endpoint (an
 * HTTP server here) answers every chat completion 503 with `Retry-After: 1`; planner and
 * selector are `openai:a` with the fallback lists `["openai:b", "openai:c", "rule"]` and
 * `["openai:b", "openai:c", "top1"]` (round 42's attack, hard35), `maxRetries` 2,
 * `retryDelayMs` 10. Prints, per request, its status, the chat calls it made, its time and its
 * `components.fallbacks`, then the median time. `--openai '<JSON>'` adds settings to
 * `models.openai` (`{"maxRetriesPerRequest": 0}`; a checkout before round 43 has none).
 *
 *   node --import tsx bench/failing-model-chain.ts [--requests 3] [--root /tmp/before]
 *     [--openai '{"maxRetriesPerRequest": 0}']
 * @module
 */
import { spawn } from 'node:child_process'
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs'
import { createServer } from 'node:http'
import type { AddressInfo } from 'node:net'
import { tmpdir } from 'node:os'
import { dirname, join, resolve } from 'node:path'
import { fileURLToPath } from 'node:url'
import { benchArgs, usageError, wholeNumber } from './bench-args.ts'

const { values: args } = benchArgs(import.meta.url, {
  options: {
    requests: { type: 'string', default: '3' },
    root: { type: 'string' },
    openai: { type: 'string', default: '{}' },
  },
})
const root = resolve(args.root ?? join(dirname(fileURLToPath(import.meta.url)), '..'))
const requests = wholeNumber(import.meta.url, '--requests', args.requests)
const openai = (() => {
  try {
    const parsed: unknown = JSON.parse(args.openai!)
    if (typeof parsed === 'object' && parsed !== null && !Array.isArray(parsed))
      return parsed as Record<string, unknown>
  } catch {
    // Said below.
  }
  return usageError(
    import.meta.url,
    `--openai must be a JSON object, got ${JSON.stringify(args.openai)}`,
  )
})()

let calls = 0
const endpoint = createServer((request, response) => {
  request.resume()
  request.on('end', () => {
    if (request.url?.endsWith('/models')) {
      response.writeHead(200, { 'content-type': 'application/json' })
      response.end(JSON.stringify({ data: [{ id: 'a' }, { id: 'b' }, { id: 'c' }] }))
      return
    }
    calls += 1
    response.writeHead(503, { 'content-type': 'text/plain', 'retry-after': '1' })
    response.end('overloaded')
  })
})
await new Promise<void>((done) => endpoint.listen(0, '127.0.0.1', done))

const directory = mkdtempSync(join(tmpdir(), 'failing-model-chain-'))
const config = join(directory, 'config.json')
writeFileSync(
  config,
  JSON.stringify({
    models: {
      openai: {
        baseUrl: `http://127.0.0.1:${(endpoint.address() as AddressInfo).port}/v1`,
        maxRetries: 2,
        retryDelayMs: 10,
        ...openai,
      },
    },
    plan: { planner: 'openai:a', fallback: ['openai:b', 'openai:c', 'rule'] },
    select: { selector: 'openai:a', fallback: ['openai:b', 'openai:c', 'top1'] },
  }),
)
const port = 19_000 + Math.floor(Math.random() * 1000)
const serve = spawn(
  process.execPath,
  ['bin/toolsel.mjs', 'serve', '--config', config, '--port', String(port), '--log-level', 'error'],
  { cwd: root, stdio: ['ignore', 'ignore', 'pipe'] },
)
let log = ''
serve.stderr.on('data', (chunk: Buffer) => (log += chunk.toString()))
const url = `http://127.0.0.1:${port}`
try {
  let ready = false
  for (let tries = 0; tries < 900 && !ready; tries += 1) {
    ready = await fetch(`${url}/readyz`).then(
      (answer) => answer.status === 200,
      () => false,
    )
    if (!ready) await new Promise((done) => setTimeout(done, 200))
  }
  if (!ready) throw new Error(`toolsel serve did not get ready: ${log.slice(-2000)}`)
  console.log(`root: ${root}; models.openai extra: ${args.openai}`)
  const times: number[] = []
  for (let index = 0; index < requests; index += 1) {
    calls = 0
    const started = performance.now()
    const answer = await fetch(`${url}/v1/select-tools`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ instruction: 'weather in Paris and email Ann the forecast' }),
    })
    const body = (await answer.json()) as { components?: { fallbacks?: unknown[] } }
    const ms = performance.now() - started
    times.push(ms)
    console.log(
      `request ${index + 1}: HTTP ${answer.status}, ${calls} chat calls, ${Math.round(ms)} ms, ${body.components?.fallbacks?.length ?? 0} fallbacks`,
    )
  }
  times.sort((a, b) => a - b)
  console.log(`median: ${Math.round(times[Math.floor(times.length / 2)])} ms`)
} finally {
  serve.kill('SIGTERM')
  endpoint.close()
  rmSync(directory, { recursive: true, force: true })
}
