/**
 * `toolsel select --tau` does what a request's `tau` does in POST /v1/select-tools: the threshold
 * every step's candidates must pass, under the learned selector (the default) too. Until round 56
 * the flag set only retrieve.bm25.tau, which the learned selector ignores: the CLI answered as if
 * the flag were not there while the same tau in a request cut the candidates.
 */
import { mkdtemp, writeFile } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { beforeAll, describe, expect, it } from 'vitest'
import { SAMPLE_TOOLS } from '../helpers/sample-tools.ts'
import { createTestApp, postJson, readJson } from '../server/test-service.ts'
import { runCli } from './run-cli.ts'

const INSTRUCTION = 'Get the weather forecast for Paris, and email the forecast to Ann'

interface Step {
  text: string
  selected: string | null
  candidates: { id: string; score: number }[]
}

let dir: string
beforeAll(async () => {
  dir = await mkdtemp(join(tmpdir(), 'toolsel-select-tau-'))
  await writeFile(join(dir, 'tools.json'), JSON.stringify(SAMPLE_TOOLS))
})

async function cli(...flags: string[]): Promise<string> {
  const run = await runCli([
    'select',
    INSTRUCTION,
    '--library',
    join(dir, 'tools.json'),
    '--index-dir',
    join(dir, 'indexes'),
    '--log-level',
    'silent',
    ...flags,
  ])
  expect(run.stderr).toBe('')
  expect(run.code).toBe(0)
  return run.stdout
}

/** Each step's text, selection and candidates (ids and scores), without the timings. */
const stepsOf = (body: { steps: Step[] }) =>
  body.steps.map(({ text, selected, candidates }) => ({
    text,
    selected,
    candidates: candidates.map(({ id, score }) => ({ id, score })),
  }))

async function api(tau?: number) {
  const { app } = await createTestApp()
  const response = await app.request(
    '/v1/select-tools',
    postJson({ instruction: INSTRUCTION, tau }),
  )
  expect(response.status).toBe(200)
  return readJson(response)
}

describe('toolsel select --tau', () => {
  it("cuts the learned selector's candidates as a request's tau does, step for step", async () => {
    const open = await api()
    expect(open.components.selector).toBe('learned')
    // A threshold between the first step's best two candidates.
    const [first, second] = open.steps[0].candidates
    expect(second).toBeDefined()
    const tau = (first.score + second.score) / 2
    const cut = await api(tau)
    expect(cut.steps[0].candidates.map((c: { id: string }) => c.id)).toEqual([first.id])

    const flagged = JSON.parse(await cli('--json', '--tau', String(tau)))
    expect(flagged.components.selector).toBe('learned')
    expect(stepsOf(flagged)).toEqual(stepsOf(cut))
    // Without the flag the CLI answers as the request without tau.
    expect(stepsOf(JSON.parse(await cli('--json')))).toEqual(stepsOf(open))
  })

  it('names --tau as the threshold that left a step empty under the learned selector', async () => {
    const out = await cli('--planner', 'none', '--tau', '500')
    expect(out).toMatch(
      /\(no candidate above the threshold tau = 500; the best, weather\.get_forecast, scored \d+\.\d\d: --tau lowers it\)/,
    )
    expect(out).toContain('Tools: (none)')
    expect(out).toContain('→ learned')
  })
})
