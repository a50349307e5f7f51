/**
 * Config files from elsewhere (`--config`, `--gateway-config`): a `__proto__` key (prototype
 * pollution through the merge), a file nested 200,000 deep, /dev/zero. Run in child processes:
 * a polluted Object.prototype, or an endless read, must not reach the test runner.
 */
import { execFile } from 'node:child_process'
import { mkdtemp, rm, writeFile } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { promisify } from 'node:util'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { expectExit, runToolselChild } from '../helpers/run-toolsel-child.ts'
import { ROOT } from '../helpers/start-serve.ts'

let root: string

beforeAll(async () => {
  root = await mkdtemp(join(tmpdir(), 'toolsel-hostile-config-'))
})

afterAll(async () => {
  await rm(root, { recursive: true, force: true })
})

/** loadConfig of `file` in a child: its error message and what a new object inherits. */
async function loadInChild(file: string): Promise<{ error: string; inherited: unknown }> {
  const script = `
    import { loadConfig } from './src/config/load-config.ts'
    let error = ''
    try { await loadConfig({ file: ${JSON.stringify(file)} }) } catch (e) { error = e.message }
    const probe = {}
    console.log(JSON.stringify({ error, inherited: { polluted: probe.polluted, port: probe.port } }))`
  const { stdout } = await promisify(execFile)(
    process.execPath,
    ['--import', 'tsx', '--input-type=module', '-e', script],
    { cwd: ROOT, timeout: 30_000 },
  )
  return JSON.parse(stdout)
}

describe('hostile config files', () => {
  it('a "__proto__" key, at the top or in a section, is refused and pollutes nothing', async () => {
    // JSON text: an object literal's __proto__ is no own key, and JSON.stringify drops it.
    const cases: Array<[string, string, string]> = [
      ['top', '{"__proto__": {"polluted": "yes", "port": 1}}', '__proto__'],
      ['section', '{"server": {"__proto__": {"polluted": "yes"}}}', 'server.__proto__'],
    ]
    for (const [name, text, path] of cases) {
      const file = join(root, `proto-${name}.json`)
      await writeFile(file, text)
      const { error, inherited } = await loadInChild(file)
      expect(inherited, name).toEqual({})
      expect(error).toBe(
        `Unknown config key "${path}" (from config file ${file}); "__proto__" is never a config key.`,
      )
    }
  }, 60_000)

  it('a file nested 200,000 objects deep is refused by depth, not by a stack overflow', async () => {
    const file = join(root, 'deep.json')
    await writeFile(file, `${'{"a":'.repeat(200_000)}1${'}'.repeat(200_000)}`)
    const { error } = await loadInChild(file)
    expect(error).toMatch(
      /^Invalid config value at "a\.a\.[a.]*" \(from config file .*\): nested deeper than 32 objects\.$/,
    )
  }, 60_000)

  it('/dev/zero as --config or --gateway-config is refused after 16 MiB', async () => {
    const config = await runToolselChild(['select', 'send an email', '--config', '/dev/zero'])
    expectExit(
      config,
      'Config file /dev/zero could not be read: it is larger than 16777216 bytes (a config file is a few KiB).',
    )
    const gateway = await runToolselChild(['mcp', '--stdio', '--gateway-config', '/dev/zero'])
    expectExit(
      gateway,
      'Gateway config /dev/zero could not be read: it is larger than 16777216 bytes',
    )
  }, 60_000)

  it('a gateway server named "__proto__" is refused, not dropped', async () => {
    const file = join(root, 'gateway.json')
    await writeFile(file, '{"mcpServers": {"__proto__": {"command": "node"}}}')
    const run = await runToolselChild(['mcp', '--stdio', '--gateway-config', file])
    expectExit(
      run,
      `Unknown config key "gateway.servers.__proto__" (from gateway config ${file}); "__proto__" is never a config key.`,
    )
  }, 60_000)
})
