import { execFileSync } from 'node:child_process'
import { constants, openSync, closeSync } from 'node:fs'
import { mkdir, mkdtemp, rm, symlink, utimes, writeFile, stat } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { afterEach, beforeEach, describe, expect, it } from 'vitest'
import { demoFingerprint } from '../../src/store/demo-fingerprint.ts'
import { importAsLibrary } from '../../src/store/library-lifecycle.ts'

// Round 44 (hard41): what a file in the demo's directory can do to the fingerprint that a start
// (and `serve --workers N`'s primary) takes before anything else.
describe('demoFingerprint', () => {
  let dir: string
  beforeEach(async () => {
    dir = await mkdtemp(join(tmpdir(), 'toolsel-demo-fp-'))
    await writeFile(join(dir, 'a.json'), '{"tools":[{"name":"a"}]}')
  })
  afterEach(() => rm(dir, { recursive: true, force: true }))

  it('fails at once, unread, for a link to /dev/zero (was read whole: GBs, minutes)', async () => {
    await symlink('/dev/zero', join(dir, 'zero.json'))
    const started = performance.now()
    await expect(demoFingerprint(dir)).rejects.toThrow(/not a regular file/)
    expect(performance.now() - started).toBeLessThan(5000)
  }, 10_000)

  it('fails for a link to a FIFO without hanging on its open', async () => {
    const fifo = join(dir, 'pipe')
    execFileSync('mkfifo', [fifo])
    await symlink(fifo, join(dir, 'pipe.json'))
    try {
      await expect(demoFingerprint(dir)).rejects.toThrow(/not a regular file/)
    } finally {
      // A reader still blocked in its open (the code before the fix) is let go.
      try {
        closeSync(openSync(fifo, constants.O_WRONLY | constants.O_NONBLOCK))
      } catch {
        // ENXIO: nobody reads it.
      }
    }
  }, 10_000)

  it('fails for a file past maxFileBytes, as the import refuses it', async () => {
    await writeFile(join(dir, 'big.json'), 'x'.repeat(1000))
    await expect(demoFingerprint(dir, 999)).rejects.toThrow(/larger than 999 bytes/)
    await expect(demoFingerprint(dir, 1000)).resolves.toMatch(/^sha256:[0-9a-f]{64}$/)
  })

  it('changes with a file of the same size and mtime, one added, removed, renamed or linked', async () => {
    const base = await demoFingerprint(dir)
    expect(await demoFingerprint(dir)).toBe(base)
    const file = join(dir, 'a.json')
    const { mtime } = await stat(file)
    await writeFile(file, '{"tools":[{"name":"b"}]}')
    await utimes(file, mtime, mtime)
    const sameSize = await demoFingerprint(dir)
    expect(sameSize).not.toBe(base)
    await writeFile(join(dir, 'b.yaml'), '')
    const added = await demoFingerprint(dir)
    expect(added).not.toBe(sameSize)
    await rm(join(dir, 'b.yaml'))
    expect(await demoFingerprint(dir)).toBe(sameSize)
    const target = join(dir, 'target.txt')
    await writeFile(target, '{"tools":[]}')
    await symlink(target, join(dir, 'c.json'))
    const linked = await demoFingerprint(dir)
    expect(linked).not.toBe(sameSize)
    await writeFile(target, '{"tools":[{"name":"c"}]}')
    const retargeted = await demoFingerprint(dir)
    expect(retargeted).not.toBe(linked)
    // Files the import leaves alone are left alone here too.
    await writeFile(join(dir, '.hidden.json'), 'x')
    await writeFile(join(dir, 'notes.md'), 'x')
    expect(await demoFingerprint(dir)).toBe(retargeted)
  })
})

describe("the demo's import", () => {
  it('refuses a link to a FIFO among its files, not hanging in its open (hard41)', async () => {
    // Any checkout's src/library/demo/servers is the demo (isDemoSource).
    const root = await mkdtemp(join(tmpdir(), 'toolsel-demo-import-'))
    const dir = join(root, 'src/library/demo/servers')
    await mkdir(dir, { recursive: true })
    await writeFile(
      join(dir, 'a.json'),
      JSON.stringify({ tools: [{ name: 'a', inputSchema: { type: 'object' } }] }),
    )
    const fifo = join(root, 'pipe')
    execFileSync('mkfifo', [fifo])
    await symlink(fifo, join(dir, 'b.json'))
    try {
      await expect(importAsLibrary({ path: dir }, 'demo')).rejects.toThrow(/not a regular file/)
    } finally {
      try {
        closeSync(openSync(fifo, constants.O_WRONLY | constants.O_NONBLOCK))
      } catch {
        // ENXIO: nobody reads it.
      }
      await rm(root, { recursive: true, force: true })
    }
  }, 10_000)
})
