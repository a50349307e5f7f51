/**
 * A save whose files can't be flushed to the disk BEFORE its commit (an fsync's EIO, or ENOSPC)
 * changes nothing and says what failed: 500 INDEX_WRITE_FAILED, or 507 INSUFFICIENT_STORAGE for
 * a full disk, naming the errno (not a generic 500 INTERNAL) and the index directory (as
 * `<library.indexDir>` in the HTTP answer, by its path in the log and the CLI); the
 * previous index stays saved and served. `toolsel index` prints the same and exits 1. The
 * failure comes through the store's file system seam (`indexFs`), over real HTTP and real files.
 * The log lines a failed write request causes carry its `requestId`, as its access-log line does.
 */
import { mkdtemp, readdir, rm, writeFile } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { afterEach, beforeEach, describe, expect, it } from 'vitest'
import { createComponents } from '../../src/components.ts'
import { parseConfig } from '../../src/config/load-config.ts'
import { createMemoryLogger } from '../../src/log.ts'
import { main } from '../../src/main.ts'
import { createApp } from '../../src/server/app.ts'
import { ToolselService } from '../../src/service/toolsel-service.ts'
import { indexFs } from '../../src/store/library-lifecycle.ts'
import { indexDirEntries } from '../helpers/index-dir-entries.ts'
import { listenApp } from '../helpers/listen-app.ts'
import { SAMPLE_TOOLS } from '../helpers/sample-tools.ts'

const realSync = indexFs.syncPath
let root: string
/** The errno that an fsync inside a save's work directory fails with; none when undefined. */
let failWith: string | undefined
const closers: Array<() => Promise<void>> = []

beforeEach(async () => {
  root = await mkdtemp(join(tmpdir(), 'toolsel-write-failed-'))
  failWith = undefined
  indexFs.syncPath = async (path) => {
    if (failWith !== undefined && path.includes('.tmp-'))
      throw Object.assign(new Error(`${failWith}: failed, fsync '${path}'`), { code: failWith })
    return realSync(path)
  }
})

afterEach(async () => {
  indexFs.syncPath = realSync
  for (const close of closers.splice(0)) await close()
  await rm(root, { recursive: true, force: true })
})

/** A service on real HTTP over `library` (indexDir, snapshotDir), its log in memory. */
async function serve(library: { indexDir: string; snapshotDir?: string }) {
  const config = parseConfig({
    library: { default: 'demo', loadAll: true, ...library },
    server: { indexWatchMs: 0 },
    log: { level: 'silent' },
  })
  const logger = createMemoryLogger()
  const service = new ToolselService(config, logger, createComponents(config, logger))
  await service.start()
  const { url, close } = await listenApp(createApp(service).fetch)
  closers.push(close)
  return { service, url, logger }
}

/** `toolsel <args>` in this process (the seam applies): its exit code and stderr. */
async function cli(args: string[]) {
  let stderr = ''
  const code = await main(args, {
    stdout: () => {},
    stderr: (text) => (stderr += text),
    env: { TOOLSEL_LOG_LEVEL: 'warn' },
  })
  return { code, stderr }
}

describe('a save whose fsync fails before the commit', () => {
  it('answers PUT with 500 INDEX_WRITE_FAILED (EIO) or 507 INSUFFICIENT_STORAGE (ENOSPC); nothing changes', async () => {
    const indexDir = join(root, 'indexes')
    const { service, url, logger } = await serve({ indexDir })
    const put = (tools: unknown) =>
      fetch(`${url}/v1/libraries/lib`, {
        method: 'PUT',
        headers: { 'content-type': 'application/json' },
        body: JSON.stringify(tools),
      })
    expect((await put(SAMPLE_TOOLS)).status).toBe(201)
    const served = service.library('lib')
    const entries = await indexDirEntries(indexDir)

    for (const [errno, status, code] of [
      ['EIO', 500, 'INDEX_WRITE_FAILED'],
      ['ENOSPC', 507, 'INSUFFICIENT_STORAGE'],
    ] as const) {
      failWith = errno
      const answer = await put(SAMPLE_TOOLS.slice(0, 2))
      const body = (await answer.json()) as { error: { code: string; message: string } }
      expect(answer.status, JSON.stringify(body)).toBe(status)
      expect(body.error.code).toBe(code)
      // Without this host's paths (the directory, the errno's path); the log keeps them.
      expect(body.error.message).toContain('could not be saved in <library.indexDir>:')
      expect(body.error.message).toMatch(
        new RegExp(`${errno}: failed, fsync '<library.indexDir>/\\.tmp-lib\\+`),
      )
      expect(body.error.message).not.toContain(root)
      expect(logger.lines.join('\n')).toContain(`could not be saved in ${indexDir}: `)
      expect(body.error.message).toMatch(/Nothing was changed/)
      // Nothing changed: the same version served, the same entries saved, no work left behind.
      expect(service.library('lib')).toBe(served)
      expect(await indexDirEntries(indexDir)).toEqual(entries)
    }
    failWith = undefined
    expect((await put(SAMPLE_TOOLS.slice(0, 2))).status).toBe(200)
    expect(service.library('lib').library.size).toBe(2)
  })

  it('toolsel index prints the code, the directory and the errno, and exits 1', async () => {
    const indexDir = join(root, 'indexes')
    const file = join(root, 'tools.json')
    await writeFile(file, JSON.stringify(SAMPLE_TOOLS))
    failWith = 'ENOSPC'
    const { code, stderr } = await cli(['index', file, '--name', 'lib', '--index-dir', indexDir])
    expect(code, stderr).toBe(1)
    expect(stderr).toMatch(
      new RegExp(
        `error \\[INSUFFICIENT_STORAGE\\]: Library "lib" could not be saved in ${indexDir}: no space left on its disk \\(ENOSPC`,
      ),
    )
    expect(await indexDirEntries(indexDir)).toEqual([])
    expect((await readdir(indexDir)).filter((entry) => entry.startsWith('.tmp-'))).toEqual([])
  })

  it('a snapshot on a full disk is 507 about the snapshot (its setting, not library.indexDir); nothing left; libraries served; the CLI too', async () => {
    const indexDir = join(root, 'indexes')
    const snapshotDir = join(root, 'snapshots')
    const { service, url, logger } = await serve({ indexDir, snapshotDir })
    const put = await fetch(`${url}/v1/libraries/lib`, {
      method: 'PUT',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify(SAMPLE_TOOLS),
    })
    expect(put.status).toBe(201)
    const served = service.library('lib')
    const entries = await indexDirEntries(indexDir)

    failWith = 'ENOSPC'
    const answer = await fetch(`${url}/v1/snapshots`, { method: 'POST' })
    const body = (await answer.json()) as { error: { code: string; message: string } }
    expect(answer.status, JSON.stringify(body)).toBe(507)
    expect(body.error.code).toBe('INSUFFICIENT_STORAGE')
    expect(body.error.message).toMatch(
      /^Cannot write the snapshot <library\.snapshotDir>\/snapshot-[^:]+: no space left on its disk \(ENOSPC: failed, fsync/,
    )
    expect(body.error.message).toContain('Nothing was written (its partial copy was removed)')
    expect(body.error.message).toContain('(library.snapshotDir, env TOOLSEL_SNAPSHOT_DIR)')
    // Not the index save's wording: the index directory is not where it failed.
    expect(body.error.message).not.toContain('library.indexDir')
    expect(body.error.message).not.toContain(root)
    expect(logger.lines.join('\n')).toContain(`Cannot write the snapshot ${snapshotDir}/snapshot-`)
    expect(await readdir(snapshotDir)).toEqual([])
    expect(service.library('lib')).toBe(served)
    expect(await indexDirEntries(indexDir)).toEqual(entries)
    const select = await fetch(`${url}/v1/search-tools`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ query: 'weather', library: 'lib' }),
    })
    expect(select.status).toBe(200)

    const target = join(root, 'backup')
    const { code, stderr } = await cli(['snapshot', target, '--index-dir', indexDir])
    expect(code, stderr).toBe(1)
    expect(stderr).toMatch(
      new RegExp(
        `^error \\[INSUFFICIENT_STORAGE\\]: Cannot write the snapshot ${target}: no space left on its disk \\(ENOSPC`,
      ),
    )
    expect((await readdir(root)).filter((entry) => entry.includes('backup'))).toEqual([])

    failWith = undefined
    const again = await fetch(`${url}/v1/snapshots`, { method: 'POST' })
    expect(again.status).toBe(201)
  })

  it('logs each failed write with its request id (PUT library, examples, feedback, snapshot; 507 and 500)', async () => {
    const { url, logger } = await serve({
      indexDir: join(root, 'indexes'),
      snapshotDir: join(root, 'snapshots'),
    })
    const send = (method: string, path: string, requestId: string, body?: unknown) =>
      fetch(`${url}${path}`, {
        method,
        headers: { 'content-type': 'application/json', 'x-request-id': requestId },
        ...(body !== undefined && { body: JSON.stringify(body) }),
      })
    expect((await send('PUT', '/v1/libraries/lib', 'setup', SAMPLE_TOOLS)).status).toBe(201)

    const writes: Array<[string, string, unknown]> = [
      ['PUT', '/v1/libraries/lib', SAMPLE_TOOLS.slice(0, 2)],
      [
        'POST',
        '/v1/libraries/lib/examples',
        { examples: [{ instruction: 'forecast for Oslo', tools: [SAMPLE_TOOLS[0]!.id] }] },
      ],
      [
        'POST',
        '/v1/feedback',
        { instruction: 'weather in Rome', library: 'lib', used: [SAMPLE_TOOLS[1]!.id] },
      ],
      ['POST', '/v1/snapshots', undefined],
    ]
    for (const [errno, status] of [
      ['ENOSPC', 507],
      ['EIO', 500],
    ] as const) {
      failWith = errno
      for (const [method, path, body] of writes) {
        const requestId = `${errno}-${method}-${path.replaceAll('/', '.')}`
        const before = logger.lines.length
        const answer = await send(method, path, requestId, body)
        expect(answer.status, `${method} ${path}: ${await answer.text()}`).toBe(status)
        const caused = logger.lines.slice(before).filter((line) => / (ERROR|WARN) /.test(line))
        expect(caused.length, `${method} ${path}`).toBeGreaterThan(0)
        for (const line of caused) {
          expect(line, `${method} ${path}`).toContain(errno)
          expect(line, `${method} ${path}`).toContain(`"requestId":"${requestId}"`)
        }
      }
    }
  })
})
