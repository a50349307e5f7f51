/**
 * Snapshots end to end: libraries uploaded over real HTTP, `POST /v1/snapshots`, the index
 * directory wiped, `toolsel snapshot restore`, a new service on the restored indexes answering
 * exactly as before; `toolsel snapshot <dir>` from an index directory; a damaged snapshot
 * restores nothing; a snapshot whose client goes away mid-write is still written (round 54).
 */
import { readFileSync } from 'node:fs'
import { appendFile, mkdir, mkdtemp, readdir, rm, writeFile } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { listenApp } from '../helpers/listen-app.ts'
import { until } from '../helpers/process-wait.ts'
import { afterEach, describe, expect, it, vi } from 'vitest'
import { createComponents } from '../../src/components.ts'
import { parseConfig, type ConfigLayer } from '../../src/config/load-config.ts'
import { createMemoryLogger } from '../../src/log.ts'
import { main } from '../../src/main.ts'
import { createApp } from '../../src/server/app.ts'
import { ToolselService } from '../../src/service/toolsel-service.ts'
import { SAMPLE_TOOLS } from '../helpers/sample-tools.ts'

const ADMIN_KEY = 'admin-key-for-snapshots-0123456789'
const READ_KEY = 'read-key-for-snapshots-0123456789'

const closers: Array<() => Promise<void>> = []
afterEach(async () => {
  vi.unstubAllEnvs()
  for (const close of closers.splice(0)) await close()
})

/** A service on `layer` over real HTTP; `seen` gets each request as it comes (its signal: the client gone). */
async function start(layer: ConfigLayer, seen?: (request: Request) => void) {
  const config = parseConfig({
    auth: { adminKey: ADMIN_KEY, readKeys: [READ_KEY] },
    log: { level: 'silent' },
    ...layer,
  })
  const logger = createMemoryLogger()
  const service = new ToolselService(config, logger, createComponents(config, logger))
  await service.start()
  const app = createApp(service)
  const listening = await listenApp((request) => (seen?.(request), app.fetch(request)))
  closers.push(() => listening.close())
  return { url: listening.url, service }
}

const send = (url: string, method: string, key: string, body?: unknown) =>
  fetch(url, {
    method,
    headers: { authorization: `Bearer ${key}`, 'content-type': 'application/json' },
    body: body === undefined ? undefined : JSON.stringify(body),
  })

const INSTRUCTIONS = [
  'What is the weather in Paris tomorrow',
  'send an email to Ann and text Bob',
  'create a calendar event for Monday',
]

/** What a service answers: selections and searches over both libraries. */
async function answers(url: string): Promise<unknown[]> {
  const results: unknown[] = []
  for (const library of ['sample', 'second']) {
    for (const instruction of INSTRUCTIONS) {
      const selected = await (
        await send(`${url}/v1/select-tools`, 'POST', READ_KEY, { instruction, library })
      ).json()
      const searched = await (
        await send(`${url}/v1/search-tools`, 'POST', READ_KEY, { query: instruction, library })
      ).json()
      results.push(
        selected.tools.map((tool: { id: string }) => tool.id),
        selected.steps.map((step: { candidates: unknown[] }) => step.candidates),
        searched.results,
      )
    }
  }
  return results
}

async function run(argv: string[]): Promise<{ code: number; stdout: string; stderr: string }> {
  let stdout = ''
  let stderr = ''
  const code = await main(argv, {
    stdout: (text) => (stdout += text),
    stderr: (text) => (stderr += text),
    env: { TOOLSEL_LOG_LEVEL: 'warn' },
  })
  return { code, stdout, stderr }
}

describe('snapshots', () => {
  it('POST /v1/snapshots, wipe, toolsel snapshot restore: a new service answers the same', async () => {
    const root = await mkdtemp(join(tmpdir(), 'toolsel-snapshots-'))
    closers.push(() => rm(root, { recursive: true, force: true }))
    const indexDir = join(root, 'indexes')
    const snapshotDir = join(root, 'snapshots')
    const layer = { library: { default: 'demo', indexDir, snapshotDir, loadAll: true } }
    const first = await start(layer)
    expect(
      (await send(`${first.url}/v1/libraries/sample`, 'PUT', ADMIN_KEY, SAMPLE_TOOLS)).status,
    ).toBe(201)
    const second = SAMPLE_TOOLS.slice(0, 4).map((tool) => ({ ...tool, id: `two.${tool.name}` }))
    expect((await send(`${first.url}/v1/libraries/second`, 'PUT', ADMIN_KEY, second)).status).toBe(
      201,
    )
    const examples = await send(`${first.url}/v1/libraries/sample/examples`, 'POST', ADMIN_KEY, {
      examples: [{ instruction: 'forecast for Rome', tools: [SAMPLE_TOOLS[0].id] }],
    })
    expect(examples.status).toBe(200)
    const before = await answers(first.url)

    // Only the admin key writes snapshots.
    expect((await send(`${first.url}/v1/snapshots`, 'POST', READ_KEY)).status).toBe(403)
    const response = await send(`${first.url}/v1/snapshots`, 'POST', ADMIN_KEY)
    expect(response.status).toBe(201)
    const text = await response.text()
    const snapshot = JSON.parse(text)
    expect(snapshot.format).toBe('toolsel-snapshot')
    expect(snapshot.version).toBe(1)
    // Named relative to library.snapshotDir, as every error is: no path of this host.
    expect(snapshot.name).toMatch(/^snapshot-[0-9TZ-]+$/)
    expect(Object.keys(snapshot)).not.toContain('dir')
    expect(text).not.toContain(root)
    // Saved libraries only: not the embedded demo.
    expect(snapshot.libraries.map((entry: { name: string }) => entry.name).sort()).toEqual([
      'sample',
      'second',
    ])
    const sample = snapshot.libraries.find((entry: { name: string }) => entry.name === 'sample')
    expect(sample).toMatchObject({
      tools: SAMPLE_TOOLS.length,
      contentHash: first.service.library('sample').library.contentHash,
      examples: 1,
    })
    // Nothing temporary is left next to it.
    expect(await readdir(snapshotDir)).toEqual([snapshot.name])

    await rm(indexDir, { recursive: true, force: true })
    const snapshotPath = join(snapshotDir, snapshot.name)
    const restored = await run(['snapshot', 'restore', snapshotPath, '--index-dir', indexDir])
    expect(restored.stderr).toBe('')
    expect(restored.code).toBe(0)
    expect(restored.stdout).toContain('Restored 2 index(es)')

    const again = await start(layer)
    expect(again.service.libraries.names().sort()).toEqual(['demo', 'sample', 'second'])
    expect(again.service.library('sample').examples?.set.size).toBe(1)
    expect(await answers(again.url)).toEqual(before)
  }, 60_000)

  it('toolsel snapshot <dir> copies an index directory; a damaged snapshot restores nothing', async () => {
    const root = await mkdtemp(join(tmpdir(), 'toolsel-snapshot-cli-'))
    closers.push(() => rm(root, { recursive: true, force: true }))
    const indexDir = join(root, 'indexes')
    const { url } = await start({ library: { default: 'demo', indexDir } })
    expect((await send(`${url}/v1/libraries/sample`, 'PUT', ADMIN_KEY, SAMPLE_TOOLS)).status).toBe(
      201,
    )

    const dir = join(root, 'backup')
    const written = await run(['snapshot', dir, '--index-dir', indexDir, '--json'])
    expect(written.code).toBe(0)
    const manifest = JSON.parse(written.stdout)
    expect(manifest.libraries.map((entry: { name: string }) => entry.name)).toEqual(['sample'])
    // A snapshot never overwrites another.
    const twice = await run(['snapshot', dir, '--index-dir', indexDir])
    expect(twice.code).toBe(2)
    expect(twice.stderr).toContain('already exists')

    // Damage the copy: restoring it fails and leaves the index directory as it was.
    await appendFile(join(dir, 'indexes', 'sample', 'tools.jsonl'), '{"id": "x", "name": "x"}\n')
    const other = join(root, 'other-indexes')
    const failed = await run(['snapshot', 'restore', dir, '--index-dir', other])
    expect(failed.code).not.toBe(0)
    expect(await readdir(other).catch(() => [])).toEqual([])
    const notSnapshot = await run(['snapshot', 'restore', indexDir, '--index-dir', other])
    expect(notSnapshot.stderr).toContain(
      `${indexDir} is not a toolsel snapshot: it has no snapshot.json`,
    )
    const nowhere = await run(['snapshot', 'restore', join(root, 'nope'), '--index-dir', other])
    expect(nowhere.stderr).toContain(
      `${join(root, 'nope')} is not a toolsel snapshot: no such directory`,
    )
    const file = join(dir, 'snapshot.json')
    const aFile = await run(['snapshot', 'restore', file, '--index-dir', other])
    expect(aFile.code).toBe(2)
    expect(aFile.stderr).toContain(`${file} is not a toolsel snapshot: it is a file;`)
  }, 60_000)

  it('a snapshot whose client goes away mid-write is finished all the same, whole and restorable (only a stopping server abandons one); another meanwhile is RATE_LIMITED (round 55)', async () => {
    // Decided in round 54 (README "Snapshots", OpenAPI): a snapshot adds a directory and changes
    // nothing served, so one asked for is not lost to a client that gave up waiting (a curl
    // --max-time, a closed terminal); its name is in the log.
    const root = await mkdtemp(join(tmpdir(), 'toolsel-snapshot-gone-'))
    closers.push(() => rm(root, { recursive: true, force: true }))
    const snapshotDir = join(root, 'snapshots')
    let gone: AbortSignal | undefined
    const { url } = await start(
      { library: { default: 'demo', indexDir: join(root, 'indexes'), snapshotDir } },
      (request) => {
        if (new URL(request.url).pathname === '/v1/snapshots') gone = request.signal
      },
    )
    expect((await send(`${url}/v1/libraries/sample`, 'PUT', ADMIN_KEY, SAMPLE_TOOLS)).status).toBe(
      201,
    )
    const hold = join(root, 'hold')
    await writeFile(hold, '')
    vi.stubEnv('TOOLSEL_TEST_HOLD_IN_INDEX_WRITE_FILE', hold)
    const client = new AbortController()
    const answer = fetch(`${url}/v1/snapshots`, {
      method: 'POST',
      headers: { authorization: `Bearer ${ADMIN_KEY}` },
      signal: client.signal,
    }).catch((error: unknown) => String(error))
    await until('the snapshot to hold mid-write', () => readFileSync(hold, 'utf8') === 'held')
    client.abort()
    expect(await answer).toMatch(/AbortError/)
    // The server saw its client go (the request's signal aborted), then the write goes on.
    await until('the server to see the client gone', () => gone?.aborted === true)
    // One at a time (round 55): a second one while it is written, each a copy of every saved
    // library, is refused at once; before, both ran (two snapshot directories).
    const second = await send(`${url}/v1/snapshots`, 'POST', ADMIN_KEY)
    expect(second.status).toBe(429)
    // As /openapi.json declares on every 429 (it had none).
    expect(second.headers.get('retry-after')).toBe('1')
    expect(await second.json()).toEqual({
      error: {
        code: 'RATE_LIMITED',
        message: expect.stringMatching(/^A snapshot is being written already/),
      },
    })
    await rm(hold)
    const written = () => readdir(snapshotDir).then((names) => names.sort())
    let names: string[] = []
    await until('the snapshot to be written', () => {
      void written().then((now) => (names = now))
      return names.length === 1 && names[0]!.startsWith('snapshot-')
    })
    // Asked for again once it has ended (its directory is there just before it ends): written.
    let again = 429
    for (let tries = 0; again === 429 && tries < 200; tries += 1) {
      if (tries > 0) await new Promise((resolve) => setTimeout(resolve, 50))
      again = (await send(`${url}/v1/snapshots`, 'POST', ADMIN_KEY)).status
    }
    expect(again).toBe(201)
    expect((await written()).length).toBe(2)

    const restored = join(root, 'restored')
    const restore = await run([
      'snapshot',
      'restore',
      join(snapshotDir, names[0]!),
      '--index-dir',
      restored,
    ])
    expect(restore.code, restore.stderr).toBe(0)
    expect(await readdir(restored)).toContain('sample')
  }, 60_000)

  it('a snapshot that cannot be written, or has nothing to copy, says why (no 500 without a reason, no stack)', async () => {
    const root = await mkdtemp(join(tmpdir(), 'toolsel-snapshot-errors-'))
    closers.push(() => rm(root, { recursive: true, force: true }))
    const indexDir = join(root, 'indexes')
    const file = join(root, 'a-file')
    await writeFile(file, 'not a directory\n')
    const { url } = await start({
      library: { default: 'demo', indexDir, snapshotDir: join(file, 'snapshots') },
    })
    expect((await send(`${url}/v1/libraries/sample`, 'PUT', ADMIN_KEY, SAMPLE_TOOLS)).status).toBe(
      201,
    )
    const response = await send(`${url}/v1/snapshots`, 'POST', ADMIN_KEY)
    expect(response.status).toBe(500)
    const { error } = await response.json()
    expect(error.code).toBe('INTERNAL')
    expect(error.message).toContain('Cannot write the snapshot <library.snapshotDir>/snapshot-')
    expect(error.message).toContain('TOOLSEL_SNAPSHOT_DIR')
    // This host's paths only in the log (and in the CLI's message below).
    expect(error.message).not.toContain(root)

    const underFile = await run(['snapshot', join(file, 'backup'), '--index-dir', indexDir])
    expect(underFile.code).toBe(1)
    expect(underFile.stderr).toMatch(/^error \[INTERNAL\]: Cannot write the snapshot/)
    expect(underFile.stderr).not.toContain('    at ')

    const noIndexes = await run(['snapshot', join(root, 'b'), '--index-dir', join(root, 'typo')])
    expect(noIndexes.code).toBe(2)
    expect(noIndexes.stderr).toContain('does not exist: nothing to snapshot')
    expect(await readdir(root)).not.toContain('b')
    // An index directory without saved indexes (a new user's first try: the demo is not saved).
    const emptyDir = join(root, 'empty-indexes')
    await mkdir(emptyDir)
    const empty = await run(['snapshot', join(root, 'c'), '--index-dir', emptyDir])
    expect(empty.code).toBe(0)
    expect(empty.stdout).toBe(`Snapshot ${join(root, 'c')}: 0 index(es)\n`)
    // Was: "0 index(es) ()" and nothing on stderr.
    expect(empty.stderr).toContain(
      `Warning: no saved index in "${emptyDir}": the snapshot holds nothing`,
    )
    expect(empty.stderr).toContain('save one with toolsel index <file> --name <library>')

    const good = join(root, 'good')
    expect((await run(['snapshot', good, '--index-dir', indexDir])).code).toBe(0)
    const restore = await run(['snapshot', 'restore', good, '--index-dir', join(file, 'x')])
    expect(restore.code).toBe(1)
    expect(restore.stderr).toMatch(
      /^error \[INDEX_WRITE_FAILED\]: Library "sample" could not be saved in .*\(ENOTDIR/,
    )
    expect(restore.stderr).not.toContain('    at ')
  }, 60_000)
})
