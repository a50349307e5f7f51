/**
 * The Python client (clients/python, standard library only) against a real `toolsel serve` with
 * API keys on: its unittest suite (every method, the error path), its runnable example, and the
 * wire check: a select answer through the Python client equals the TypeScript client's and the
 * raw HTTP answer to the same request. Needs `python3` (3.9+) on PATH; without it the suite is
 * skipped and says so.
 */
import { spawnSync } from 'node:child_process'
import { createServer, type IncomingMessage } from 'node:http'
import type { AddressInfo } from 'node:net'
import { mkdtemp, rm } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { ToolselClient } from '../../src/client/index.ts'
import { findPython, runPython, type PythonRun } from '../helpers/run-python.ts'
import { ROOT, startServe, type RunningServe } from '../helpers/start-serve.ts'

const ADMIN_KEY = 'py-admin-key-0123456789'
const READ_KEY = 'py-read-key-0123456789'

const python = findPython()
/** The openai SDK is no dependency of the client: the agent-loop example runs where it is installed. */
const openaiSdk =
  python.ok && spawnSync('python3', ['-c', 'import openai'], { stdio: 'ignore' }).status === 0

let server: RunningServe | undefined
let snapshotDir = ''

/** python3 with the client importable (PYTHONPATH), the service's URL, and `env`. */
function runClient(args: string[], env: Record<string, string> = {}): Promise<PythonRun> {
  return runPython('python3', args, {
    env: {
      PATH: process.env.PATH,
      HOME: process.env.HOME,
      PYTHONDONTWRITEBYTECODE: '1',
      PYTHONPATH: join(ROOT, 'clients/python/src'),
      TOOLSEL_URL: server!.url,
      ...env,
    },
  })
}

function withoutTimings(answer: Record<string, unknown>): Record<string, unknown> {
  const { timings: _timings, ...rest } = answer
  return rest
}

describe.skipIf(!python.ok)(
  `the Python client against toolsel serve with keys${python.ok ? '' : ` (skipped: ${python.reason})`}`,
  () => {
    beforeAll(async () => {
      snapshotDir = await mkdtemp(join(tmpdir(), 'toolsel-py-snapshots-'))
      server = await startServe([], {
        env: {
          TOOLSEL_ADMIN_KEY: ADMIN_KEY,
          TOOLSEL_READ_KEYS: READ_KEY,
          TOOLSEL_SNAPSHOT_DIR: snapshotDir,
        },
      })
    }, 70_000)
    afterAll(async () => {
      await server?.stop()
      if (snapshotDir) await rm(snapshotDir, { recursive: true, force: true })
    })

    it('passes its unittest suite: every method and the error path, nothing skipped', async () => {
      const { code, err } = await runClient(
        ['-m', 'unittest', 'discover', '-v', '-s', 'clients/python/tests'],
        { TOOLSEL_API_KEY: ADMIN_KEY, TOOLSEL_TEST_READ_KEY: READ_KEY },
      )
      expect(code, err).toBe(0)
      const ran = Number(/^Ran (\d+) tests? /m.exec(err)?.[1])
      expect(ran, err).toBeGreaterThanOrEqual(45)
      expect(err).toMatch(/^OK$/m) // "OK (skipped=…)" would mean a class did not run
      expect(err).not.toMatch(/skipped/)
    }, 60_000)

    it('sends the wire format as it is: the same select answer as the TS client and raw HTTP', async () => {
      const request = {
        instruction: 'What is the weather in Paris tomorrow, and email the forecast to Ann',
        library: 'demo',
        k: 5,
        tau: 1,
        explain: true,
        toolFormat: 'anthropic' as const,
      }
      const script = `
import json, sys
from toolsel import ToolselClient
answer = ToolselClient().select(${JSON.stringify(request.instruction)}, library="demo", k=5, tau=1,
                                explain=True, tool_format="anthropic")
json.dump(answer, sys.stdout)
`
      const { code, out, err } = await runClient(['-c', script], { TOOLSEL_API_KEY: READ_KEY })
      expect(code, err).toBe(0)
      const fromPython = JSON.parse(out) as Record<string, unknown>

      const client = new ToolselClient({ baseUrl: server!.url, apiKey: READ_KEY })
      const fromTs = await client.select(request)
      const raw = await fetch(`${server!.url}/v1/select-tools`, {
        method: 'POST',
        headers: { 'content-type': 'application/json', authorization: `Bearer ${READ_KEY}` },
        body: JSON.stringify(request),
      })
      expect(raw.status).toBe(200)
      const fromHttp = (await raw.json()) as Record<string, unknown>

      expect(withoutTimings(fromPython)).toEqual(withoutTimings(fromTs))
      expect(withoutTimings(fromPython)).toEqual(withoutTimings(fromHttp))
      // k and tau were sent as given: 5 candidates per step, the provider shape with its toolIds.
      const steps = fromPython.steps as Array<{ candidates: unknown[] }>
      expect(steps.every((step) => step.candidates.length <= 5)).toBe(true)
      expect(fromPython.toolIds).toMatchObject({
        'weather--get_weather_forecast': 'weather.get_weather_forecast',
      })
    })

    it('runs the offline agent-loop example: offered tools as openai takes them, calls mapped back', async () => {
      const { code, out, err } = await runClient(
        ['clients/python/examples/agent_loop_offline.py', 'text Bob that I am late'],
        // No PYTHONPATH: the example finds the client in the checkout by itself.
        { TOOLSEL_API_KEY: READ_KEY, PYTHONPATH: '' },
      )
      expect(code, err).toBe(0)
      const result = JSON.parse(out) as {
        tools: Array<{ type: string; function: { name: string } }>
        calls: Array<{ name: string; id: string; required: string[] }>
      }
      expect(result.tools.map((tool) => tool.function.name)).toEqual(['sms--send_sms'])
      expect(result.calls).toEqual([
        { name: 'sms--send_sms', id: 'sms.send_sms', required: ['to', 'message'] },
      ])
    })

    it('runs the asyncio example: tools for several instructions at once, as the sync client selects them', async () => {
      const instructions = [
        'text Bob that I am late',
        'What is the weather in Paris tomorrow, and email the forecast to Ann',
      ]
      const { code, out, err } = await runClient(
        ['clients/python/examples/async_select.py', ...instructions],
        { TOOLSEL_API_KEY: READ_KEY, PYTHONPATH: '' },
      )
      expect(code, err).toBe(0)
      const client = new ToolselClient({ baseUrl: server!.url, apiKey: READ_KEY })
      const expected: Record<string, string[]> = {}
      for (const instruction of instructions) {
        const answer = await client.select({ instruction, toolFormat: 'openai' })
        expected[instruction] = Object.values(answer.toolIds ?? {})
      }
      expect(JSON.parse(out)).toEqual(expected)
      expect(expected[instructions[1]]).toEqual(['weather.get_weather_forecast', 'mail.send_email'])
    })

    it.skipIf(!openaiSdk)(
      `runs the openai SDK agent loop against a stand-in Chat Completions server${openaiSdk ? '' : ' (skipped: no openai package for python3)'}`,
      async () => {
        // The model: calls the first tool it is offered, then answers once it has the result.
        const requests: Array<{ tools?: unknown[]; messages: Array<Record<string, unknown>> }> = []
        const model = createServer(async (request: IncomingMessage, response) => {
          let text = ''
          for await (const chunk of request) text += String(chunk)
          const body = JSON.parse(text) as (typeof requests)[number] & {
            tools: Array<{ function: { name: string } }>
          }
          requests.push(body)
          const message =
            requests.length === 1
              ? {
                  role: 'assistant',
                  content: null,
                  tool_calls: [
                    {
                      id: 'call_1',
                      type: 'function',
                      function: {
                        name: body.tools[0].function.name,
                        arguments: '{"to": ["+15550100"], "message": "I am late"}',
                      },
                    },
                  ],
                }
              : { role: 'assistant', content: 'Texted Bob.' }
          response.setHeader('content-type', 'application/json')
          response.end(
            JSON.stringify({
              id: `chatcmpl-${requests.length}`,
              object: 'chat.completion',
              created: 0,
              model: 'stand-in',
              choices: [
                { index: 0, message, finish_reason: message.content ? 'stop' : 'tool_calls' },
              ],
            }),
          )
        })
        await new Promise<void>((resolve) => model.listen(0, '127.0.0.1', resolve))
        try {
          const port = (model.address() as AddressInfo).port
          const { code, out, err } = await runClient(
            ['clients/python/examples/openai_agent_loop.py', 'text Bob that I am late'],
            {
              TOOLSEL_API_KEY: READ_KEY,
              OPENAI_BASE_URL: `http://127.0.0.1:${port}/v1`,
              OPENAI_API_KEY: 'stand-in',
            },
          )
          expect(code, err).toBe(0)
          expect(out.trim()).toBe('Texted Bob.')
          expect(requests).toHaveLength(2)
          // The SDK sent the tools toolsel selected, as the openai format has them.
          const selected = await new ToolselClient({
            baseUrl: server!.url,
            apiKey: READ_KEY,
          }).select({
            instruction: 'text Bob that I am late',
            toolFormat: 'openai',
          })
          expect(requests[0].tools).toEqual(selected.tools)
          // The tool call went back to the model with the tool id it was mapped to.
          const result = requests[1].messages.at(-1)!
          expect(result).toMatchObject({ role: 'tool', tool_call_id: 'call_1' })
          expect(JSON.parse(result.content as string)).toEqual({
            ok: true,
            tool: 'sms.send_sms',
            arguments: { to: ['+15550100'], message: 'I am late' },
          })
        } finally {
          model.close()
        }
      },
      30_000,
    )
  },
)
