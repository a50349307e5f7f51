/**
 * #10 hardening: a usage-example write whose client got an error (timeout, client gone) is never
 * saved, also when other writes applied together with it keep the rebuild going: at the commit
 * point each write is asked (`beforeCommit`, the HTTP routes' commit claim, and its signal); one
 * that drops out is left out and the others are rebuilt and saved without it.
 */
import { join } from 'node:path'
import { describe, expect, it } from 'vitest'
import { ToolselError } from '../../src/errors.ts'
import { loadIndexedLibrary } from '../../src/store/library-lifecycle.ts'
import { createTestApp } from '../server/test-service.ts'

const timedOut = () => {
  throw new ToolselError('TIMEOUT', 'The request took longer than its limit.')
}

async function savedInstructions(service: Awaited<ReturnType<typeof createTestApp>>['service']) {
  const saved = await loadIndexedLibrary(
    join(service.config.library.indexDir, 'sample'),
    service.config,
  )
  return saved.examples!.set.examples.map((example) => example.instruction)
}

describe('a usage-example write whose client got an error', () => {
  it('is not saved when it is alone', async () => {
    const { service } = await createTestApp()
    await service.addExamples('sample', [
      { instruction: 'first kept example', tools: ['weather.get_forecast'] },
    ])
    const before = service.library('sample')
    await expect(
      service.addExamples(
        'sample',
        [{ instruction: 'abandoned example', tools: ['weather.get_forecast'] }],
        { beforeCommit: timedOut },
      ),
    ).rejects.toMatchObject({ code: 'TIMEOUT' })
    expect(service.library('sample')).toBe(before)
    expect(await savedInstructions(service)).toEqual(['first kept example'])
  })

  it('is left out of a batch whose other writes are saved', async () => {
    const { service, logger } = await createTestApp()
    const lines = (logger as unknown as { lines: string[] }).lines
    const first = service.addExamples('sample', [
      { instruction: 'first write', tools: ['weather.get_forecast'] },
    ])
    // The first write is being built; these two wait for it and then go together.
    await new Promise((resolve) => setImmediate(resolve))
    const controller = new AbortController()
    const batch = [
      service.addExamples(
        'sample',
        [{ instruction: 'abandoned write', tools: ['weather.get_forecast'] }],
        { beforeCommit: timedOut },
      ),
      service.addExamples(
        'sample',
        [{ instruction: 'aborted write', tools: ['weather.get_forecast'] }],
        {
          signal: controller.signal,
          // Its client goes away once the batch's rebuild is done, at another write's commit check.
          beforeCommit: () => undefined,
        },
      ),
      service.addExamples(
        'sample',
        [{ instruction: 'kept write', tools: ['weather.get_forecast'] }],
        {
          beforeCommit: () => {
            if (!controller.signal.aborted) controller.abort(new ToolselError('ABORTED', 'gone'))
          },
        },
      ),
    ]
    const settled = await Promise.allSettled([first, ...batch])
    expect(settled[0]).toMatchObject({ status: 'fulfilled', value: { added: 1, version: 1 } })
    expect(settled[1]).toMatchObject({ status: 'rejected', reason: { code: 'TIMEOUT' } })
    expect(settled[2]).toMatchObject({ status: 'rejected', reason: { code: 'ABORTED' } })
    // The kept write's counts are those of the version saved without the two others.
    expect(settled[3]).toMatchObject({
      status: 'fulfilled',
      value: { added: 1, version: 2, examples: 2 },
    })
    const served = service.library('sample').examples!.set
    expect(served.examples.map((example) => example.instruction)).toEqual([
      'first write',
      'kept write',
    ])
    expect(await savedInstructions(service)).toEqual(['first write', 'kept write'])
    expect(lines.some((line) => line.includes('rebuilt without abandoned requests'))).toBe(true)
  })
})
