/**
 * examples/trl-reward/toolsel_reward.py, run as TRL's GRPOTrainer would call it, with the system
 * Python (standard library only) against a live `toolsel serve`.
 */
import { existsSync } from 'node:fs'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { runPython, type PythonRun } from '../helpers/run-python.ts'
import { startServe, type RunningServe } from '../helpers/start-serve.ts'

const PYTHON = '/usr/bin/python3'

/** TRL's call: prompts, completions (conversational), and the dataset columns as keywords. */
const DRIVER = `
import json, sys
sys.path.insert(0, "examples/trl-reward")
from toolsel_reward import toolsel_planner_reward, toolsel_selector_reward
rows = json.load(sys.stdin)
if rows and "candidates" in rows[0]:
    print(json.dumps(toolsel_selector_reward(
        prompts=[[{"role": "user", "content": row["step"]}] for row in rows],
        completions=[[{"role": "assistant", "content": row["completion"]}] for row in rows],
        gold=[row["gold"] for row in rows],
        candidates=[row["candidates"] for row in rows],
        completion_ids=None,
    )))
    sys.exit(0)
print(json.dumps(toolsel_planner_reward(
    prompts=[[{"role": "user", "content": row["instruction"]}] for row in rows],
    completions=[[{"role": "assistant", "content": row["completion"]}] for row in rows],
    instruction=[row["instruction"] for row in rows],
    gold=[row["gold"] for row in rows],
    library=[row["library"] for row in rows],
    completion_ids=None,
    trainer_state=None,
)))
`

let server: RunningServe | undefined
let url = ''

function runDriver(rows: unknown[], toolselUrl = url): Promise<PythonRun> {
  return runPython(PYTHON, ['-c', DRIVER], {
    env: { PATH: process.env.PATH, TOOLSEL_URL: toolselUrl, PYTHONDONTWRITEBYTECODE: '1' },
    stdin: JSON.stringify(rows),
  })
}

describe.skipIf(!existsSync(PYTHON))(
  'the TRL reward example against toolsel serve (skipped: no /usr/bin/python3)',
  () => {
    beforeAll(async () => {
      server = await startServe([], { savedDemo: true })
      url = server.url
    }, 70_000)
    afterAll(() => server?.stop())

    it('returns one reward per completion, grouped per prompt, equal to the endpoint', async () => {
      const weather = {
        library: 'demo',
        instruction: 'What is the weather in Paris tomorrow, and email the forecast to Ann',
        gold: ['weather.get_weather_forecast', 'mail.send_email'],
      }
      const sms = {
        library: 'demo',
        instruction: 'Text my mom that I will be late',
        gold: ['sms.send_sms'],
      }
      const rows = [
        {
          ...weather,
          completion:
            '["get the weather forecast for Paris tomorrow", "email the forecast to Ann"]',
        },
        { ...weather, completion: 'I would first look at the weather.' },
        { ...sms, completion: '["send an SMS to mom saying I will be late"]' },
        { ...sms, completion: '["send an SMS to mom", "book a flight to Paris"]' },
      ]
      const { code, out, err } = await runDriver(rows)
      expect(code, err).toBe(0)
      const rewards = JSON.parse(out) as number[]
      expect(rewards).toHaveLength(4)
      expect(rewards[0]).toBe(1)
      expect(rewards[1]).toBe(-1)
      expect(rewards[2]).toBe(1)
      expect(rewards[3]).toBeGreaterThan(0)
      expect(rewards[3]).toBeLessThan(1)

      // The same numbers as the endpoint gives for each group.
      for (const [group, indexes] of [
        [weather, [0, 1]],
        [sms, [2, 3]],
      ] as const) {
        const response = await fetch(`${url}/v1/rewards/planner`, {
          method: 'POST',
          headers: { 'content-type': 'application/json' },
          body: JSON.stringify({ ...group, completions: indexes.map((i) => rows[i].completion) }),
        })
        const body = (await response.json()) as { rewards: Array<{ reward: number }> }
        expect(body.rewards.map((item) => item.reward)).toEqual(indexes.map((i) => rewards[i]))
      }
    })

    it('scores selector completions 1 for the gold id (or none when gold is null), else 0', async () => {
      const candidates = ['mail.send_email', 'sms.send_sms']
      const rows = [
        { step: 'email Ann', gold: 'mail.send_email', candidates, completion: 'mail.send_email' },
        { step: 'play jazz', gold: null, candidates, completion: 'none' },
        { step: 'email Ann', gold: 'mail.send_email', candidates, completion: 'sms.send_sms' },
        { step: 'play jazz', gold: null, candidates, completion: 'mail.send_email' },
      ]
      const { code, out, err } = await runDriver(rows)
      expect(code, err).toBe(0)
      // One request per step (same gold and candidates), the rewards back in the rows' order.
      expect(JSON.parse(out)).toEqual([1, 1, 0, 0])
    })

    it('fails with the error toolsel answered and its fix, not a bare "HTTP Error 404"', async () => {
      // Was: urllib.error.HTTPError: HTTP Error 404: Not Found (the body, which names the
      // library, was lost), and a bare URLError when nothing listened at TOOLSEL_URL.
      const row = { instruction: 'Text mom', gold: ['sms.send_sms'], completion: '["text mom"]' }
      const unknown = await runDriver([{ ...row, library: 'tools' }])
      expect(unknown.code).not.toBe(0)
      expect(unknown.err).toContain(
        'ToolselRewardError: toolsel /v1/rewards/planner: HTTP 404 UNKNOWN_LIBRARY: No library named "tools" is loaded (available: demo).',
      )
      expect(unknown.err).toContain('`toolsel serve --library <it>`')
      const wrongGold = await runDriver([{ ...row, library: 'demo', gold: ['sms'] }])
      expect(wrongGold.err).toContain('HTTP 404 UNKNOWN_TOOL: Library "demo" has no tool "sms"')
      // TOOLSEL_URL with a trailing slash (was: 404 "No route for POST //v1/rewards/planner").
      const slash = await runDriver([{ ...row, library: 'demo' }], `${url}/`)
      expect(slash.code, slash.err).toBe(0)
      expect(JSON.parse(slash.out)).toEqual([1])
      const path = await runDriver([{ ...row, library: 'demo' }], `${url}/v1`)
      expect(path.err).toContain("must be the server's root, as http://127.0.0.1:8080")
      // Port 9 (discard): nothing listens there.
      const down = await runDriver([{ ...row, library: 'demo' }], 'http://127.0.0.1:9')
      expect(down.code).not.toBe(0)
      expect(down.err).toContain('Cannot reach toolsel at http://127.0.0.1:9')
      expect(down.err).toContain('set TOOLSEL_URL')
    })
  },
)
