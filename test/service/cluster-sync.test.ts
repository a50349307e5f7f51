/**
 * `WorkerLibrarySync.close()` (the worker side of `toolsel serve --workers N`): it stops relaying
 * this worker's library changes and applying the others', and gives back its registry listener
 * and its `process.on('message')` handler. The primary's messages are emitted on `process` as
 * node:cluster delivers them; what the worker sends goes to a recording `process.send` (other
 * messages still reach the test runner's channel).
 */
import { existsSync } from 'node:fs'
import { mkdtemp, rm, writeFile } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { afterEach, describe, expect, it } from 'vitest'
import { createComponents } from '../../src/components.ts'
import { parseConfig } from '../../src/config/load-config.ts'
import { ToolLibrary } from '../../src/library/tool-library.ts'
import { createMemoryLogger } from '../../src/log.ts'
import { WorkerLibrarySync } from '../../src/service/cluster-sync.ts'
import { LibraryRegistry } from '../../src/service/library-registry.ts'
import { ToolselService } from '../../src/service/toolsel-service.ts'
import { withLibraryLock } from '../../src/store/index-dir-claims.ts'
import { failedIndex, type FailedIndex } from '../../src/service/load-libraries.ts'
import {
  buildIndexedLibrary,
  loadIndexedLibrary,
  saveIndexedLibrary,
} from '../../src/store/library-lifecycle.ts'
import { SAMPLE_TOOLS } from '../helpers/sample-tools.ts'

const config = parseConfig({ log: { level: 'silent' } })
const originalSend = process.send

/**
 * Records what the worker sends to the primary (and passes anything else on), but its reports of
 * failed indexes (test/cli/index-watch.test.ts follows those between real processes).
 */
function recordSends(): { toolsel?: string; id?: number; failures?: string[] }[] {
  const sent: { toolsel?: string; id?: number; failures?: string[] }[] = []
  process.send = ((message: unknown, ...rest: unknown[]) => {
    const kind = (message as { toolsel?: unknown } | null)?.toolsel
    if (kind === 'failed') {
      // The primary's answer: the union of every worker's (here this one's).
      const { failedIndexes } = message as { failedIndexes: unknown[] }
      setImmediate(() => fromPrimary({ toolsel: 'failedIndexes', failedIndexes }))
      return true
    }
    if (kind !== undefined) {
      sent.push(message as (typeof sent)[number])
      return true
    }
    return (originalSend as (...args: unknown[]) => boolean).call(process, message, ...rest)
  }) as typeof process.send
  return sent
}

/** A message from the primary, as node:cluster delivers it to a worker. */
function fromPrimary(message: unknown): void {
  ;(process as NodeJS.EventEmitter).emit('message', message)
}

afterEach(() => {
  process.send = originalSend
})

async function sampleLibrary(dir?: string) {
  const indexed = await buildIndexedLibrary(new ToolLibrary('sample', SAMPLE_TOOLS), config)
  return { ...indexed, dir }
}

describe('WorkerLibrarySync.close', () => {
  it('gives back its registry listener and message handler; applies nothing after', async () => {
    const sent = recordSends()
    const registry = new LibraryRegistry()
    const listeners = process.listenerCount('message')
    const syncs = Array.from(
      { length: 3 },
      () => new WorkerLibrarySync(registry, config, createMemoryLogger()),
    )
    expect(registry.listenerCount).toBe(3)
    expect(process.listenerCount('message')).toBe(listeners + 3)
    // Each subscribes as it is made; the primary answers, and the open one starts applying.
    expect(sent.splice(0)).toEqual(Array(3).fill({ toolsel: 'subscribe' }))
    fromPrimary({ toolsel: 'subscribed' })
    await syncs[0].reconcile()
    for (const sync of syncs.slice(1)) sync.close()
    syncs[1].close() // again: nothing more to give back
    expect(registry.listenerCount).toBe(1)
    expect(process.listenerCount('message')).toBe(listeners + 1)

    // The open one applies another worker's delete and says so; the closed ones don't.
    registry.set(await sampleLibrary())
    fromPrimary({
      toolsel: 'apply',
      id: 7,
      changes: [{ name: 'sample', dir: null }],
    })
    await expect.poll(() => sent.length).toBe(1)
    expect(sent[0]).toEqual({ toolsel: 'applied', id: 7, failures: [] })
    expect(registry.get('sample')).toBeUndefined()

    syncs[0].close()
    expect(registry.listenerCount).toBe(0)
    expect(process.listenerCount('message')).toBe(listeners)
    registry.set(await sampleLibrary())
    fromPrimary({
      toolsel: 'apply',
      id: 8,
      changes: [{ name: 'sample', dir: null }],
    })
    await new Promise((resolve) => setImmediate(resolve))
    expect(registry.get('sample')).toBeDefined()
    expect(sent).toHaveLength(1)
  })

  it('releases a flush still waiting for the other workers, and relays nothing after', async () => {
    const sent = recordSends()
    const registry = new LibraryRegistry()
    const logger = createMemoryLogger()
    const sync = new WorkerLibrarySync(registry, config, logger)
    fromPrimary({ toolsel: 'subscribed' })
    await sync.reconcile()
    expect(sent.splice(0)).toEqual([{ toolsel: 'subscribe' }])
    registry.set(await sampleLibrary('/saved/sample'))
    const flushed = sync.flush()
    await expect.poll(() => sent.length).toBe(1)
    expect(sent[0]).toMatchObject({ toolsel: 'sync', id: 1 })
    // No 'synced' comes (the primary is going away): close lets the request be answered.
    sync.close()
    await flushed
    expect(logger.lines.join('\n')).toContain('this worker stopped before all had it')
    registry.delete('sample')
    await sync.flush()
    expect(sent).toHaveLength(1)
  })

  it('answers relays at once while starting, and serves what is on disk once reconciled', async () => {
    const sent = recordSends()
    const indexDir = await mkdtemp(join(tmpdir(), 'toolsel-sync-start-'))
    try {
      const local = parseConfig({ library: { indexDir }, log: { level: 'silent' } })
      const build = (count: number) =>
        buildIndexedLibrary(new ToolLibrary('sample', SAMPLE_TOOLS.slice(0, count)), local, {
          source: { path: 'test' },
        })
      // The start-up load: version 1, read from the disk.
      await saveIndexedLibrary(indexDir, await build(2))
      const registry = new LibraryRegistry()
      registry.set(await loadIndexedLibrary(join(indexDir, 'sample'), local))
      const sync = new WorkerLibrarySync(registry, local, createMemoryLogger())
      // Another worker commits version 2 while this one still loads, and it is relayed here.
      await saveIndexedLibrary(indexDir, await build(3))
      fromPrimary({ toolsel: 'apply', id: 3, changes: [{ name: 'sample', dir: null }] })
      expect(sent).toEqual([{ toolsel: 'subscribe' }, { toolsel: 'applied', id: 3, failures: [] }])
      expect(registry.get('sample')!.library.size).toBe(2)
      fromPrimary({ toolsel: 'subscribed' })
      await sync.reconcile()
      expect(registry.get('sample')!.library.size).toBe(3)
      sync.close()
    } finally {
      await rm(indexDir, { recursive: true, force: true })
    }
  })

  it("lists a library its start-up reconcile could not load among its failed indexes, and is ready once it has the primary's union", async () => {
    const reports: FailedIndex[][] = []
    process.send = ((message: { toolsel?: string; failedIndexes?: FailedIndex[] }) => {
      if (message.toolsel === 'failed') {
        reports.push(message.failedIndexes!)
        // The primary's union comes one round trip later.
        setTimeout(() => fromPrimary({ toolsel: 'failedIndexes', failedIndexes: [] }), 50)
      }
      return true
    }) as typeof process.send
    const indexDir = await mkdtemp(join(tmpdir(), 'toolsel-sync-failed-'))
    try {
      const local = parseConfig({ library: { indexDir }, log: { level: 'silent' } })
      const build = (count: number) =>
        buildIndexedLibrary(new ToolLibrary('sample', SAMPLE_TOOLS.slice(0, count)), local, {
          source: { path: join(indexDir, 'tools-on-this-host.json') },
        })
      await saveIndexedLibrary(indexDir, await build(2))
      const registry = new LibraryRegistry()
      registry.set(await loadIndexedLibrary(join(indexDir, 'sample'), local))
      const own: FailedIndex[] = []
      let union: FailedIndex[] | undefined
      const sync = new WorkerLibrarySync(registry, local, createMemoryLogger(), {
        failedIndexes: () => own,
        onFailedIndexes: (all) => (union = all),
        onReconciled: async (name, dir, error) => {
          if (error !== undefined) own.push(await failedIndex(name, error, dir))
        },
      })
      // Committed while this worker loaded, and damaged: its reconcile can't load it.
      await saveIndexedLibrary(indexDir, await build(3))
      await writeFile(join(indexDir, 'sample', 'tools.jsonl'), '{')
      fromPrimary({ toolsel: 'subscribed' })
      await sync.reconcile()
      expect(registry.get('sample')!.library.size).toBe(2)
      expect(reports).toEqual([
        [
          {
            name: 'sample',
            error: expect.stringContaining('<library.indexDir>/sample') as unknown,
          },
        ],
      ])
      expect(JSON.stringify(reports)).not.toContain(indexDir)
      // Ready only once the union came.
      expect(union).toEqual([])
      sync.close()
    } finally {
      await rm(indexDir, { recursive: true, force: true })
    }
  })
})

describe('WorkerLibrarySync: a DELETE', () => {
  it("relays the deletion of another worker's commit even when a relay dropped the library from this worker meanwhile", async () => {
    // Until round 49 the DELETE's registry delete found nothing to drop and told no one: this
    // worker had passed `require`, then applied another worker's earlier deletion (the library
    // dropped) while it waited for the lock, and then deleted what a third commit had saved.
    // The others went on serving a library no longer on disk (serve-workers.test.ts, "leaves
    // every worker serving what is on disk", failed so at load 15).
    const sent = recordSends()
    const indexDir = await mkdtemp(join(tmpdir(), 'toolsel-sync-delete-'))
    try {
      const local = parseConfig({
        library: { default: 'demo', indexDir, loadAll: true },
        log: { level: 'silent' },
      })
      const logger = createMemoryLogger()
      const service = new ToolselService(local, logger, createComponents(local, logger))
      await service.start()
      const build = (count: number) =>
        buildIndexedLibrary(new ToolLibrary('sample', SAMPLE_TOOLS.slice(0, count)), local, {
          source: { path: 'test' },
        })
      await saveIndexedLibrary(indexDir, await build(2))
      service.libraries.set(await loadIndexedLibrary(join(indexDir, 'sample'), local))
      const sync = new WorkerLibrarySync(service.libraries, local, logger)
      fromPrimary({ toolsel: 'subscribed' })
      await sync.reconcile()
      expect(service.libraries.get('sample')!.library.size).toBe(2)
      sent.splice(0)
      // Another worker's commit, saved now.
      await saveIndexedLibrary(indexDir, await build(3))
      // This worker's DELETE passes `require`, then waits for the lock (held here) ...
      const registry = service.libraries
      const required = new Promise<void>((resolve) => {
        const require = registry.require.bind(registry)
        registry.require = (name) => {
          const held = require(name)
          if (name === 'sample') resolve()
          return held
        }
      })
      let deleted: Promise<void> | undefined
      await withLibraryLock(indexDir, 'sample', async () => {
        deleted = service.deleteLibrary('sample')
        await required
        // ... while a relay of an earlier deletion drops the library here (syncSavedLibrary
        // found none saved before the commit above).
        registry.delete('sample', { replicated: true })
      })
      await deleted
      expect(existsSync(join(indexDir, 'sample'))).toBe(false)
      // The deletion goes to the other workers, which still serve the commit it removed.
      const flushed = sync.flush()
      await expect.poll(() => sent.length).toBe(1)
      expect(sent[0]).toMatchObject({
        toolsel: 'sync',
        changes: [{ name: 'sample', dir: null }],
      })
      fromPrimary({ toolsel: 'synced', id: sent[0].id, failures: [] })
      await flushed
      sync.close()
    } finally {
      await rm(indexDir, { recursive: true, force: true })
    }
  })
})
