/** A `learned:<file>` selector whose file cannot be read: one clear error, in words. */
import { join } from 'node:path'
import { tmpdir } from 'node:os'
import { describe, expect, it } from 'vitest'
import { readLearnedModelSync } from '../../src/learn/learned-model.ts'
import { expectToolselError } from '../library/importers/expect-toolsel-error.ts'

describe('readLearnedModelSync', () => {
  it('says why a model file cannot be read in words, not in Node\'s "ENOENT: …, open …"', () => {
    const file = join(tmpdir(), 'toolsel-no-such-model.json')
    const error = expectToolselError(
      () => readLearnedModelSync(file),
      'INVALID_INPUT',
      `Cannot read learned model "${file}": no such file or directory. Write one with \`toolsel train --out ${file}\`.`,
    )
    expect(error.message).not.toContain('ENOENT')
    expect(error.details).toEqual({ file })
    expectToolselError(
      () => readLearnedModelSync(tmpdir()),
      'INVALID_INPUT',
      `Cannot read learned model "${tmpdir()}": it is a directory; name a file.`,
    )
  })

  it('names the directory a relative path was read from (learned:m.json on the command line)', () => {
    expectToolselError(
      () => readLearnedModelSync('toolsel-no-such-model.json'),
      'INVALID_INPUT',
      `Cannot read learned model "toolsel-no-such-model.json" (read from the current directory, ${process.cwd()}): no such file or directory.`,
    )
  })
})
