import { lstat, mkdtemp, readFile, rm, symlink, writeFile } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { afterEach, describe, expect, it } from 'vitest'
import { temporaryFile } from '../../src/store/dead-writers.ts'
import { writeFileAtomically } from '../../src/write-file-atomically.ts'

// The temporary file's name (`<file>.<pid>.<start>@<host>.tmp`) is predictable: pid and start
// time show in /proc to every user. Someone who can write in the output's directory (a shared
// folder) plants a symlink by that name to a file of the writer's: the write must not go through
// it. Before, writeFile followed it (the target overwritten with the output) and the rename put
// the symlink in place of the output.
let dir: string | undefined
afterEach(async () => {
  if (dir) await rm(dir, { recursive: true, force: true })
})

describe('writeFileAtomically and a symlink planted at its temporary name', () => {
  it('fails without writing through it, the target untouched', async () => {
    dir = await mkdtemp(join(tmpdir(), 'toolsel-symlink-'))
    const victim = join(dir, 'victim.txt')
    await writeFile(victim, 'precious')
    const out = join(dir, 'model.json')
    await symlink(victim, temporaryFile(out))
    await expect(writeFileAtomically(out, '{"new":true}', 'the model')).rejects.toThrow(
      /^Cannot write the model ".*model\.json": /,
    )
    expect(await readFile(victim, 'utf8')).toBe('precious')
    await expect(lstat(out)).rejects.toMatchObject({ code: 'ENOENT' })
  })
})
