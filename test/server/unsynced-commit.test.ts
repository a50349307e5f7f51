/**
 * A write whose index directory can't be flushed to the disk after its commit (an fsync's EIO):
 * the write has happened (saved, served, and what a restart loads), so the client hears success
 * and the service logs a durability warning (a PUT's answer carries it too), rather than an
 * error for a change that is in place. The failure comes through the store's file system seam
 * (`indexFs`), over real HTTP and real files; `toolsel index` and `libraries delete` say it on
 * stderr and exit 0.
 */
import { mkdtemp, readdir, rm } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { join, resolve } from 'node:path'
import { afterEach, beforeEach, describe, expect, it } from 'vitest'
import { createComponents } from '../../src/components.ts'
import { parseConfig } from '../../src/config/load-config.ts'
import { createMemoryLogger } from '../../src/log.ts'
import { main } from '../../src/main.ts'
import { createApp } from '../../src/server/app.ts'
import { ToolselService } from '../../src/service/toolsel-service.ts'
import { indexFs } from '../../src/store/library-lifecycle.ts'
import { listenApp } from '../helpers/listen-app.ts'
import { SAMPLE_TOOLS } from '../helpers/sample-tools.ts'

const realSync = indexFs.syncPath
let root: string
/** Directories whose fsync fails with EIO (the disk under them is failing). */
let failing = new Set<string>()
const closers: Array<() => Promise<void>> = []

beforeEach(async () => {
  root = await mkdtemp(join(tmpdir(), 'toolsel-unsynced-'))
  failing = new Set()
  indexFs.syncPath = async (path) => {
    if (failing.has(resolve(path)))
      throw Object.assign(new Error(`EIO: i/o error, fsync '${path}'`), { code: 'EIO' })
    return realSync(path)
  }
})

afterEach(async () => {
  indexFs.syncPath = realSync
  for (const close of closers.splice(0)) await close()
  await rm(root, { recursive: true, force: true })
})

async function start(indexDir: string, snapshotDir: string) {
  const config = parseConfig({
    library: { default: 'demo', indexDir, snapshotDir, loadAll: true },
    log: { level: 'silent' },
  })
  const logger = createMemoryLogger()
  const service = new ToolselService(config, logger, createComponents(config, logger))
  await service.start()
  const listening = await listenApp(createApp(service).fetch)
  closers.push(() => listening.close())
  return { url: listening.url, service, logger }
}

const send = (url: string, method: string, body?: unknown) =>
  fetch(url, {
    method,
    headers: { 'content-type': 'application/json' },
    body: body === undefined ? undefined : JSON.stringify(body),
  })

const warned = (lines: string[]) =>
  lines.filter((line) => line.includes('flushing that directory to the disk failed'))

describe('a commit whose directory fsync fails', () => {
  it('answers PUT, examples, DELETE and snapshots with success and a durability warning', async () => {
    const indexDir = join(root, 'indexes')
    const snapshotDir = join(root, 'snapshots')
    const { url, service, logger } = await start(indexDir, snapshotDir)
    failing.add(resolve(indexDir))
    failing.add(resolve(snapshotDir))

    const put = await send(`${url}/v1/libraries/lib`, 'PUT', SAMPLE_TOOLS)
    const created = await put.json()
    expect(put.status, JSON.stringify(created)).toBe(201)
    expect(created.warnings.join('\n')).toMatch(
      /Library "lib"'s save is committed in <library.indexDir>, but flushing that directory to the disk failed \(EIO/,
    )
    expect(created.warnings.join('\n')).not.toContain(root)
    expect(service.library('lib').library.size).toBe(SAMPLE_TOOLS.length)

    const examples = await send(`${url}/v1/libraries/lib/examples`, 'POST', {
      examples: [{ instruction: 'holler at the crew about the gig', tools: ['sms.send_sms'] }],
    })
    expect(examples.status, await examples.clone().text()).toBe(200)
    expect(service.library('lib').examples?.set.size).toBe(1)

    const snapshot = await send(`${url}/v1/snapshots`, 'POST')
    expect(snapshot.status, await snapshot.clone().text()).toBe(201)
    expect((await readdir(snapshotDir)).filter((entry) => !entry.startsWith('.'))).toHaveLength(1)

    // A restart loads what the answers said was saved.
    const again = await start(indexDir, snapshotDir)
    expect(again.service.library('lib').examples?.set.size).toBe(1)

    const deleted = await send(`${url}/v1/libraries/lib`, 'DELETE')
    expect(deleted.status).toBe(204)
    expect(await readdir(indexDir)).not.toContain('lib')

    // PUT, examples, snapshot, delete: one warning each, and no error.
    expect(warned(logger.lines)).toHaveLength(4)
    // Counted for an operator's alert.
    const metrics = await (await fetch(`${url}/metrics`)).text()
    expect(metrics).toMatch(/^toolsel_unsynced_commits_total 4$/m)
    expect(logger.lines.filter((line) => /"level":"error"/.test(line))).toEqual([])
  })

  it('toolsel index and libraries delete exit 0 and warn on stderr', async () => {
    const indexDir = join(root, 'indexes')
    failing.add(resolve(indexDir))
    const run = async (argv: string[]) => {
      let stderr = ''
      const code = await main(argv, {
        stdout: () => {},
        stderr: (text) => (stderr += text),
        env: { TOOLSEL_LOG_LEVEL: 'warn' },
      })
      return { code, stderr }
    }
    const file = join(root, 'tools.json')
    await import('node:fs/promises').then(({ writeFile }) =>
      writeFile(file, JSON.stringify(SAMPLE_TOOLS)),
    )
    const indexed = await run(['index', file, '--name', 'lib', '--index-dir', indexDir])
    expect(indexed.code, indexed.stderr).toBe(0)
    expect(indexed.stderr).toMatch(/Warning: Library "lib"'s save is committed/)
    expect(await readdir(indexDir)).toContain('lib')

    const deleted = await run(['libraries', 'delete', 'lib', '--index-dir', indexDir])
    expect(deleted.code, deleted.stderr).toBe(0)
    expect(deleted.stderr).toMatch(/Warning: Library "lib"'s deletion is committed/)
    expect(await readdir(indexDir)).not.toContain('lib')
  })
})
