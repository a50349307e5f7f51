/**
 * examples/trl-reward/toolsel_reward.py, run as TRL's GRPOTrainer would call it, with the system
 * Python (standard library only) against a live `toolsel serve`.
 */
import { spawn } from 'node:child_process'
import { existsSync } from 'node:fs'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { ROOT, startServe, type RunningServe } from '../helpers/start-serve.ts'

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

function runPython(rows: unknown[]): Promise<{ code: number | null; out: string; err: string }> {
  return new Promise((resolve, reject) => {
    const child = spawn(PYTHON, ['-c', DRIVER], {
      cwd: ROOT,
      env: { PATH: process.env.PATH, TOOLSEL_URL: url, PYTHONDONTWRITEBYTECODE: '1' },
    })
    let out = ''
    let err = ''
    child.stdout.on('data', (chunk: Buffer) => (out += chunk.toString()))
    child.stderr.on('data', (chunk: Buffer) => (err += chunk.toString()))
    child.on('error', reject)
    child.on('close', (code) => resolve({ code, out, err }))
    child.stdin.end(JSON.stringify(rows))
  })
}

describe.skipIf(!existsSync(PYTHON))(
  'the TRL reward example against toolsel serve (skipped: no /usr/bin/python3)',
  () => {
    beforeAll(async () => {
      server = await startServe()
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
      const { code, out, err } = await runPython(rows)
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
        { step: 'email Ann', gold: 'mail.send_email', candidates, completion: 'sms.send_sms' },
        { step: 'play jazz', gold: null, candidates, completion: 'none' },
        { step: 'play jazz', gold: null, candidates, completion: 'mail.send_email' },
      ]
      const { code, out, err } = await runPython(rows)
      expect(code, err).toBe(0)
      expect(JSON.parse(out)).toEqual([1, 0, 1, 0])
    })
  },
)
