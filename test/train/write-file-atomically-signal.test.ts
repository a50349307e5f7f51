import { spawn } from 'node:child_process'
import { mkdtemp, readdir } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { describe, expect, it } from 'vitest'

// A child process writes a large file through writeFileAtomically and is interrupted (Ctrl-C,
// SIGTERM, or SIGHUP: its terminal closed) once its temporary file exists: the temporary file
// must be gone and the process end by that signal.
const CHILD = `
import { readdirSync } from 'node:fs'
import { basename, dirname } from 'node:path'
import { writeFileAtomically } from ${JSON.stringify(join(process.cwd(), 'src/write-file-atomically.ts'))}
const out = process.argv[1]
const text = 'x'.repeat(128 * 1024 * 1024)
void writeFileAtomically(out, text, 'the model')
const timer = setInterval(() => {
  // <out>.<pid>.<start>@<host>.tmp
  const prefix = basename(out) + '.' + process.pid + '.'
  if (!readdirSync(dirname(out)).some((entry) => entry.startsWith(prefix) && entry.endsWith('.tmp'))) return
  clearInterval(timer)
  process.kill(process.pid, process.argv[2])
}, 1)
`

describe('writeFileAtomically on Ctrl-C, SIGTERM or SIGHUP', () => {
  // SIGHUP: was not handled, so a `toolsel train` whose terminal closed left its <out>.<pid>….tmp.
  it.each(['SIGINT', 'SIGTERM', 'SIGHUP'] as const)(
    '%s removes <out>.<pid>.<start>@<host>.tmp and ends the process by it',
    async (name) => {
      const dir = await mkdtemp(join(tmpdir(), 'toolsel-signal-'))
      const child = spawn(
        process.execPath,
        ['--import', 'tsx', '--input-type=module', '-e', CHILD, join(dir, 'model.json'), name],
        { stdio: 'inherit' },
      )
      const signal = await new Promise<NodeJS.Signals | null>((resolve) =>
        child.on('exit', (_code, exitSignal) => resolve(exitSignal)),
      )
      expect(signal).toBe(name)
      expect(await readdir(dir)).toEqual([])
    },
    60_000,
  )
})
