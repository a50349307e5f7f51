/**
 * A PUT of the tools a library serves checks its saved copy under the library's lock (round 50,
 * srv55), but that lock is a commit's: held for milliseconds, taken over by another process as a
 * dead writer's past 5 s (index-dir-claims.ts), and other writers of the library wait up to 10 s
 * for it. So only the manifest and the recorded files' `lstat` are looked at under it; a load of
 * every file (seconds for a large library: vectors, an HNSW graph) runs after it, and not at all
 * when the disk holds another save (another process's commit), which the manifest tells.
 * `loadIndexedLibrary` runs as it is; the spy only notes whether the lock file exists then.
 */
import { existsSync } from 'node:fs'
import { readFile, writeFile } from 'node:fs/promises'
import { join } from 'node:path'
import { beforeEach, describe, expect, it, vi } from 'vitest'
import { buildIndexedLibrary } from '../../src/store/build-index.ts'
import { saveIndexedLibrary } from '../../src/store/index-store.ts'
import { ToolLibrary } from '../../src/library/tool-library.ts'
import { SAMPLE_TOOLS } from '../helpers/sample-tools.ts'
import { createTestApp } from '../server/test-service.ts'

const loads = vi.hoisted(() => ({ lockPath: '', lockHeld: [] as boolean[] }))

vi.mock('../../src/store/index-store.ts', async (importOriginal) => {
  const actual = await importOriginal<typeof import('../../src/store/index-store.ts')>()
  return {
    ...actual,
    loadIndexedLibrary: (...args: Parameters<typeof actual.loadIndexedLibrary>) => {
      if (loads.lockPath !== '') loads.lockHeld.push(existsSync(loads.lockPath))
      return actual.loadIndexedLibrary(...args)
    },
  }
})

/** A PUT body: the sample tools as a JSON array. */
const body = (): string => JSON.stringify(SAMPLE_TOOLS)

beforeEach(() => {
  loads.lockPath = ''
  loads.lockHeld = []
})

describe("a PUT of the served tools checks the saved copy without a load under the library's lock", () => {
  it('a save without the files record (before round 33) is loaded after the lock is let go', async () => {
    const { service, indexDir } = await createTestApp()
    await service.putLibrary('lib', body())
    const manifestPath = join(indexDir, 'lib', 'manifest.json')
    const { files: _files, ...older } = JSON.parse(await readFile(manifestPath, 'utf8'))
    await writeFile(manifestPath, JSON.stringify(older))
    loads.lockPath = join(indexDir, '.lock-lib')
    const answer = await service.putLibrary('lib', body())
    expect(answer.unchanged).toBe(true)
    expect(answer.warnings).toEqual([])
    // One load, to vouch for the files the manifest keeps no record of; not under the lock.
    expect(loads.lockHeld).toEqual([false])
  })

  it("another process's save there is told by its manifest: rebuilt and saved, nothing loaded", async () => {
    const { service, indexDir, logger } = await createTestApp()
    await service.putLibrary('lib', body())
    // Another process (a worker not relayed to this one yet) commits other tools as "lib".
    const config = service.config
    const other = await buildIndexedLibrary(new ToolLibrary('lib', SAMPLE_TOOLS.slice(1)), config)
    await saveIndexedLibrary(indexDir, other)
    loads.lockPath = join(indexDir, '.lock-lib')
    const answer = await service.putLibrary('lib', body())
    expect(answer.unchanged).toBe(false)
    expect(logger.lines.join('\n')).toContain('(it holds another save than the one served)')
    expect(loads.lockHeld).toEqual([])
  })
})
