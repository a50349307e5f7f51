/**
 * `toolsel select` on a step that got no candidate says why: nothing in the library matches the
 * step's words, or a threshold cut what matched (which one, and the best tool's score). Before,
 * every such step read "(no candidate above the threshold)", also when nothing matched and under
 * the learned selector, which has no tau.
 */
import { mkdtemp, writeFile } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { beforeAll, describe, expect, it } from 'vitest'
import { runCli } from './run-cli.ts'

const TOOLS = [
  { name: 'get_weather', description: 'Get the current weather forecast for a city' },
  { name: 'send_sms', description: 'Send an SMS text message to a phone number' },
]

let dir: string
beforeAll(async () => {
  dir = await mkdtemp(join(tmpdir(), 'toolsel-select-empty-'))
  await writeFile(join(dir, 'tools.json'), JSON.stringify(TOOLS))
})

async function select(instruction: string, ...flags: string[]): Promise<string> {
  return selectIn({}, instruction, ...flags)
}

async function selectIn(
  env: Record<string, string>,
  instruction: string,
  ...flags: string[]
): Promise<string> {
  const run = await runCli(
    [
      'select',
      instruction,
      '--library',
      join(dir, 'tools.json'),
      '--index-dir',
      join(dir, 'indexes'),
      '--planner',
      'none',
      '--log-level',
      'silent',
      ...flags,
    ],
    env,
  )
  expect(run.stderr).toBe('')
  expect(run.code).toBe(0)
  return run.stdout
}

describe('toolsel select, a step with no candidate', () => {
  it('says that no tool matches when none shares a word with the step, under either selector', async () => {
    for (const selector of ['learned', 'top1']) {
      const out = await select('frobnicate the wibble', '--selector', selector)
      expect(out).toContain('(no candidate: no tool of the library matches this step)')
      expect(out).toContain('Tools: (none)')
    }
  })

  it('names tau, the best tool and its score when tau cut the matches', async () => {
    // The configured tau (here TOOLSEL_TAU), which top1 takes for BM25's candidates.
    const configured = await selectIn(
      { TOOLSEL_TAU: '500' },
      'weather forecast for Oslo',
      '--selector',
      'top1',
    )
    expect(configured).toMatch(
      /\(no candidate above the threshold retrieve\.bm25\.tau = 500; the best, get_weather, scored \d+\.\d\d: --tau lowers it\)/,
    )
    // --tau, the selection's own threshold (a request's tau), whatever the selector.
    const out = await select('weather forecast for Oslo', '--selector', 'top1', '--tau', '500')
    expect(out).toMatch(
      /\(no candidate above the threshold tau = 500; the best, get_weather, scored \d+\.\d\d: --tau lowers it\)/,
    )
    // The same step under a lower tau has the candidate the line named.
    expect(await select('weather forecast for Oslo', '--selector', 'top1', '--tau', '0')).toMatch(
      /\* +\d+\.\d\d {2}get_weather/,
    )
  })
})
