import { mkdtemp, rm, writeFile } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { afterAll, describe, expect, it } from 'vitest'
import { callFresh as call } from '../helpers/fresh-request.ts'
import { startServe, workerPids, type RunningServe } from '../helpers/start-serve.ts'

let server: RunningServe | undefined
let scratch: string | undefined

afterAll(async () => {
  await server?.stop()
  if (scratch) await rm(scratch, { recursive: true, force: true })
})

/** The time of the first log line at or after `from` that matches `pattern`, in ms. */
function lineTime(logs: string, pattern: RegExp, from = 0): { at: number; end: number } {
  const rest = logs.slice(from)
  const match = new RegExp(`^(\\S+) [^\\n]*${pattern.source}[^\\n]*$`, 'm').exec(rest)
  if (!match) throw new Error(`no line ${pattern} after ${from}:\n${logs}`)
  return { at: Date.parse(match[1]!), end: from + match.index + match[0].length }
}

describe('serve --workers: a worker that crashes each time it is ready', () => {
  it('is replaced at once the first time, then 1 s, 2 s, … later with an ERROR line, while the other serves; SIGTERM meanwhile exits 0', async () => {
    scratch = await mkdtemp(join(tmpdir(), 'toolsel-crash-loop-'))
    const crash = join(scratch, 'crash')
    server = await startServe(['--workers', '2'], {
      savedDemo: true,
      env: { TOOLSEL_TEST_CRASH_AFTER_READY_FILE: crash },
    })
    const { url, logs, child } = server
    // From now on every worker exits (code 70) as soon as it is ready.
    await writeFile(crash, '')
    const [victim] = workerPids(child.pid!)
    process.kill(victim!, 'SIGKILL')
    const deadline = Date.now() + 40_000
    const crashed = async (times: number) => {
      const line = new RegExp(
        `ERROR Worker \\d+ exited \\(code 70\\), ${times} workers in the last`,
      )
      while (!line.test(logs())) {
        if (Date.now() > deadline) throw new Error(`no crash ${times}:\n${logs()}`)
        await new Promise((resolve) => setTimeout(resolve, 20))
      }
    }
    await crashed(2)
    // The worker that was never replaced serves meanwhile.
    expect((await call(url, 'GET', '/readyz')).status).toBe(200)
    await crashed(3)
    // A stop while a replacement waits for its backoff (2 s): no worker is started, exit code 0.
    child.kill('SIGTERM')
    await new Promise((resolve) => child.once('exit', resolve))
    const text = logs()
    // The first death in the window: replaced at once, as before.
    expect(text).toMatch(/WARN Worker \d+ exited \(SIGKILL\); starting another/)
    // Then a backoff, each logged as an error, and kept to: no replacement before it is due.
    const second = lineTime(
      text,
      /ERROR Worker \d+ exited \(code 70\), 2 workers in the last 5 min after they were ready; starting another in 1 s/,
    )
    const next = lineTime(text, /Ready: libraries/, second.end)
    expect(next.at - second.at).toBeGreaterThanOrEqual(1000 - 5)
    expect(text).toMatch(
      /ERROR Worker \d+ exited \(code 70\), 3 workers in the last 5 min after they were ready; starting another in 2 s/,
    )
    expect(child.exitCode, logs()).toBe(0)
    expect(logs().trimEnd().split('\n').at(-1)).toMatch(
      /INFO Stopped: every worker has exited \(SIGTERM received\); exit code 0 \{"restarts":3\}$/,
    )
  }, 90_000)
})
