import { execFile } from 'node:child_process'
import { createServer } from 'node:net'
import { fileURLToPath } from 'node:url'
import { describe, expect, it } from 'vitest'

const ROOT = fileURLToPath(new URL('../..', import.meta.url))

describe('toolsel serve on a port already in use', () => {
  it('exits 2 with an error naming the port and the fix, not a stack trace', async () => {
    const taken = createServer()
    await new Promise<void>((resolve) => taken.listen(0, '127.0.0.1', resolve))
    const { port } = taken.address() as { port: number }
    try {
      const { code, stderr } = await new Promise<{ code: number | null; stderr: string }>(
        (resolve) => {
          const child = execFile(
            process.execPath,
            ['bin/toolsel.mjs', 'serve', '--port', String(port), '--log-level', 'warn'],
            { cwd: ROOT, timeout: 30_000 },
            (_error, _stdout, stderr) => resolve({ code: child.exitCode, stderr }),
          )
        },
      )
      expect(code).toBe(2)
      expect(stderr).toContain(
        `error [INVALID_CONFIG]: Port ${port} on 127.0.0.1 is already in use`,
      )
      expect(stderr).not.toContain('    at ')
    } finally {
      await new Promise((resolve) => taken.close(resolve))
    }
  }, 60_000)
})
