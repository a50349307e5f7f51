/**
 * readFileUpToSync reads a regular file to its end, not to its fstat's size: a /proc file's
 * fstat says 0 bytes (its text was ""), a file that grew since says too few.
 */
import { mkdtemp, writeFile } from 'node:fs/promises'
import { readFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { describe, expect, it } from 'vitest'
import { FileTooLargeError, readFileUpToSync } from '../src/read-text-file.ts'

describe('readFileUpToSync', () => {
  it.skipIf(process.platform !== 'linux')(
    'reads a /proc file, whose fstat says 0 bytes, to its end within the limit',
    () => {
      // /proc/self/limits: the same text for any reader of this process, over 1 KiB.
      const expected = readFileSync('/proc/self/limits', 'utf8')
      expect(expected.length).toBeGreaterThan(1024)
      expect(readFileUpToSync('/proc/self/limits', 1 << 20)).toBe(expected)
      expect(() => readFileUpToSync('/proc/self/limits', 100)).toThrow(FileTooLargeError)
    },
  )

  it('reads a regular file of exactly the limit, refuses one byte more', async () => {
    const dir = await mkdtemp(join(tmpdir(), 'toolsel-read-up-to-sync-'))
    const text = 'é'.repeat(100_000)
    await writeFile(join(dir, 'a.txt'), text)
    expect(readFileUpToSync(join(dir, 'a.txt'), 200_000)).toBe(text)
    expect(() => readFileUpToSync(join(dir, 'a.txt'), 199_999)).toThrow(FileTooLargeError)
    await writeFile(join(dir, 'empty.txt'), '')
    expect(readFileUpToSync(join(dir, 'empty.txt'), 10)).toBe('')
  })
})
