/**
 * README's quick start runs the service with `npm start`, and `npx toolsel serve` runs it through
 * npm too; an operator stops it with SIGTERM (a process manager, `docker stop` of an image that
 * runs npm) or Ctrl-C (SIGINT to the terminal's process group). npm passes both on to the process
 * it started only: the `sh -c` it runs the command in, which exits without passing them on. The
 * server notices that its launcher went and stops as on SIGTERM; a server started otherwise
 * (`nohup toolsel serve &`) outlives the shell that started it. Real processes: npm, the shell,
 * the server.
 * @module
 */
import { execFileSync, spawn, type ChildProcess } from 'node:child_process'
import { once } from 'node:events'
import { mkdtemp, readFile, rm } from 'node:fs/promises'
import { connect, type Socket } from 'node:net'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { afterAll, afterEach, describe, expect, it } from 'vitest'
import { alive, until } from '../helpers/process-wait.ts'
import { copySavedDemo, ROOT, startServe, type RunningServe } from '../helpers/start-serve.ts'

const npmFound = (() => {
  try {
    execFileSync('npm', ['--version'], { stdio: 'ignore' })
    return true
  } catch {
    return false
  }
})()
const linux = process.platform === 'linux'

interface NpmServe {
  npm: ChildProcess
  url: string
  logs: () => string
  /** The server's process (npm's child, or the child of the shell npm started). */
  serverPid: number
  indexDir: string
}

/** What the npm tests started (they run side by side: ended after the last of them). */
const npmServes: NpmServe[] = []
/** Servers started with nohup by a shell that exited, and their index directories. */
const orphans: Array<{ pid: number; indexDir: string }> = []
let running: RunningServe | undefined
let socket: Socket | undefined

afterAll(async () => {
  for (const started of npmServes.splice(0)) {
    // npm, the shell if any and the server: one process group (detached), ended together.
    if (alive(started.serverPid) || alive(started.npm.pid!)) {
      try {
        process.kill(-started.npm.pid!, 'SIGKILL')
      } catch {
        // gone meanwhile
      }
    }
    await rm(started.indexDir, { recursive: true, force: true })
  }
  for (const orphan of orphans.splice(0)) {
    if (alive(orphan.pid)) process.kill(orphan.pid, 'SIGKILL')
    await rm(orphan.indexDir, { recursive: true, force: true })
  }
})

afterEach(async () => {
  socket?.destroy()
  socket = undefined
  await running?.stop()
  running = undefined
})

/** How often the servers started here look for their launcher (TOOLSEL_TEST_LAUNCHER_POLL_MS). */
const LAUNCHER_POLL_MS = 100

/** The environment without what npm sets for a script (as in a terminal, not under `npm test`). */
function withoutNpm(): NodeJS.ProcessEnv {
  const env: NodeJS.ProcessEnv = {
    TOOLSEL_LIBRARY: '',
    TOOLSEL_PORT: '',
    TOOLSEL_HOST: '',
    // Its launcher looked for every 100 ms, not 500: the waits below are tenths of a second.
    TOOLSEL_TEST_LAUNCHER_POLL_MS: String(LAUNCHER_POLL_MS),
  }
  for (const [key, value] of Object.entries(process.env))
    if (!key.toLowerCase().startsWith('npm_') && !(key in env)) env[key] = value
  return env
}

/** The pids and command lines of a process group. */
function group(pgid: number): { pid: number; args: string }[] {
  return execFileSync('ps', ['-o', 'pid=,args=', '-g', String(pgid)], { encoding: 'utf8' })
    .trim()
    .split('\n')
    .map((line) => {
      const [, pid, args] = /^\s*(\d+)\s+(.*)$/.exec(line)!
      return { pid: Number(pid), args }
    })
}

/**
 * npm with `npmArgs` in this checkout, in its own process group (as a terminal's job is), its
 * command `node bin/toolsel.mjs serve` on a free port.
 */
async function npmServe(npmArgs: (serve: string[]) => string[]): Promise<NpmServe> {
  const indexDir = await mkdtemp(join(tmpdir(), 'toolsel-npm-start-'))
  // The demo as saved: the start loads it instead of importing and indexing it (what is tested
  // here is how the server is launched and stopped, not how it gets its libraries).
  await copySavedDemo(indexDir)
  const serve = ['--port', '0', '--host', '127.0.0.1', '--index-dir', indexDir]
  const npm = spawn('npm', npmArgs(serve), {
    cwd: ROOT,
    detached: true,
    env: withoutNpm(),
    stdio: ['ignore', 'pipe', 'pipe'],
  })
  let logs = ''
  npm.stdout!.on('data', (chunk: Buffer) => (logs += chunk.toString()))
  npm.stderr!.on('data', (chunk: Buffer) => (logs += chunk.toString()))
  const started: NpmServe = { npm, url: '', logs: () => logs, serverPid: 0, indexDir }
  npmServes.push(started)
  await until('Ready:', () => /Ready:/.test(logs) || npm.exitCode !== null, 90_000)
  expect(logs).toMatch(/Ready:/)
  expect(logs, 'the saved demo loaded as saved').not.toMatch(/Library "demo": /)
  const port = /Listening on http:\/\/[^:]+:(\d+)/.exec(logs)![1]
  const server = group(npm.pid!).find(({ args }) => /^node bin\/toolsel\.mjs serve /.test(args))
  expect(server).toBeDefined()
  started.url = `http://127.0.0.1:${port}`
  started.serverPid = server!.pid
  return started
}

/** `npm start -- …`: README's quick start. */
const npmStart = () => npmServe((serve) => ['start', '--', ...serve])

async function refused(url: string): Promise<boolean> {
  return fetch(`${url}/healthz`).then(
    () => false,
    () => true,
  )
}

/** How the server says it stops: the SIGTERM itself (npm's child) or its launcher gone. */
const closing = (event: string) =>
  new RegExp(`(SIGTERM received|Launcher exited \\(process \\d+, npm's "${event}"\\)): closing`)

/** After `signal`: npm exits, then the server, which logged `closing` and a clean stop; port free. */
async function stopsCleanly(
  { npm, url, logs, serverPid }: NpmServe,
  signal: () => void,
  closing: RegExp,
): Promise<void> {
  signal()
  await once(npm, 'exit')
  await until('the server to exit', () => !alive(serverPid))
  expect(logs()).toMatch(closing)
  expect(logs()).toMatch(/Stopped \{"answeredWhileStopping":0,"unfinished":0\}/)
  expect(await refused(url)).toBe(true)
}

// The tests run side by side: each mostly waits on its own npm, shell and server.
const npmSignals = { timeout: 120_000, concurrent: true }

describe.skipIf(!npmFound || !linux)('npm start, npx and signals', npmSignals, () => {
  it('the start script needs no POSIX shell (cmd.exe runs it too): no `exec`', async () => {
    const { scripts } = JSON.parse(await readFile(join(ROOT, 'package.json'), 'utf8')) as {
      scripts: Record<string, string>
    }
    expect(scripts.start).toBe('node bin/toolsel.mjs serve')
  })

  it('SIGTERM to npm stops the server cleanly: log lines, process gone, port free', async () => {
    const started = await npmStart()
    expect((await fetch(`${started.url}/healthz`)).status).toBe(200)
    await stopsCleanly(started, () => started.npm.kill('SIGTERM'), closing('start'))
  })

  it("Ctrl-C (SIGINT to npm's process group) stops it cleanly", async () => {
    const started = await npmStart()
    await stopsCleanly(
      started,
      () => process.kill(-started.npm.pid!, 'SIGINT'),
      /SIGINT received: closing/,
    )
  })

  it('npx (npm exec: the command in `sh -c`): SIGTERM to npm stops the server', async () => {
    // What `npx toolsel serve` runs, without linking this checkout into npm's npx cache.
    const started = await npmServe((serve) => [
      'exec',
      '--call',
      ['node', 'bin/toolsel.mjs', 'serve', ...serve].join(' '),
    ])
    await stopsCleanly(started, () => started.npm.kill('SIGTERM'), closing('npx'))
  })

  // npm killed outright (SIGKILL, the OOM killer) passes nothing on: its shell, re-parented,
  // waits on the server, whose own parent is still that shell. Before round 33 it served on.
  for (const [how, npmArgs, event] of [
    ['npm start', (serve: string[]) => ['start', '--', ...serve], 'start'],
    [
      'npx (npm exec)',
      (serve: string[]) => [
        'exec',
        '--call',
        ['node', 'bin/toolsel.mjs', 'serve', ...serve].join(' '),
      ],
      'npx',
    ],
  ] as const) {
    it(`SIGKILL to npm (${how}): the server sees npm gone and stops cleanly`, async () => {
      const started = await npmServe(npmArgs)
      const npmPid = started.npm.pid!
      await stopsCleanly(
        started,
        () => started.npm.kill('SIGKILL'),
        new RegExp(`Launcher exited \\(process ${npmPid}, npm's "${event}"\\): closing`),
      )
    })
  }

  it('a script that runs npm again (npm start inside npm exec): SIGTERM to the outer npm stops it', async () => {
    // The outer npm's shell exits of the SIGTERM; the inner npm, re-parented, and its shell would
    // wait on the server for ever.
    const started = await npmServe((serve) => [
      'exec',
      '--call',
      ['npm', 'start', '--', ...serve].join(' '),
    ])
    await stopsCleanly(started, () => started.npm.kill('SIGTERM'), closing('start'))
  })

  /**
   * `nohup node bin/toolsel.mjs serve … &` from a shell that exits once the server is ready (the
   * server is re-parented then), with `env`.
   */
  async function backgrounded(
    env: NodeJS.ProcessEnv,
  ): Promise<{ port: string; log: string; pid: number }> {
    const indexDir = await mkdtemp(join(tmpdir(), 'toolsel-nohup-'))
    await copySavedDemo(indexDir)
    const log = join(indexDir, 'serve.log')
    const shell = spawn(
      'sh',
      [
        '-c',
        `nohup node bin/toolsel.mjs serve --port 0 --host 127.0.0.1 --index-dir "$1" > "$2" 2>&1 &
         echo $!
         while ! grep -q Ready: "$2" && kill -0 $! 2>/dev/null; do sleep 0.1; done`,
        'sh',
        indexDir,
        log,
      ],
      { cwd: ROOT, env, stdio: ['ignore', 'pipe', 'inherit'] },
    )
    let out = ''
    shell.stdout!.on('data', (chunk: Buffer) => (out += chunk.toString()))
    await until('the shell to exit', () => shell.exitCode !== null, 90_000)
    const pid = Number(out.trim())
    orphans.push({ pid, indexDir })
    const logs = await readFile(log, 'utf8')
    expect(logs).toMatch(/Ready:/)
    return { port: /Listening on http:\/\/[^:]+:(\d+)/.exec(logs)![1], log, pid }
  }

  const npmTest = { npm_lifecycle_event: 'test', npm_lifecycle_script: 'vitest run' }
  for (const [started, env] of [
    ['from a terminal', {}],
    ["by a program under `npm test` (npm's variables inherited)", npmTest],
  ] as const) {
    it(`\`nohup toolsel serve &\` ${started}: the shell exits, it keeps serving`, async () => {
      const { port, log, pid } = await backgrounded({ ...withoutNpm(), ...env })
      // Its shell has gone: it was re-parented. Four of the launcher polls later it still serves.
      await new Promise((resolve) => setTimeout(resolve, 4 * LAUNCHER_POLL_MS + 100))
      expect(alive(pid)).toBe(true)
      expect((await fetch(`http://127.0.0.1:${port}/healthz`)).status).toBe(200)
      process.kill(pid, 'SIGTERM')
      await until('the server to exit', () => !alive(pid))
      expect(await readFile(log, 'utf8')).toContain('SIGTERM received: closing')
    })
  }

  it('run by an npm script that runs toolsel (`toolsel serve &`): stops when that shell exits', async () => {
    const { port, log, pid } = await backgrounded({
      ...withoutNpm(),
      npm_lifecycle_event: 'serve:bg',
      npm_lifecycle_script: 'toolsel serve &',
    })
    await until('the server to exit', () => !alive(pid))
    expect(await readFile(log, 'utf8')).toMatch(
      /Launcher exited \(process \d+, npm's "serve:bg"\): closing[^]*Stopped/,
    )
    expect(await refused(`http://127.0.0.1:${port}`)).toBe(true)
  })
})

/**
 * A `POST /v1/select-tools` the server has received but whose body is not sent yet: with
 * `expect: 100-continue`, the server's "100 Continue" says the request is in flight.
 */
async function requestInFlight(
  url: string,
): Promise<{ answer: () => string; sendBody: () => void }> {
  const body = JSON.stringify({ instruction: 'send an email to Ann' })
  const opened = connect(Number(new URL(url).port), '127.0.0.1')
  socket = opened
  let answer = ''
  opened.on('data', (chunk: Buffer) => (answer += chunk.toString()))
  await once(opened, 'connect')
  opened.write(
    `POST /v1/select-tools HTTP/1.1\r\nhost: 127.0.0.1\r\ncontent-type: application/json\r\n` +
      `content-length: ${Buffer.byteLength(body)}\r\nexpect: 100-continue\r\n\r\n`,
  )
  await until('100 Continue', () => answer.includes('100 Continue'))
  return { answer: () => answer, sendBody: () => void opened.write(body) }
}

describe('SIGHUP (the terminal closed, the job it ran hung up)', () => {
  it('drains and exits as on SIGTERM: the request in flight is answered (was: killed by it)', async () => {
    // Node's default for SIGHUP ends the process at once; it also resets a SIGHUP that `nohup`
    // ignored, so a server run with nohup met it too when its terminal closed.
    running = await startServe([], { savedDemo: true })
    const { url, child, logs } = running
    const request = await requestInFlight(url)
    child.kill('SIGHUP')
    const exited = () => child.exitCode !== null || child.signalCode !== null
    await until('SIGHUP handled', () => logs().includes('SIGHUP received: closing') || exited())
    expect(child.signalCode).toBeNull()
    request.sendBody()
    const [code, signal] = await once(child, 'exit')
    expect([code, signal]).toEqual([0, null])
    expect(request.answer()).toMatch(/HTTP\/1\.1 200 OK/)
    expect(logs()).toMatch(/Stopped \{"answeredWhileStopping":1,"unfinished":0\}/)
  })
})

describe('a second stop signal while the server drains', () => {
  it('is logged and changes nothing: the request in flight is answered, then a clean exit', async () => {
    running = await startServe([], { savedDemo: true })
    const { url, child, logs } = running
    const request = await requestInFlight(url)
    child.kill('SIGTERM')
    await until('the first SIGTERM', () => logs().includes('SIGTERM received: closing'))
    child.kill('SIGTERM')
    const exited = () => child.exitCode !== null || child.signalCode !== null
    await until('the second SIGTERM', () => logs().includes('SIGTERM received again') || exited())
    expect(child.signalCode).toBeNull()
    expect(logs()).toContain('SIGTERM received again: already stopping')
    request.sendBody()
    const [code, signal] = await once(child, 'exit')
    expect([code, signal]).toEqual([0, null])
    expect(request.answer()).toMatch(/HTTP\/1\.1 200 OK/)
    expect(request.answer().toLowerCase()).toContain('connection: close')
    expect(logs()).toMatch(/Stopped \{"answeredWhileStopping":1,"unfinished":0\}/)
  })
})
