import { mkdtemp, readdir } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { describe, expect, it } from 'vitest'
import { runCli } from './run-cli.ts'

const run = runCli

describe('--data <dir> of bench and train', () => {
  // Before: bench with a mistyped --data skipped every data suite, ran the demo and exited 0;
  // train failed on the first missing corpus file with an IMPORT_FAILED naming that file.
  it('bench refuses a --data that is not a directory, writing no report', async () => {
    const out = join(await mkdtemp(join(tmpdir(), 'toolsel-data-flag-')), 'report')
    const missing = join(tmpdir(), 'toolsel-no-such-data-dir')
    const result = await run(['bench', '--data', missing, '--out', out])
    expect(result.code).toBe(2)
    expect(result.stderr).toContain(`--data "${missing}" is not a directory`)
    expect(await readdir(join(out, '..'))).toEqual([])
  })

  it('train refuses a --data that is a file', async () => {
    const result = await run(['train', '--data', 'package.json', '--out', '/dev/null'])
    expect(result.code).toBe(2)
    expect(result.stderr).toContain('--data "package.json" is not a directory')
    expect(result.stderr).toContain('toolsel train --help')
  })
})
