import { mkdir, mkdtemp, readFile, rename, rm, utimes, writeFile } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { afterEach, describe, expect, it, vi } from 'vitest'
import { ENV_VARS } from '../../src/config/env-vars.ts'
import { parseConfig } from '../../src/config/load-config.ts'
import { defaultConfig } from '../../src/config/schema.ts'
import { createLogger } from '../../src/log.ts'
import {
  IndexDirPoller,
  pickUpCommits,
  RETRY_LIMIT,
  retryBackoffMs,
  retryTestOptions,
} from '../../src/service/index-dir-watch.ts'
import { LibraryRegistry } from '../../src/service/library-registry.ts'
import type { FailedIndex } from '../../src/service/load-libraries.ts'
import { indexTools, publishLibrary } from '../../src/store/library-lifecycle.ts'

let root: string | undefined
afterEach(async () => {
  if (root) await rm(root, { recursive: true, force: true })
})

const past = (seconds: number) => new Date(Date.now() - seconds * 1000)

describe('IndexDirPoller', () => {
  it('reports added, recommitted and deleted manifests; the directory is read again while its timestamp is recent (a second change may share it), then one stat per idle poll', async () => {
    root = await mkdtemp(join(tmpdir(), 'toolsel-poll-'))
    const dir = join(root, 'indexes')
    const commit = async (name: string, text: string) => {
      const work = join(root!, `work-${name}-${text}`)
      await mkdir(work)
      await writeFile(join(work, 'manifest.json'), text)
      await rm(join(dir, name), { recursive: true, force: true })
      await rename(work, join(dir, name))
    }
    const poller = new IndexDirPoller(dir, 1000, async () => {})
    // No directory yet: nothing, and nothing to report once there.
    await poller.baseline()
    await mkdir(dir)
    await commit('a', '{"v":1}')
    expect(await poller.poll()).toEqual(['a'])
    await commit('b', '{}')
    await commit('a', '{"v":2}')
    expect(await poller.poll()).toEqual(['a', 'b'])
    // The directory's timestamp is recent: every poll reads it until it settles, even unchanged.
    const scans = poller.counts.scans
    expect(await poller.poll()).toEqual([])
    expect(await poller.poll()).toEqual([])
    expect(poller.counts.scans).toBe(scans + 2)
    // Settled (the timestamp is old): one stat per poll, no scan.
    const old = past(60)
    await utimes(dir, old, old)
    await poller.poll()
    const settled = poller.counts.scans
    for (let poll = 0; poll < 5; poll += 1) expect(await poller.poll()).toEqual([])
    expect(poller.counts.scans).toBe(settled)
    await rm(join(dir, 'b'), { recursive: true })
    expect(await poller.poll()).toEqual(['b'])
  })
})

describe('IndexDirPoller: failed commits', () => {
  it('keeps a name that failed for another try, starts its backoff afresh on a new commit, forgets it once it loads', async () => {
    expect([1, 2, 3, 4, 5, 6, 7, 20].map((n) => retryBackoffMs(n))).toEqual([
      2000, 4000, 8000, 16000, 32000, 60000, 60000, 60000,
    ])
    root = await mkdtemp(join(tmpdir(), 'toolsel-poll-retry-'))
    const dir = join(root, 'indexes')
    await mkdir(join(dir, 'a'), { recursive: true })
    const calls: Array<[string[], boolean]> = []
    let failing = ['a']
    const poller = new IndexDirPoller(dir, 1000, async (names, { retry }) => {
      calls.push([names, retry])
      return names.filter((name) => failing.includes(name))
    })
    await poller.baseline()
    await writeFile(join(dir, 'a', 'manifest.json'), '{}')
    await rename(join(dir, 'a'), join(root, 'a-old'))
    await mkdir(join(dir, 'a'))
    await writeFile(join(dir, 'a', 'manifest.json'), '{"v":2}')
    expect(await poller.poll()).toEqual(['a'])
    expect(calls).toEqual([[['a'], false]])
    expect(poller.retrying()).toEqual(['a'])
    // Not due yet (2 s): the next poll hands nothing over.
    await poller.poll()
    expect(calls).toHaveLength(1)
    // Skipped at start-up: waits for its first try too.
    poller.retryLater(['b'])
    expect(poller.retrying()).toEqual(['a', 'b'])
    // Deleted: reported as a change (a new commit of the name), loads, no more tries.
    failing = []
    await rm(join(dir, 'a'), { recursive: true })
    expect(await poller.poll()).toEqual(['a'])
    expect(poller.retrying()).toEqual(['b'])
  })

  it.each([
    { limit: undefined, tried: RETRY_LIMIT },
    { limit: 3, tried: 3 },
    { limit: 0, tried: 0 },
  ])(
    'gives up on a commit after its retry limit ($limit: $tried tries), the last marked lastTry; a new commit is tried again',
    async ({ limit, tried }) => {
      root = await mkdtemp(join(tmpdir(), 'toolsel-poll-give-up-'))
      const dir = join(root, 'indexes')
      await mkdir(join(dir, 'a'), { recursive: true })
      await writeFile(join(dir, 'a', 'manifest.json'), '{}')
      const tries: Array<{ lastTry: boolean }> = []
      const poller = new IndexDirPoller(
        dir,
        1000,
        async (names, { retry, lastTry }) => {
          if (retry) tries.push({ lastTry: lastTry === true })
          return names
        },
        limit === undefined ? {} : { retryLimit: limit },
      )
      expect(poller.retryLimit).toBe(tried)
      await poller.baseline()
      // The clock moves a minute a poll (no wait): every poll finds the next try due.
      vi.useFakeTimers({ toFake: ['Date'] })
      try {
        poller.retryLater(['a'])
        for (let poll = 0; poll < RETRY_LIMIT + 5; poll += 1) {
          vi.setSystemTime(Date.now() + 61_000)
          await poller.poll()
        }
        expect(tries).toHaveLength(tried)
        expect(tries.map((one) => one.lastTry)).toEqual(
          Array.from({ length: tried }, (_, at) => at === tried - 1),
        )
        expect(poller.retrying()).toEqual([])
        // A new commit of it: handed over as a change, and tried again after it fails (unless
        // the limit is 0).
        await rename(join(dir, 'a'), join(root, 'a-old'))
        await mkdir(join(dir, 'a'))
        await writeFile(join(dir, 'a', 'manifest.json'), '{"v":2}')
        vi.setSystemTime(Date.now() + 61_000)
        expect(await poller.poll()).toEqual(['a'])
        expect(poller.retrying()).toEqual(tried === 0 ? [] : ['a'])
      } finally {
        vi.useRealTimers()
      }
    },
  )

  it('test switches: the first wait shortened (100-2,000 ms, else an error) and the tries held while the hold file exists, untried and uncounted', async () => {
    expect([1, 2, 3, 7].map((n) => retryBackoffMs(n, 100))).toEqual([100, 200, 400, 6400])
    root = await mkdtemp(join(tmpdir(), 'toolsel-poll-test-switches-'))
    const hold = join(root, 'hold')
    const env = (base?: string, file?: string) => {
      vi.stubEnv('TOOLSEL_TEST_INDEX_RETRY_BASE_MS', base)
      vi.stubEnv('TOOLSEL_TEST_INDEX_RETRY_HOLD_FILE', file)
    }
    try {
      env()
      expect(retryTestOptions()).toEqual({})
      for (const wrong of ['99', '2001', '150.5', 'fast'])
        expect(() => (env(wrong), retryTestOptions())).toThrow(
          /TOOLSEL_TEST_INDEX_RETRY_BASE_MS .* an integer 100-2000/,
        )
      env('100', hold)
      const options = retryTestOptions()
      expect(options.retryBaseMs).toBe(100)
      const dir = join(root, 'indexes')
      await mkdir(dir)
      const tries: number[] = []
      const poller = new IndexDirPoller(
        dir,
        1000,
        async (names, { retry }) => {
          if (retry) tries.push(Date.now())
          return names
        },
        options,
      )
      await poller.baseline()
      vi.useFakeTimers({ toFake: ['Date'] })
      poller.retryLater(['a'])
      // Due after 100 ms (not 2 s).
      vi.setSystemTime(Date.now() + 99)
      await poller.poll()
      expect(tries).toHaveLength(0)
      vi.setSystemTime(Date.now() + 1)
      await poller.poll()
      expect(tries).toHaveLength(1)
      // Held: due (200 ms later) but not tried, and the file says so.
      await writeFile(hold, '')
      vi.setSystemTime(Date.now() + 60_000)
      await poller.poll()
      await poller.poll()
      expect(tries).toHaveLength(1)
      expect(await readFile(hold, 'utf8')).toBe('held')
      // Let go: tried at the next poll, the third try 400 ms after it (uncounted while held).
      await rm(hold)
      await poller.poll()
      expect(tries).toHaveLength(2)
      vi.setSystemTime(Date.now() + 399)
      await poller.poll()
      expect(tries).toHaveLength(2)
      vi.setSystemTime(Date.now() + 1)
      await poller.poll()
      expect(tries).toHaveLength(3)
      // The hold file is not made by a poll that has nothing due.
      expect(await readFile(hold, 'utf8').catch((error: NodeJS.ErrnoException) => error.code)).toBe(
        'ENOENT',
      )
    } finally {
      vi.useRealTimers()
      vi.unstubAllEnvs()
    }
  })

  it('server.indexRetryLimit: 0 to 1000, default RETRY_LIMIT, env TOOLSEL_INDEX_RETRY_LIMIT', () => {
    expect(defaultConfig().server.indexRetryLimit).toBe(RETRY_LIMIT)
    expect(parseConfig({ server: { indexRetryLimit: 0 } }).server.indexRetryLimit).toBe(0)
    expect(() => parseConfig({ server: { indexRetryLimit: 1001 } })).toThrow(/indexRetryLimit/)
    expect(() => parseConfig({ server: { indexRetryLimit: 2.5 } })).toThrow(/indexRetryLimit/)
    expect(ENV_VARS.TOOLSEL_INDEX_RETRY_LIMIT.path).toBe('server.indexRetryLimit')
  })
})

describe('pickUpCommits', () => {
  it("keeps what is served when the poll reports the service's own commit, serves another process's, and leaves in-memory libraries alone", async () => {
    root = await mkdtemp(join(tmpdir(), 'toolsel-pickup-'))
    const config = defaultConfig()
    config.library.indexDir = join(root, 'indexes')
    const indexDir = config.library.indexDir
    const libraries = new LibraryRegistry()
    const failedIndexes: FailedIndex[] = []
    const target = {
      config,
      logger: createLogger('silent'),
      libraries,
      defaultLibraryName: 'memory',
      failedIndexes,
    }
    const tools = (name: string) => [
      {
        id: name,
        name,
        description: `Tool ${name}.`,
        parameters: { type: 'object', properties: {} },
      },
    ]
    // Served from memory only (a tool file's): an index saved under its name is not served.
    libraries.set(await indexTools('memory', tools('m1'), config))
    const mine = await publishLibrary(libraries, await indexTools('mine', tools('x1'), config), {
      indexDir,
    })
    // Another process's commits: one served here already (replaced), one new, one in-memory's.
    const other = new LibraryRegistry()
    await publishLibrary(other, await indexTools('mine', tools('x2'), config), { indexDir })
    await publishLibrary(other, await indexTools('fresh', tools('f1'), config), { indexDir })
    await publishLibrary(other, await indexTools('memory', tools('m2'), config), { indexDir })
    const memory = libraries.get('memory')
    expect(await pickUpCommits(target, ['fresh', 'memory', 'mine'])).toEqual([])
    expect(libraries.get('memory')).toBe(memory)
    expect(libraries.get('mine')).not.toBe(mine)
    expect(libraries.get('mine')!.library.ids).toEqual(['x2'])
    expect(libraries.get('fresh')!.library.ids).toEqual(['f1'])
    // Reported again (the poll saw its own swap, say): the version served is kept as it is.
    const served = libraries.get('mine')
    await pickUpCommits(target, ['mine'])
    expect(libraries.get('mine')).toBe(served)
    expect(failedIndexes).toEqual([])
  })

  it('forgets a failed commit in the same step as it serves the repaired one (no moment with the new version served and the old failure listed)', async () => {
    root = await mkdtemp(join(tmpdir(), 'toolsel-pickup-'))
    const config = defaultConfig()
    config.library.indexDir = join(root, 'indexes')
    const indexDir = config.library.indexDir
    const libraries = new LibraryRegistry()
    const tool = (id: string) => ({
      id,
      name: id,
      description: `Tool ${id}.`,
      parameters: { type: 'object', properties: {} },
    })
    const failedIndexes: FailedIndex[] = [
      { name: 'parcels', error: 'an earlier commit failed' },
      { name: 'other', error: 'an earlier commit failed' },
    ]
    const target = {
      config,
      logger: createLogger('silent'),
      libraries,
      defaultLibraryName: 'memory',
      failedIndexes,
    }
    const served = await publishLibrary(
      libraries,
      await indexTools('parcels', [tool('p1')], config),
      {
        indexDir,
      },
    )
    // Another process commits a repaired version: what a request sees right after the swap.
    const other = new LibraryRegistry()
    await publishLibrary(other, await indexTools('parcels', [tool('p2')], config), { indexDir })
    const seenAtSwap: string[][] = []
    libraries.onChange(() => {
      // The next microtask: before syncSavedLibrary's lock release lets pickUpCommits go on.
      queueMicrotask(() => seenAtSwap.push(failedIndexes.map((entry) => entry.name)))
    })
    expect(await pickUpCommits(target, ['parcels'])).toEqual([])
    expect(libraries.get('parcels')).not.toBe(served)
    expect(seenAtSwap).toEqual([['other']])
    expect(failedIndexes.map((entry) => entry.name)).toEqual(['other'])
  })
})
