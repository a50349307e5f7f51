import { mkdtemp, rm, writeFile } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { runCli } from './run-cli.ts'

// Round 45 (qa16): `select --json` printed the pipeline's tools as held (their source and tags,
// no MCP annotations), not the answer the HTTP API and MCP give; its help said a tool file or
// the demo "is indexed in memory", also the demo once saved (indexes/demo), which loads as built.
describe('toolsel select --json', () => {
  let dir: string
  let file: string
  beforeAll(async () => {
    dir = await mkdtemp(join(tmpdir(), 'toolsel-select-json-'))
    file = join(dir, 'sms.json')
    const tool = {
      name: 'send_sms',
      description: 'Send an SMS text message to a phone number',
      inputSchema: { type: 'object', properties: { to: { type: 'string' } } },
      annotations: { readOnlyHint: false, openWorldHint: true, title: 'not a hint' },
    }
    await writeFile(file, JSON.stringify({ tools: [tool] }))
  })
  afterAll(() => rm(dir, { recursive: true, force: true }))

  it("prints POST /v1/select-tools's answer with its schemas: the tools in toolsel's shape, annotations included", async () => {
    const argv = ['select', 'send an sms text message', '--library', file, '--index-dir', dir]
    const json = await runCli([...argv, '--json'])
    expect(json.code).toBe(0)
    const answer = JSON.parse(json.stdout)
    expect(answer.tools).toHaveLength(1)
    const [tool] = answer.tools
    expect(Object.keys(tool)).toEqual([
      'id',
      'name',
      'description',
      'parameters',
      'namespace',
      'annotations',
    ])
    expect(tool.annotations).toEqual({ readOnlyHint: false, openWorldHint: true })
    expect(answer.steps[0].selected).toBe(tool.id)
    expect(answer.timings.totalMs).toBeGreaterThan(0)
    // The same as --tool-format toolsel, timings aside.
    const toolsel = JSON.parse((await runCli([...argv, '--tool-format', 'toolsel'])).stdout)
    const { timings: _a, ...rest } = answer
    const { timings: _b, ...same } = toolsel
    expect(rest).toEqual(same)
  }, 60_000)

  it('says in its help what it prints and which libraries are indexed in memory', async () => {
    const { code, stdout } = await runCli(['select', '--help'])
    expect(code).toBe(0)
    expect(stdout).toContain('as POST /v1/select-tools gives it')
    expect(stdout).toContain('a saved index has the parts it was built with')
    expect(stdout).not.toMatch(/A tool file or the demo\s+is indexed in memory/)
    // Round 48 keeps the demo it indexes in the user's cache (round 49: the help said "in memory").
    expect(stdout).toMatch(/the demo's kept for the next run in \$XDG_CACHE_HOME\/toolsel\/indexes/)
    for (const line of stdout.split('\n')) expect(line.length, line).toBeLessThanOrEqual(100)
  })
})
