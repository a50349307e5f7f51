/**
 * Whether a server watches the package manager that started it (src/cli/npm-launcher.ts), decided
 * from what the launcher reads: the environment npm, pnpm or yarn set, the package.json yarn 2+
 * names, and /proc. Each case is a real child process with that environment, under a real parent
 * (a stand-in for the package manager, whose own environment npm's variables are not in), as the
 * runs with pnpm 12, yarn 1.22 and yarn 4 in round 34 had them (notes-qa21.md). The package
 * managers themselves: test/cli/pnpm-yarn-signals.test.ts, when found on PATH.
 * @module
 */
import { spawn, type ChildProcess } from 'node:child_process'
import { once } from 'node:events'
import { mkdtemp, rm, writeFile } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { pathToFileURL } from 'node:url'
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest'
import { npmLauncher } from '../../src/cli/npm-launcher.ts'
import { ROOT } from '../helpers/start-serve.ts'

const linux = process.platform === 'linux'
const LAUNCHER = pathToFileURL(join(ROOT, 'src/cli/npm-launcher.ts')).href

/**
 * The child: prints its parent and its launcher as one JSON line; with `watch`, then polls
 * `launcherGone` every 50 ms and prints `gone <pid>` when it answers.
 */
const CHILD = `
import { launcherGone, npmLauncher, unwatchedLauncherHint } from ${JSON.stringify(LAUNCHER)}
const launcher = npmLauncher()
console.log(JSON.stringify({ pid: process.pid, ppid: process.ppid, launcher: launcher ?? null, hint: unwatchedLauncherHint() ?? null }))
if (process.env.WATCH && launcher) {
  const timer = setInterval(() => {
    const gone = launcherGone(launcher)
    if (gone !== undefined) { console.log('gone ' + gone); clearInterval(timer) }
  }, 50)
}
`

/** The stand-in package manager: starts the child with `CHILD_ENV` and waits on it. */
const PARENT = `
const { spawn } = require('node:child_process')
const child = spawn(process.execPath, ['--import', 'tsx', '--input-type=module', '-e', process.env.CHILD_CODE],
  { stdio: 'inherit', env: JSON.parse(process.env.CHILD_ENV) })
child.on('exit', (code) => process.exit(code ?? 1))
`

let dir: string
let parent: ChildProcess | undefined
let childPid: number | undefined

beforeAll(async () => {
  dir = await mkdtemp(join(tmpdir(), 'toolsel-launcher-'))
})
afterAll(async () => {
  await rm(dir, { recursive: true, force: true })
})
afterEach(() => {
  for (const pid of [childPid, parent?.pid])
    if (pid)
      try {
        process.kill(pid, 'SIGKILL')
      } catch {
        // gone already
      }
  parent = undefined
  childPid = undefined
})

/** The environment without what npm set for this test run (vitest may run under `npm test`). */
function baseEnv(): NodeJS.ProcessEnv {
  const env: NodeJS.ProcessEnv = {}
  for (const [key, value] of Object.entries(process.env))
    if (!key.toLowerCase().startsWith('npm_')) env[key] = value
  return env
}

interface Started {
  pid: number
  ppid: number
  launcher: {
    pid: number
    event: string
    manager: string
    links: { pid: number; parent: number }[]
  } | null
  hint: string | null
  parentPid: number
  output: () => string
}

/**
 * The child under its stand-in package manager, with `env` added to its environment; with
 * `shell`, under `sh -c` instead (a script file of the user's, which runs toolsel and waits).
 */
async function start(env: Record<string, string>, watch = false, shell = false): Promise<Started> {
  const childEnv = { ...baseEnv(), ...env, ...(watch ? { WATCH: '1' } : {}) }
  parent = shell
    ? spawn(
        'sh',
        ['-c', '"$0" --import tsx --input-type=module -e "$CHILD_CODE"; exit $?', process.execPath],
        {
          cwd: ROOT,
          env: { ...childEnv, CHILD_CODE: CHILD },
          stdio: ['ignore', 'pipe', 'inherit'],
        },
      )
    : spawn(process.execPath, ['-e', PARENT], {
        cwd: ROOT,
        env: { ...baseEnv(), CHILD_CODE: CHILD, CHILD_ENV: JSON.stringify(childEnv) },
        stdio: ['ignore', 'pipe', 'inherit'],
      })
  let output = ''
  parent.stdout!.on('data', (chunk: Buffer) => (output += chunk.toString()))
  const deadline = Date.now() + 30_000
  while (!output.includes('\n')) {
    if (parent.exitCode !== null || Date.now() > deadline)
      throw new Error(`the child printed no launcher: ${output}`)
    await new Promise((resolve) => setTimeout(resolve, 20))
  }
  const line = JSON.parse(output.split('\n')[0]) as Omit<Started, 'parentPid' | 'output'>
  childPid = line.pid
  return { ...line, parentPid: parent.pid!, output: () => output }
}

async function packageJson(name: string, scripts: unknown, padding = 0): Promise<string> {
  const path = join(dir, `${name}.json`)
  await writeFile(path, JSON.stringify({ name: 'app', scripts }) + ' '.repeat(padding))
  return path
}

describe('npmLauncher: which package-manager runs are watched', { timeout: 60_000 }, () => {
  it('npm and pnpm (`npm_lifecycle_script`): a script that runs toolsel, not one that runs tests', async () => {
    const watched = await start({
      npm_lifecycle_event: 'start',
      npm_lifecycle_script: 'toolsel serve',
    })
    expect(watched.launcher).toMatchObject({ pid: watched.parentPid, event: 'start' })
    expect(watched.ppid).toBe(watched.parentPid)
    const tests = await start({ npm_lifecycle_event: 'test', npm_lifecycle_script: 'vitest run' })
    expect(tests.launcher).toBeNull()
  })

  it('yarn 1 running a bin (`yarn toolsel serve`: the event is the bin, no script)', async () => {
    // Was: undefined, so SIGTERM (or SIGKILL) to yarn left the server serving, re-parented.
    const started = await start({ npm_lifecycle_event: 'toolsel' })
    expect(started.launcher).toMatchObject({ pid: started.parentPid, event: 'toolsel' })
    expect((await start({ npm_lifecycle_event: 'vitest' })).launcher).toBeNull()
  })

  it("yarn 2+ (no script variable): the script named by the event in npm_package_json's scripts", async () => {
    const path = await packageJson('berry', {
      start: 'toolsel serve --port 8080',
      test: 'vitest run',
      'toolsel:no': 'vitest',
    })
    const started = await start({ npm_lifecycle_event: 'start', npm_package_json: path })
    // Was: undefined, so SIGKILL to yarn left the server serving.
    expect(started.launcher).toMatchObject({ pid: started.parentPid, event: 'start' })
    for (const event of ['test', 'toolsel:no', 'missing', 'constructor', '__proto__']) {
      const other = await start({ npm_lifecycle_event: event, npm_package_json: path })
      expect({ event, launcher: other.launcher }).toEqual({ event, launcher: null })
    }
  })

  it('a package.json that cannot be read, is not JSON, has no scripts or is over 1 MiB: not watched', async () => {
    const notJson = join(dir, 'not.json')
    await writeFile(notJson, '{"scripts": {"start": "toolsel serve"')
    const cases = {
      missing: join(dir, 'missing.json'),
      directory: dir,
      'not JSON': notJson,
      'no scripts': await packageJson('none', undefined),
      'a script not a string': await packageJson('number', { start: 42 }),
      'over 1 MiB': await packageJson('big', { start: 'toolsel serve' }, 1024 * 1024),
    }
    for (const [what, path] of Object.entries(cases)) {
      const started = await start({ npm_lifecycle_event: 'start', npm_package_json: path })
      expect({ what, launcher: started.launcher }).toEqual({ what, launcher: null })
    }
    // Just under the bound it is read.
    const fits = await packageJson('fits', { start: 'toolsel serve' }, 1024 * 1024 - 100)
    expect(
      (await start({ npm_lifecycle_event: 'start', npm_package_json: fits })).launcher,
    ).not.toBeNull()
  })

  it('no package-manager variables, or npm_package_json without an event (`yarn exec`): not watched', async () => {
    expect((await start({})).launcher).toBeNull()
    const path = await packageJson('exec', { start: 'toolsel serve' })
    expect((await start({ npm_package_json: path })).launcher).toBeNull()
  })

  it.skipIf(!linux)(
    "yarn 2+'s `yarn start` killed outright: the server, yarn's own child, sees it gone",
    async () => {
      const path = await packageJson('killed', { start: 'toolsel serve' })
      const started = await start({ npm_lifecycle_event: 'start', npm_package_json: path }, true)
      expect(started.launcher).toMatchObject({ pid: started.parentPid, links: [] })
      childPid = started.pid
      parent!.kill('SIGKILL')
      await once(parent!, 'exit')
      const deadline = Date.now() + 10_000
      while (!started.output().includes(`gone ${started.parentPid}`)) {
        if (Date.now() > deadline) throw new Error(`not seen gone: ${started.output()}`)
        await new Promise((resolve) => setTimeout(resolve, 50))
      }
    },
  )
})

describe('npmLauncher: the package manager named in the log', () => {
  // The server logs `Launcher exited (process <pid>, <manager>'s "<event>")`. Was: always "npm's",
  // under pnpm and yarn too. The manager does not depend on the process tree: read in this process.
  const managerFor = (agent?: string) =>
    npmLauncher({
      npm_lifecycle_event: 'start',
      npm_lifecycle_script: 'toolsel serve',
      ...(agent === undefined ? {} : { npm_config_user_agent: agent }),
    })?.manager

  it('is the name npm_config_user_agent starts with: npm, pnpm, yarn 1 and yarn 4 as they set it', () => {
    expect(managerFor('npm/10.8.2 node/v20.18.0 linux x64 workspaces/false')).toBe('npm')
    expect(managerFor('pnpm/9.15.0 npm/? node/v20.18.0 linux x64')).toBe('pnpm')
    expect(managerFor('yarn/1.22.22 npm/? node/v20.18.0 linux x64')).toBe('yarn')
    expect(managerFor('yarn/4.5.3 npm/? node/v20.18.0 linux x64')).toBe('yarn')
  })

  it('is npm without the variable, or when it does not start with a plain name', () => {
    expect(managerFor()).toBe('npm')
    expect(managerFor('')).toBe('npm')
    for (const agent of ['pnpm', '/1.0 node', '"x"/1.0', 'a\nb/1.0', `${'p'.repeat(40)}/1.0`])
      expect({ agent, manager: managerFor(agent) }).toEqual({ agent, manager: 'npm' })
  })
})

describe(
  "unwatchedLauncherHint: a script that runs toolsel through a file of the user's",
  { timeout: 60_000 },
  () => {
    const npmRun = { npm_lifecycle_event: 'start', npm_lifecycle_script: './run.sh' }

    it.skipIf(!linux)(
      'under a shell (`"start": "./run.sh"`): says the stop will not reach it and what to write',
      async () => {
        const started = await start(npmRun, false, true)
        expect(started.launcher).toBeNull()
        expect(started.hint).toMatch(
          /^Started by the "start" script \("\.\/run\.sh"\) through a shell \((sh|dash|bash)\)/,
        )
        expect(started.hint).toContain(
          'Write "exec toolsel serve …" in that file and "exec <the file>" in the script',
        )
      },
    )

    it('none where the launcher is watched, where the parent is a program (a test runner), or without npm', async () => {
      const watched = await start(
        { npm_lifecycle_event: 'start', npm_lifecycle_script: 'toolsel serve' },
        false,
        true,
      )
      expect([watched.launcher === null, watched.hint]).toEqual([false, null])
      // `npm test` running vitest, which spawns a server: its parent is node, not a shell.
      expect(
        (await start({ npm_lifecycle_event: 'test', npm_lifecycle_script: 'vitest run' })).hint,
      ).toBeNull()
      expect((await start(npmRun)).hint).toBeNull()
      expect((await start({}, false, true)).hint).toBeNull()
    })
  },
)
