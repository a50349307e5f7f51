/**
 * The test-only switches (TEST_SWITCHES in src/config/env-vars.ts): a stop point stops a real
 * process (SIGSTOP) only when its switch is set to its value, and the source reads every
 * `TOOLSEL_TEST_…` variable through testSwitch, testStopPoint or testHoldPoint, each listed in TEST_SWITCHES.
 */
import { spawn } from 'node:child_process'
import { readdir, readFile } from 'node:fs/promises'
import { fileURLToPath } from 'node:url'
import { afterEach, describe, expect, it, vi } from 'vitest'
import { TEST_SWITCHES, testSwitchMs } from '../../src/config/env-vars.ts'
import { exited, stoppedWriter } from '../helpers/process-wait.ts'

const ROOT = fileURLToPath(new URL('../../', import.meta.url))

/** `node -e` that passes `stopPoint` (testStopPoint's arguments), then prints `went on`. */
function script(stopPoint: string): string[] {
  const module = new URL('../../src/config/env-vars.ts', import.meta.url).href
  return [
    '--import',
    'tsx',
    '--input-type=module',
    '-e',
    `import { testStopPoint } from ${JSON.stringify(module)}; testStopPoint(${stopPoint}); console.log('went on')`,
  ]
}

/** Runs `script(stopPoint)` with `env` (and PATH only) to its end: its exit code and stdout. */
async function runToEnd(stopPoint: string, env: Record<string, string>) {
  const child = spawn(process.execPath, script(stopPoint), {
    cwd: ROOT,
    env: { PATH: process.env.PATH, ...env },
    stdio: ['ignore', 'pipe', 'pipe'],
  })
  let out = ''
  child.stdout.on('data', (chunk) => (out += chunk))
  child.stderr.on('data', (chunk) => (out += chunk))
  return { code: await exited(child), out }
}

describe('test-only switches', () => {
  it('stop a process at their point only when set to its value: unset, empty or another value go on', async () => {
    const file = "'TOOLSEL_TEST_STOP_IN_FILE_WRITE'"
    const renames = "'TOOLSEL_TEST_STOP_AFTER_RESTORE_RENAMES', '2'"
    const stopped = await stoppedWriter(script(file), {
      cwd: ROOT,
      env: { TOOLSEL_TEST_STOP_IN_FILE_WRITE: '1' },
    })
    stopped.kill('SIGKILL')
    await exited(stopped)
    const second = await stoppedWriter(script(renames), {
      cwd: ROOT,
      env: { TOOLSEL_TEST_STOP_AFTER_RESTORE_RENAMES: '2' },
    })
    second.kill('SIGKILL')
    await exited(second)

    const goOn = await Promise.all([
      runToEnd(file, {}),
      runToEnd(file, { TOOLSEL_TEST_STOP_IN_FILE_WRITE: '' }),
      runToEnd(file, { TOOLSEL_TEST_STOP_IN_FILE_WRITE: '0' }),
      runToEnd(file, { TOOLSEL_TEST_STOP_IN_SNAPSHOT_WRITE: '1' }), // Another switch's.
      runToEnd(renames, { TOOLSEL_TEST_STOP_AFTER_RESTORE_RENAMES: '1' }),
    ])
    expect(goOn).toEqual(Array(5).fill({ code: 0, out: 'went on\n' }))
  }, 60_000)

  describe('a switch that shortens a wait (testSwitchMs)', () => {
    afterEach(() => vi.unstubAllEnvs())
    it('is off when unset or empty; else an integer within its bounds, or an error naming it', () => {
      const name = 'TOOLSEL_TEST_WORKER_REPLACE_BASE_MS'
      for (const off of [undefined, '']) {
        vi.stubEnv(name, off)
        expect(testSwitchMs(name, 100, 1000)).toBeUndefined()
      }
      for (const [value, ms] of [
        ['100', 100],
        ['1000', 1000],
        ['250', 250],
      ] as const) {
        vi.stubEnv(name, value)
        expect(testSwitchMs(name, 100, 1000)).toBe(ms)
      }
      for (const wrong of ['99', '1001', '150.5', 'fast', '-1']) {
        vi.stubEnv(name, wrong)
        expect(() => testSwitchMs(name, 100, 1000)).toThrow(
          `${name} is "${wrong}": an integer 100-1000 (ms) is expected (a test-only switch)`,
        )
      }
    })
  })

  it('are read through testSwitch, testSwitchMs, testStopPoint or testHoldPoint only, each one listed in TEST_SWITCHES and used', async () => {
    const files = (await readdir(new URL('../../src/', import.meta.url), { recursive: true }))
      .filter((name) => /\.(ts|mjs)$/.test(name) && name !== 'config/env-vars.ts')
      .map((name) => `src/${name}`)
    const used = new Set<string>()
    const mentioned = new Set<string>()
    const readDirectly: string[] = []
    for (const file of files) {
      const text = await readFile(new URL(`../../${file}`, import.meta.url), 'utf8')
      for (const [, name] of text.matchAll(
        /\btest(?:Switch|SwitchMs|StopPoint|HoldPoint)\(\s*'(\w+)'/g,
      ))
        used.add(name)
      for (const [name] of text.matchAll(/TOOLSEL_TEST_\w*[A-Z0-9]/g)) mentioned.add(name)
      if (/process\.env(?:\.|\[\s*['"`]?)TOOLSEL_TEST_/.test(text)) readDirectly.push(file)
    }
    expect(readDirectly).toEqual([])
    expect([...used].sort()).toEqual(Object.keys(TEST_SWITCHES).sort())
    expect([...mentioned].filter((name) => !Object.hasOwn(TEST_SWITCHES, name))).toEqual([])
  })
})
