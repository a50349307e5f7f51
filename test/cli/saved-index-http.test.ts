/**
 * What HTTP answers of a real `toolsel serve` say about the saved indexes under it, damaged by
 * other processes (indexes written by `toolsel index`, files cut short in place):
 * - a PUT of the tools a library holds already answers "unchanged" only when its saved files
 *   still load; a damaged disk copy (in place: the index watch sees no commit) is built and
 *   saved again, so that a restart serves it;
 * - `/readyz` failedIndexes says why an index did not load without this host's paths (the tool
 *   file of its rebuild hint, the index directory); the log keeps them.
 */
import { rename, writeFile } from 'node:fs/promises'
import { join } from 'node:path'
import { describe, expect, it } from 'vitest'
import { callFresh as call } from '../helpers/fresh-request.ts'
import { servePerTest } from '../helpers/serve-per-test.ts'
import { toolselHere } from '../helpers/toolsel-here.ts'

const { workDir, serve } = servePerTest('toolsel-saved-index-http-')

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
    const work = await workDir()
    const indexDir = join(work, 'indexes')
    const env = { TOOLSEL_INDEX_WATCH_MS: '200' }
    let server = await serve([], { indexDir, env })
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
      /"parcels": the served index holds these tools but its copy on disk is not that save \(/,
    )

    // A restart loads what the PUT saved.
    server = await serve([], { indexDir, env })
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

/** `toolsel index <file> --name <name>` into `indexDir` (in this process: the index is set-up). */
const index = (indexDir: string, file: string, name: string) =>
  toolselHere(indexDir, 'index', file, '--name', name)

async function failedIndexes(url: string): Promise<Array<{ name: string; error: string }>> {
  return (
    JSON.parse((await call(url, 'GET', '/readyz')).text) as {
      failedIndexes: Array<{ name: string; error: string }>
    }
  ).failedIndexes
}

describe('/readyz failedIndexes names no path of the host', () => {
  it('at start-up and for a commit the index watch could not load', async () => {
    const work = await workDir()
    const indexDir = join(work, 'indexes')
    const file = join(work, 'parcels.json')
    await writeFile(
      file,
      JSON.stringify([{ name: 'lookup_parcel', description: 'Track a parcel by its number.' }]),
    )
    await index(indexDir, file, 'parcels')
    await writeFile(join(indexDir, 'parcels', 'tools.jsonl'), '{')

    const server = await serve([], { indexDir, env: { TOOLSEL_INDEX_WATCH_MS: '200' } })
    const atStart = await failedIndexes(server.url)
    expect(atStart).toEqual([
      {
        name: 'parcels',
        error:
          'Index "parcels" at <library.indexDir>/parcels: its tools file is unreadable. Rebuild it with: toolsel index <file> --name parcels.',
      },
    ])
    // The log keeps them.
    expect(server.logs()).toContain(`Rebuild it with: toolsel index ${file} --name parcels.`)

    // A commit of another process that does not load (built elsewhere, damaged, renamed in).
    const elsewhere = join(work, 'elsewhere')
    await index(elsewhere, file, 'other')
    await writeFile(join(elsewhere, 'other', 'tools.jsonl'), '{')
    await rename(join(elsewhere, 'other'), join(indexDir, 'other'))
    const deadline = Date.now() + 20_000
    while ((await failedIndexes(server.url)).length < 2 && Date.now() < deadline)
      await new Promise((resolve) => setTimeout(resolve, 100))
    const both = await failedIndexes(server.url)
    expect(both.map((failed) => failed.name)).toEqual(['parcels', 'other'])
    expect(both[1].error).toContain('Rebuild it with: toolsel index <file> --name other.')
    expect(JSON.stringify(both)).not.toContain(work)
  }, 120_000)
})
