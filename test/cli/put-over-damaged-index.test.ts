/**
 * A PUT of the tools a library holds already answers "unchanged" only when its saved files still
 * load: a disk copy damaged under a running `toolsel serve` (by another process, in place: the
 * index watch sees no commit) is built and saved again, so that a restart serves it.
 */
import { mkdtemp, rm, writeFile } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { afterEach, describe, expect, it } from 'vitest'
import { callFresh as call } from '../helpers/fresh-request.ts'
import { startServe, type RunningServe } from '../helpers/start-serve.ts'

let server: RunningServe | undefined
let work: string | undefined

afterEach(async () => {
  await server?.stop()
  server = undefined
  if (work) await rm(work, { recursive: true, force: true })
})

const PARCELS = JSON.stringify([
  { name: 'lookup_parcel', description: 'Track a parcel by its tracking number.' },
  { name: 'cancel_parcel', description: 'Cancel a parcel delivery.' },
])

interface PutAnswer {
  unchanged: boolean
  warnings?: string[]
}

describe('PUT of the same tools over a damaged disk copy', () => {
  it('builds and saves it again (with a warning naming no path); a restart then serves it', async () => {
    work = await mkdtemp(join(tmpdir(), 'toolsel-put-damaged-'))
    const indexDir = join(work, 'indexes')
    const env = { TOOLSEL_INDEX_WATCH_MS: '200' }
    server = await startServe([], { indexDir, env })
    const first = await call(server.url, 'PUT', '/v1/libraries/parcels', PARCELS)
    expect(first.status, first.text).toBe(201)
    const same = await call(server.url, 'PUT', '/v1/libraries/parcels', PARCELS)
    expect((JSON.parse(same.text) as PutAnswer).unchanged).toBe(true)

    for (const damage of ['bm25.bin', 'tools.jsonl']) {
      // Cut short in place by another process (no commit: the manifest stays).
      await writeFile(join(indexDir, 'parcels', damage), '{')
      const again = await call(server.url, 'PUT', '/v1/libraries/parcels', PARCELS)
      expect(again.status, again.text).toBe(200)
      const answer = JSON.parse(again.text) as PutAnswer
      expect(answer.unchanged, damage).toBe(false)
      expect(answer.warnings).toEqual([
        'The saved index of library "parcels" held these tools but its files did not load (damaged or replaced on disk); it was built and saved again.',
      ])
      expect(again.text).not.toContain(work)
      // Whole again: the next PUT of them changes nothing.
      const after = await call(server.url, 'PUT', '/v1/libraries/parcels', PARCELS)
      expect((JSON.parse(after.text) as PutAnswer).unchanged, damage).toBe(true)
    }
    expect(server.logs()).toMatch(
      /"parcels": the saved index holds these tools but its files do not load as saved \(/,
    )

    // A restart loads what the PUT saved.
    await server.stop()
    server = await startServe([], { indexDir, env })
    const ready = JSON.parse((await call(server.url, 'GET', '/readyz')).text) as {
      failedIndexes: unknown[]
    }
    expect(ready.failedIndexes).toEqual([])
    const picked = await call(
      server.url,
      'POST',
      '/v1/select-tools',
      JSON.stringify({ instruction: 'track my parcel', library: 'parcels' }),
    )
    expect(picked.status, picked.text).toBe(200)
  }, 120_000)
})
