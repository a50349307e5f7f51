/**
 * Library writes that look at the disk do so under the library's lock, the one another process's
 * save commits under (round 50, srv55). Between that process's two renames (`commitStaged`: the
 * saved directory moved aside, the new one moved in) the library's directory is not there:
 * - a PUT of the tools it holds found its saved index "damaged", built and saved it again and
 *   answered `unchanged: false` with a warning that the files did not load, although a whole save
 *   was being put in place;
 * - a DELETE found nothing to delete (`deleteIndex` false: the service dropped the library and
 *   answered 204) while that save then committed: the library stayed saved on disk.
 * Here the other process is this test holding the real lock over a real index directory and
 * doing its renames; the service is a real ToolselService over that directory.
 */
import { rename } from 'node:fs/promises'
import { join } from 'node:path'
import { describe, expect, it } from 'vitest'
import { createComponents } from '../../src/components.ts'
import { parseConfig } from '../../src/config/load-config.ts'
import { ToolLibrary } from '../../src/library/tool-library.ts'
import { createMemoryLogger } from '../../src/log.ts'
import { ToolselService } from '../../src/service/toolsel-service.ts'
import { withLibraryLock } from '../../src/store/index-dir-claims.ts'
import {
  buildIndexedLibrary,
  deleteIndex,
  loadIndexedLibrary,
} from '../../src/store/library-lifecycle.ts'
import { pathExists } from '../../src/store/path-exists.ts'
import { SAMPLE_TOOLS } from '../helpers/sample-tools.ts'
import { createTestApp } from '../server/test-service.ts'

/**
 * A second service over `indexDir` serving its saved `lib` (another worker of `serve --workers`,
 * without the relay between them).
 */
async function secondService(indexDir: string): Promise<ToolselService> {
  const config = parseConfig({ library: { default: 'sample', indexDir, loadAll: true } })
  const logger = createMemoryLogger()
  const service = new ToolselService(config, logger, createComponents(config, logger))
  await service.start([
    await buildIndexedLibrary(new ToolLibrary('sample', SAMPLE_TOOLS), config),
    await loadIndexedLibrary(join(indexDir, 'lib'), config),
  ])
  return service
}

/** An MCP tools/list body of six tools. */
function mcpBody(): string {
  const tools = ['send', 'find', 'book', 'list', 'create', 'delete'].map((verb, index) => ({
    name: `${verb}_item_${index}`,
    description: `${verb} an item.`,
    inputSchema: { type: 'object', properties: { item: { type: 'string' } } },
  }))
  return JSON.stringify({ tools })
}

/**
 * Another process's commit of library `name` in `indexDir`: under its lock, the saved directory
 * renamed aside, then (once `during` settled, or after `waitMs`) the same directory renamed back
 * in: a save whole before and after. Resolves once the directory is aside, with the commit's end.
 */
async function commitBetweenRenames(
  indexDir: string,
  name: string,
  during: () => Promise<unknown>,
  waitMs = 1500,
): Promise<{ committed: Promise<void> }> {
  const target = join(indexDir, name)
  const aside = join(indexDir, `.other-process-${name}`)
  let asideNow!: () => void
  const moved = new Promise<void>((resolve) => (asideNow = resolve))
  const committed = withLibraryLock(indexDir, name, async () => {
    await rename(target, aside)
    asideNow()
    const work = during()
    await Promise.race([work.catch(() => undefined), new Promise((r) => setTimeout(r, waitMs))])
    await rename(aside, target)
  })
  await moved
  return { committed }
}

describe("library writes between another process's two renames", () => {
  it('a PUT of the tools saved waits for the commit and answers unchanged', async () => {
    const { service, indexDir } = await createTestApp()
    expect((await service.putLibrary('lib', mcpBody())).created).toBe(true)
    let put: ReturnType<typeof service.putLibrary> | undefined
    const { committed } = await commitBetweenRenames(indexDir, 'lib', () => {
      put = service.putLibrary('lib', mcpBody())
      return put
    })
    await committed
    const answer = await put!
    expect(answer.warnings).toEqual([])
    expect(answer.unchanged).toBe(true)
  })

  it('deleteIndex waits for the commit and deletes what it put in place', async () => {
    const { service, indexDir } = await createTestApp()
    await service.putLibrary('lib', mcpBody())
    let deleted: Promise<boolean> | undefined
    const { committed } = await commitBetweenRenames(indexDir, 'lib', () => {
      deleted = deleteIndex(indexDir, 'lib')
      return deleted
    })
    await committed
    expect(await deleted!).toBe(true)
    expect(await pathExists(join(indexDir, 'lib'))).toBe(false)
  })

  it('a DELETE through the service leaves nothing saved', async () => {
    const { service, indexDir } = await createTestApp()
    await service.putLibrary('lib', mcpBody())
    let deleting: Promise<void> | undefined
    const { committed } = await commitBetweenRenames(indexDir, 'lib', () => {
      deleting = service.deleteLibrary('lib')
      return deleting
    })
    await committed
    await deleting
    expect(await pathExists(join(indexDir, 'lib'))).toBe(false)
    expect(service.listLibraries().map((entry) => entry.name)).not.toContain('lib')
  })

  it('a PUT after another service deleted the library (not yet told) answers 201 created', async () => {
    const { service, indexDir } = await createTestApp()
    await service.putLibrary('lib', mcpBody())
    const other = await secondService(indexDir)
    await other.deleteLibrary('lib')
    expect(await pathExists(join(indexDir, 'lib'))).toBe(false)
    const answer = await service.putLibrary('lib', mcpBody())
    expect(answer).toMatchObject({ created: true, unchanged: false })
    expect(answer.warnings).toEqual([
      'The saved index of library "lib" was no longer on disk (deleted since this service loaded it); it was built and saved again.',
    ])
    expect(await pathExists(join(indexDir, 'lib'))).toBe(true)
    // And a PUT through the other one, which no longer serves it, replaces what is saved.
    expect((await other.putLibrary('lib', mcpBody())).created).toBe(false)
  })
})
