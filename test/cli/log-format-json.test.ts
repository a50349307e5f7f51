import { execFile } from 'node:child_process'
import { afterEach, describe, expect, it } from 'vitest'
import { callFresh as call } from '../helpers/fresh-request.ts'
import { ROOT, startServe, type RunningServe } from '../helpers/start-serve.ts'

let server: RunningServe | undefined

afterEach(async () => {
  await server?.stop()
  server = undefined
})

/** Every line of `text` as the JSON object it must be, `{time, level, msg, …}`. */
function jsonLines(text: string): Array<Record<string, unknown>> {
  return text
    .trim()
    .split('\n')
    .map((line) => {
      const parsed = (() => {
        try {
          return JSON.parse(line) as Record<string, unknown>
        } catch {
          throw new Error(`not a JSON line: ${line}`)
        }
      })()
      expect(typeof parsed.time, line).toBe('string')
      expect(['debug', 'info', 'warn', 'error'], line).toContain(parsed.level)
      expect(typeof parsed.msg, line).toBe('string')
      return parsed
    })
}

describe('log.format json (TOOLSEL_LOG_FORMAT)', () => {
  it('serve --workers 2: every line of the primary and the workers is one JSON object, a worker naming itself', async () => {
    server = await startServe(['--workers', '2'], {
      savedDemo: true,
      env: { TOOLSEL_LOG_FORMAT: 'json' },
    })
    const { url, child, logs } = server
    const put = await call(
      url,
      'PUT',
      '/v1/libraries/parcels',
      '[{"name":"track","description":"Track a parcel."}]',
    )
    expect(put.status, put.text).toBe(201)
    child.kill('SIGTERM')
    await new Promise((resolve) => child.once('exit', resolve))
    expect(child.exitCode).toBe(0)
    const lines = jsonLines(logs())
    const msgs = (worker: unknown) =>
      lines.filter((line) => line.worker === worker).map((line) => line.msg)
    // The primary's lines carry no worker; each worker's carry its cluster id.
    expect(msgs(undefined)).toEqual(
      expect.arrayContaining(['Starting 2 worker processes', 'Ready: 2 workers']),
    )
    for (const worker of [1, 2]) expect(msgs(worker)).toEqual(expect.arrayContaining(['Stopped']))
    // The access log and a write's line keep their fields, and name the worker.
    const request = lines.find((line) => line.msg === 'request' && line.method === 'PUT')
    expect(request).toMatchObject({ status: 201, route: '/v1/libraries/:library' })
    expect([1, 2]).toContain(request!.worker)
  }, 60_000)

  it("a Node warning and an uncaught exception's stack are JSON lines too, and the exit code is 1", async () => {
    const script = `
      import { commandConfig } from './src/cli/cli-options.ts'
      await commandConfig({}, {}, { stdout: () => {}, stderr: (text) => process.stderr.write(text), env: process.env })
      process.emitWarning('disk looks odd', 'ToolselDurabilityWarning')
      setTimeout(() => { throw new Error('boom') }, 50)`
    const { code, stderr } = await new Promise<{ code: number | null; stderr: string }>(
      (resolve) => {
        const child = execFile(
          process.execPath,
          ['--import', 'tsx', '--input-type=module', '-e', script],
          { cwd: ROOT, env: { ...process.env, TOOLSEL_LOG_FORMAT: 'json' } },
          (_error, _stdout, stderr) => resolve({ code: child.exitCode, stderr }),
        )
      },
    )
    expect(code).toBe(1)
    const lines = jsonLines(stderr)
    expect(lines).toContainEqual(
      expect.objectContaining({
        level: 'warn',
        msg: 'ToolselDurabilityWarning: disk looks odd',
        warning: 'ToolselDurabilityWarning',
      }),
    )
    const crash = lines.find((line) => line.level === 'error')
    expect(crash).toMatchObject({ msg: 'Uncaught exception: boom' })
    expect(crash!.stack).toMatch(/Error: boom\n\s+at /)
  }, 30_000)
})
