/**
 * README's quick start runs the service with `npm start`; an operator stops it with SIGTERM (a
 * process manager, `docker stop` of an image that runs npm) or Ctrl-C (SIGINT to the terminal's
 * process group). npm passes both on to the script's process only: before the start script
 * `exec`ed the server, that process was the `sh -c` npm runs scripts in, which exited and left the
 * server running, still holding its port. Real processes: npm, the shell, the server.
 * @module
 */
import { execFileSync, spawn, type ChildProcess } from 'node:child_process'
import { once } from 'node:events'
import { mkdtemp, rm } from 'node:fs/promises'
import { connect, type Socket } from 'node:net'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { afterEach, describe, expect, it } from 'vitest'
import { ROOT, startServe, type RunningServe } from '../helpers/start-serve.ts'

const npmFound = (() => {
  try {
    execFileSync('npm', ['--version'], { stdio: 'ignore' })
    return true
  } catch {
    return false
  }
})()
const linux = process.platform === 'linux'

interface NpmStart {
  npm: ChildProcess
  url: string
  logs: () => string
  /** The process npm started for the script (with `exec`: the server itself). */
  scriptPid: number
  scriptArgs: string
  indexDir: string
}

let started: NpmStart | undefined
let running: RunningServe | undefined
let socket: Socket | undefined

afterEach(async () => {
  socket?.destroy()
  socket = undefined
  if (started) {
    // npm, the shell if any and the server: one process group (detached), ended together.
    if (alive(started.scriptPid) || alive(started.npm.pid!)) {
      try {
        process.kill(-started.npm.pid!, 'SIGKILL')
      } catch {
        // gone meanwhile
      }
    }
    await rm(started.indexDir, { recursive: true, force: true })
    started = undefined
  }
  await running?.stop()
  running = undefined
})

function alive(pid: number): boolean {
  try {
    process.kill(pid, 0)
    return true
  } catch {
    return false
  }
}

async function until(what: string, condition: () => boolean, timeoutMs = 30_000): Promise<void> {
  const deadline = Date.now() + timeoutMs
  while (!condition()) {
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`)
    await new Promise((resolve) => setTimeout(resolve, 50))
  }
}

/** `npm start -- …` in this checkout, in its own process group (as a terminal's job is). */
async function npmStart(): Promise<NpmStart> {
  const indexDir = await mkdtemp(join(tmpdir(), 'toolsel-npm-start-'))
  const npm = spawn(
    'npm',
    ['start', '--', '--port', '0', '--host', '127.0.0.1', '--index-dir', indexDir],
    {
      cwd: ROOT,
      detached: true,
      env: { ...process.env, TOOLSEL_LIBRARY: '', TOOLSEL_PORT: '', TOOLSEL_HOST: '' },
      stdio: ['ignore', 'pipe', 'pipe'],
    },
  )
  let logs = ''
  npm.stdout!.on('data', (chunk: Buffer) => (logs += chunk.toString()))
  npm.stderr!.on('data', (chunk: Buffer) => (logs += chunk.toString()))
  await until('Ready:', () => /Ready:/.test(logs) || npm.exitCode !== null, 90_000)
  expect(logs).toMatch(/Ready:/)
  const port = /Listening on http:\/\/[^:]+:(\d+)/.exec(logs)![1]
  const [pid, ...args] = execFileSync('ps', ['-o', 'pid=,args=', '--ppid', String(npm.pid)], {
    encoding: 'utf8',
  })
    .trim()
    .split(/\s+/)
  return {
    npm,
    url: `http://127.0.0.1:${port}`,
    logs: () => logs,
    scriptPid: Number(pid),
    scriptArgs: args.join(' '),
    indexDir,
  }
}

async function refused(url: string): Promise<boolean> {
  return fetch(`${url}/healthz`).then(
    () => false,
    () => true,
  )
}

describe.skipIf(!npmFound || !linux)('npm start and signals', () => {
  it('SIGTERM to npm stops the server cleanly: log lines, process gone, port free', async () => {
    started = await npmStart()
    const { npm, url, logs, scriptPid, scriptArgs } = started
    // npm's child is the server (the start script execs it), not a shell around it.
    expect(scriptArgs).toMatch(/^node bin\/toolsel\.mjs serve /)
    expect((await fetch(`${url}/healthz`)).status).toBe(200)
    npm.kill('SIGTERM')
    await once(npm, 'exit')
    await until('the server to exit', () => !alive(scriptPid))
    expect(logs()).toContain('SIGTERM received: closing')
    expect(logs()).toContain('Stopped')
    expect(await refused(url)).toBe(true)
  })

  it("Ctrl-C (SIGINT to npm's process group: the server gets it twice) stops it cleanly", async () => {
    started = await npmStart()
    const { npm, url, logs, scriptPid } = started
    process.kill(-npm.pid!, 'SIGINT')
    await once(npm, 'exit')
    await until('the server to exit', () => !alive(scriptPid))
    expect(logs()).toContain('SIGINT received: closing')
    expect(logs()).toMatch(/Stopped \{"answeredWhileStopping":0,"unfinished":0\}/)
    expect(await refused(url)).toBe(true)
  })
})

describe('a second stop signal while the server drains', () => {
  it('is logged and changes nothing: the request in flight is answered, then a clean exit', async () => {
    running = await startServe()
    const { url, child, logs } = running
    const body = JSON.stringify({ instruction: 'send an email to Ann' })
    const { port } = new URL(url)
    socket = connect(Number(port), '127.0.0.1')
    let answer = ''
    socket.on('data', (chunk: Buffer) => (answer += chunk.toString()))
    await once(socket, 'connect')
    // `expect: 100-continue`: the server's "100 Continue" says the request is received (in
    // flight) while its body is not yet sent.
    socket.write(
      `POST /v1/select-tools HTTP/1.1\r\nhost: 127.0.0.1\r\ncontent-type: application/json\r\n` +
        `content-length: ${Buffer.byteLength(body)}\r\nexpect: 100-continue\r\n\r\n`,
    )
    await until('100 Continue', () => answer.includes('100 Continue'))
    child.kill('SIGTERM')
    await until('the first SIGTERM', () => logs().includes('SIGTERM received: closing'))
    child.kill('SIGTERM')
    const exited = () => child.exitCode !== null || child.signalCode !== null
    await until('the second SIGTERM', () => logs().includes('SIGTERM received again') || exited())
    expect(child.signalCode).toBeNull()
    expect(logs()).toContain('SIGTERM received again: already stopping')
    socket.write(body)
    const [code, signal] = await once(child, 'exit')
    expect([code, signal]).toEqual([0, null])
    expect(answer).toMatch(/HTTP\/1\.1 200 OK/)
    expect(answer.toLowerCase()).toContain('connection: close')
    expect(logs()).toMatch(/Stopped \{"answeredWhileStopping":1,"unfinished":0\}/)
  })
})
