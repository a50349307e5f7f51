/**
 * A stopping server's library writes (`ToolselService.settleWrites`, round 52): waited for until
 * the grace's end, then abandoned through the service's stop signal, which reaches the index
 * staging (checked between the files it writes). A usage-example write held mid-write
 * (TOOLSEL_TEST_HOLD_IN_INDEX_WRITE_FILE, the process running on) is stopped: rejected, its
 * staged directory removed, the saved examples as they were, counted as unfinished; a write
 * called after the abort does not start. Before, nothing but the write's own request could stop
 * it, and the staging not even that. An abandoned snapshot's error names it a snapshot (round 54;
 * was "this library write").
 */
import { existsSync, readFileSync } from 'node:fs'
import { mkdtemp, readdir, rm, writeFile } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { afterEach, describe, expect, it, vi } from 'vitest'
import { loadIndexedLibrary } from '../../src/store/library-lifecycle.ts'
import { until } from '../helpers/process-wait.ts'
import { createTestApp } from '../server/test-service.ts'

const dirs: string[] = []
afterEach(async () => {
  vi.unstubAllEnvs()
  for (const dir of dirs.splice(0)) await rm(dir, { recursive: true, force: true })
})

const example = (instruction: string) => ({ instruction, tools: ['weather.get_forecast'] })

describe('ToolselService.settleWrites', () => {
  it('waits for the writes that settle by the deadline: none unfinished', async () => {
    const { service, indexDir } = await createTestApp()
    dirs.push(indexDir)
    const write = service.addExamples('sample', [example('kept example')])
    expect(await service.settleWrites(Date.now() + 30_000, 1000)).toEqual({
      unfinished: 0,
      unsettled: 0,
    })
    await expect(write).resolves.toMatchObject({ added: 1, version: 1 })
  })

  it('abandons a write held mid-write at the deadline: rejected, its staged directory removed, nothing saved; later writes do not start', async () => {
    const { service, indexDir } = await createTestApp()
    dirs.push(indexDir)
    await service.addExamples('sample', [example('saved before')])
    const work = await mkdtemp(join(tmpdir(), 'toolsel-settle-'))
    dirs.push(work)
    const hold = join(work, 'hold')
    await writeFile(hold, '')
    vi.stubEnv('TOOLSEL_TEST_HOLD_IN_INDEX_WRITE_FILE', hold)
    const held = service.addExamples('sample', [example('held mid-write')])
    void held.catch(() => undefined)
    await until('the write to hold', () => readFileSync(hold, 'utf8') === 'held', 30_000)
    expect((await readdir(indexDir)).filter((entry) => entry.startsWith('.tmp-'))).toHaveLength(1)

    const settled = await service.settleWrites(Date.now() + 100, 5000)
    expect(settled).toEqual({ unfinished: 1, unsettled: 0 })
    await expect(held).rejects.toMatchObject({
      code: 'ABORTED',
      message: expect.stringContaining('The server is stopping: this library write was abandoned'),
    })
    // Stopped by the abort, not by the hold's end.
    expect(existsSync(hold)).toBe(true)
    expect((await readdir(indexDir)).filter((entry) => entry.startsWith('.tmp-'))).toEqual([])
    const saved = await loadIndexedLibrary(join(indexDir, 'sample'), service.config)
    expect(saved.examples!.set.examples.map((one) => one.instruction)).toEqual(['saved before'])
    expect(service.library('sample').examples!.set.size).toBe(1)

    await rm(hold)
    await expect(service.addExamples('sample', [example('after the stop')])).rejects.toMatchObject({
      code: 'ABORTED',
    })
    await expect(service.deleteLibrary('sample')).rejects.toMatchObject({ code: 'ABORTED' })
  })

  it('names an abandoned snapshot a snapshot, not a library write (round 54), held or called after the stop', async () => {
    const work = await mkdtemp(join(tmpdir(), 'toolsel-settle-'))
    dirs.push(work)
    const snapshotDir = join(work, 'snapshots')
    const { service, indexDir } = await createTestApp({ config: { library: { snapshotDir } } })
    dirs.push(indexDir)
    // Saved, so that the snapshot has a library to write.
    await service.addExamples('sample', [example('saved before')])
    const hold = join(work, 'hold')
    await writeFile(hold, '')
    vi.stubEnv('TOOLSEL_TEST_HOLD_IN_INDEX_WRITE_FILE', hold)
    const held = service.snapshot()
    void held.catch(() => undefined)
    await until('the snapshot to hold', () => readFileSync(hold, 'utf8') === 'held', 30_000)

    expect(await service.settleWrites(Date.now() + 100, 5000)).toEqual({
      unfinished: 1,
      unsettled: 0,
    })
    // Before: "this library write was abandoned" for a snapshot too.
    const abandoned = {
      code: 'ABORTED',
      message: expect.stringMatching(/^The server is stopping: this snapshot was abandoned /),
    }
    await expect(held).rejects.toMatchObject(abandoned)
    expect(existsSync(hold)).toBe(true)
    expect(await readdir(snapshotDir)).toEqual([])
    await rm(hold)
    await expect(service.snapshot()).rejects.toMatchObject(abandoned)
  })

  it('leaves no signal of a settled write linked to the server stop: only writes under way are aborted', async () => {
    // Before: each write's signal was AbortSignal.any([its request's, the service's stop signal]),
    // a signal that lives as long as the process: on Node 20 it keeps every signal made from it
    // (nodejs/node#55351), one more per write, never freed; so the stop aborted a signal that a
    // write settled long ago had handed to AbortSignal.any.
    const { service, indexDir } = await createTestApp()
    dirs.push(indexDir)
    const any = vi.spyOn(AbortSignal, 'any')
    try {
      const request = new AbortController()
      await service.addExamples('sample', [example('with its request signal')], {
        signal: request.signal,
      })
      const linked = any.mock.calls.flatMap(([signals]) => [...signals])
      expect(linked.length).toBeGreaterThan(0)

      // A write held mid-write, abandoned by the stop.
      const work = await mkdtemp(join(tmpdir(), 'toolsel-settle-'))
      dirs.push(work)
      const hold = join(work, 'hold')
      await writeFile(hold, '')
      vi.stubEnv('TOOLSEL_TEST_HOLD_IN_INDEX_WRITE_FILE', hold)
      const held = service.addExamples('sample', [example('held mid-write')], {
        signal: new AbortController().signal,
      })
      void held.catch(() => undefined)
      await until('the write to hold', () => readFileSync(hold, 'utf8') === 'held', 30_000)
      expect(await service.settleWrites(Date.now(), 5000)).toEqual({ unfinished: 1, unsettled: 0 })
      await expect(held).rejects.toMatchObject({ code: 'ABORTED' })
      // The settled write's signals are as it left them: not aborted by the stop.
      expect(linked.filter((signal) => signal.aborted)).toEqual([])
    } finally {
      any.mockRestore()
    }
  })
})
