/**
 * A `learned:<file>` selector whose file cannot be read: one clear error, in words. Read up to
 * MAX_LEARNED_MODEL_BYTES, from a regular file only (round 46: before, a FIFO at the name hung
 * the start and a file of any size was read whole).
 */
import { execFileSync } from 'node:child_process'
import { mkdtemp, rm, truncate, writeFile } from 'node:fs/promises'
import { join } from 'node:path'
import { tmpdir } from 'node:os'
import { describe, expect, it } from 'vitest'
import {
  MAX_LEARNED_MODEL_BYTES,
  readLearnedModel,
  readLearnedModelSync,
} from '../../src/learn/learned-model.ts'
import { expectToolselError } from '../library/importers/expect-toolsel-error.ts'

describe('readLearnedModelSync', () => {
  it('says why a model file cannot be read in words, not in Node\'s "ENOENT: …, open …"', async () => {
    const file = join(tmpdir(), 'toolsel-no-such-model.json')
    const error = expectToolselError(
      () => readLearnedModelSync(file),
      'INVALID_INPUT',
      `Cannot read learned model "${file}": no such file or directory. Write one with \`toolsel train --out ${file}\`.`,
    )
    expect(error.message).not.toContain('ENOENT')
    expect(error.details).toEqual({ file })
    // The async reader (readLearnedModel) says the same.
    await expect(readLearnedModel(file)).rejects.toThrow(error.message)
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

  it('reads no more than MAX_LEARNED_MODEL_BYTES, and nothing of a FIFO or a device', async () => {
    const dir = await mkdtemp(join(tmpdir(), 'toolsel-model-bound-'))
    try {
      // A sparse file past the bound (no disk used): refused by its size, unread.
      const large = join(dir, 'large.json')
      await writeFile(large, '')
      await truncate(large, MAX_LEARNED_MODEL_BYTES + 1)
      const tooLarge = `Cannot read learned model "${large}": larger than ${MAX_LEARNED_MODEL_BYTES} bytes`
      expect(() => readLearnedModelSync(large)).toThrow(tooLarge)
      await expect(readLearnedModel(large)).rejects.toThrow(tooLarge)
      const notRegular = 'it is not a regular file (a device, pipe, socket or directory)'
      expect(() => readLearnedModelSync('/dev/zero')).toThrow(notRegular)
      if (process.platform === 'win32') return
      const fifo = join(dir, 'fifo.json')
      execFileSync('mkfifo', [fifo])
      expect(() => readLearnedModelSync(fifo)).toThrow(notRegular)
      await expect(readLearnedModel(fifo)).rejects.toThrow(notRegular)
    } finally {
      await rm(dir, { recursive: true, force: true })
    }
  })
})
