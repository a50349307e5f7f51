/**
 * `pnpm start` and `yarn start` of a package whose start script runs toolsel, stopped as an
 * operator or a closed terminal stops them: SIGTERM to the package manager, SIGKILL of it, SIGHUP
 * to the job's process group. Each package manager runs only where it is on PATH (skipped
 * otherwise, saying so): CI has npm only (test/cli/npm-start-signals.test.ts), and what the
 * launcher decides from pnpm's and yarn's environments is tested without them in
 * test/cli/npm-launcher.test.ts. The package is a throwaway one under the temporary directory
 * with no dependencies: pnpm 12 installs before `run` into a node_modules it does not own, so it
 * must never run in this checkout (round 34: it rewrote the shared node_modules).
 * @module
 */
import { execFileSync, spawn, type ChildProcess } from 'node:child_process'
import { once } from 'node:events'
import { mkdir, mkdtemp, rm, symlink, writeFile } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { afterEach, describe, expect, it } from 'vitest'
import { alive, until } from '../helpers/process-wait.ts'
import { ROOT } from '../helpers/start-serve.ts'

const linux = process.platform === 'linux'

/** The version `command --version` prints, or undefined when it is not on PATH. */
function versionOf(command: string): string | undefined {
  try {
    return execFileSync(command, ['--version'], {
      encoding: 'utf8',
      stdio: ['ignore', 'pipe', 'ignore'],
      cwd: tmpdir(),
      timeout: 30_000,
    }).trim()
  } catch {
    return undefined
  }
}

const pnpm = versionOf('pnpm')
const yarn = versionOf('yarn')
const yarnMajor = yarn ? Number(yarn.split('.')[0]) : undefined

interface Started {
  pm: ChildProcess
  serverPid: number
  dir: string
  logs: () => string
}

let run: Started | undefined

afterEach(async () => {
  if (!run) return
  for (const pid of [run.serverPid, -run.pm.pid!])
    try {
      process.kill(pid, 'SIGKILL')
    } catch {
      // gone
    }
  await rm(run.dir, { recursive: true, force: true })
  run = undefined
})

/** The environment without npm's variables (vitest may run under `npm test`), on a free port. */
function serveEnv(indexDir: string): NodeJS.ProcessEnv {
  const env: NodeJS.ProcessEnv = {}
  for (const [key, value] of Object.entries(process.env))
    if (!key.toLowerCase().startsWith('npm_') && !key.startsWith('TOOLSEL_')) env[key] = value
  return {
    ...env,
    TOOLSEL_PORT: '0',
    TOOLSEL_HOST: '127.0.0.1',
    TOOLSEL_INDEX_DIR: indexDir,
    YARN_ENABLE_TELEMETRY: '0',
  }
}

/**
 * A package under tmp whose `start` is `script` (its `toolsel` bin links this checkout's), and
 * `command` started in it in its own process group (a terminal's job), up to "Ready:".
 */
async function startIn(command: string[], script: string, berry = false): Promise<Started> {
  const dir = await mkdtemp(join(tmpdir(), 'toolsel-pm-'))
  await mkdir(join(dir, 'node_modules', '.bin'), { recursive: true })
  await symlink(join(ROOT, 'bin', 'toolsel.mjs'), join(dir, 'node_modules', '.bin', 'toolsel'))
  await writeFile(
    join(dir, 'package.json'),
    JSON.stringify({ name: 'toolsel-pm-test', private: true, scripts: { start: script } }),
  )
  const env = serveEnv(join(dir, 'indexes'))
  if (berry) {
    // yarn 2+ runs only in a project it installed: no dependencies, nothing fetched.
    await writeFile(join(dir, 'yarn.lock'), '')
    await writeFile(join(dir, '.yarnrc.yml'), 'nodeLinker: node-modules\nenableTelemetry: false\n')
    execFileSync('yarn', ['install'], { cwd: dir, env, stdio: 'ignore', timeout: 60_000 })
  }
  const pm = spawn(command[0], command.slice(1), {
    cwd: dir,
    detached: true,
    env,
    stdio: ['ignore', 'pipe', 'pipe'],
  })
  let logs = ''
  pm.stdout!.on('data', (chunk: Buffer) => (logs += chunk.toString()))
  pm.stderr!.on('data', (chunk: Buffer) => (logs += chunk.toString()))
  run = { pm, serverPid: 0, dir, logs: () => logs }
  await until('Ready:', () => /Ready:/.test(logs) || pm.exitCode !== null, 90_000)
  expect(logs).toMatch(/Ready:/)
  // The server: the process in the group whose command is node running toolsel's bin.
  const server = execFileSync('ps', ['-o', 'pid=,args=', '-g', String(pm.pid)], {
    encoding: 'utf8',
  })
    .split('\n')
    .map((line) => /^\s*(\d+)\s+(\S*node) (\S*toolsel(?:\.mjs)?) serve/.exec(line))
    .find(Boolean)
  expect(server).toBeTruthy()
  run.serverPid = Number(server![1])
  return run
}

/** After `signal`: the server exits, having logged `closing` (when given) and a clean stop. */
async function stops(started: Started, signal: () => void, closing?: RegExp) {
  signal()
  await until('the server to exit', () => !alive(started.serverPid))
  if (closing) {
    expect(started.logs()).toMatch(closing)
    expect(started.logs()).toMatch(/Stopped \{"answeredWhileStopping":0,"unfinished":0\}/)
  }
}

const term = (started: Started) => () => started.pm.kill('SIGTERM')
const kill = (started: Started) => () => started.pm.kill('SIGKILL')
const hangUp = (started: Started) => () => process.kill(-started.pm.pid!, 'SIGHUP')
/** A clean stop's log line: the signal, or the launcher gone (`manager`: as the log names it). */
const clean = (manager: 'pnpm' | 'yarn') =>
  new RegExp(`(SIGTERM received|Launcher exited \\(process \\d+, ${manager}'s "[^"]+"\\)): closing`)
const HUP = /SIGHUP received: closing/

describe.skipIf(!linux || !pnpm)(
  `pnpm start (${pnpm ? `pnpm ${pnpm}` : 'skipped: pnpm not on PATH'})`,
  { timeout: 120_000 },
  () => {
    it('SIGTERM to pnpm: it passes it on, the server drains and exits', async () => {
      const started = await startIn(['pnpm', 'start'], 'toolsel serve')
      await stops(started, term(started), clean('pnpm'))
    })
    it('pnpm killed outright: the server does not serve on', async () => {
      // pnpm's own reaper kills its script's process group (-9): stopped, not drained.
      const started = await startIn(['pnpm', 'start'], 'toolsel serve')
      await stops(started, kill(started))
    })
    it('the terminal gone (SIGHUP to the group): a clean stop', async () => {
      const started = await startIn(['pnpm', 'start'], 'toolsel serve')
      await stops(started, hangUp(started), HUP)
    })
  },
)

describe.skipIf(!linux || yarnMajor !== 1)(
  `yarn 1 (${yarnMajor === 1 ? `yarn ${yarn}` : `skipped: ${yarn ? `yarn ${yarn} is not 1.x` : 'yarn not on PATH'}`})`,
  { timeout: 120_000 },
  () => {
    for (const [how, command] of [
      ['yarn start', ['yarn', 'start']],
      ['yarn toolsel serve (a bin: no npm_lifecycle_script)', ['yarn', 'toolsel', 'serve']],
    ] as const) {
      it(`${how}: SIGTERM to yarn stops the server cleanly`, async () => {
        const started = await startIn([...command], 'toolsel serve')
        await stops(started, term(started), clean('yarn'))
      })
      it(`${how}: yarn killed outright, the server sees it gone`, async () => {
        const started = await startIn([...command], 'toolsel serve')
        await stops(started, kill(started), clean('yarn'))
      })
    }
    it('the terminal gone (SIGHUP to the group): a clean stop', async () => {
      const started = await startIn(['yarn', 'start'], 'toolsel serve')
      await stops(started, hangUp(started), HUP)
    })
  },
)

describe.skipIf(!linux || !yarnMajor || yarnMajor < 2)(
  `yarn 2+ (${yarnMajor && yarnMajor >= 2 ? `yarn ${yarn}` : `skipped: ${yarn ? `yarn ${yarn} is 1.x` : 'yarn not on PATH'}`})`,
  { timeout: 120_000 },
  () => {
    // yarn 2+ finds bins only among the dependencies it installed: the script names the file.
    const script = `node ${JSON.stringify(join(ROOT, 'bin', 'toolsel.mjs'))} serve`
    it('SIGTERM to yarn: it passes it on, the server drains and exits', async () => {
      const started = await startIn(['yarn', 'start'], script, true)
      await stops(started, term(started), clean('yarn'))
    })
    it('yarn killed outright: the server, its own child, sees it gone (no npm_lifecycle_script)', async () => {
      const started = await startIn(['yarn', 'start'], script, true)
      await stops(
        started,
        kill(started),
        /Launcher exited \(process \d+, yarn's "start"\): closing/,
      )
    })
    it('the terminal gone (SIGHUP to the group): a clean stop', async () => {
      const started = await startIn(['yarn', 'start'], script, true)
      await stops(started, hangUp(started), HUP)
    })
  },
)
