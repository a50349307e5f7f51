/**
 * A running `toolsel serve` (one process, and --workers 2) picks up what other processes commit
 * to its index directory: `toolsel index` and `toolsel libraries delete` run as processes of
 * their own next to it (server.indexWatchMs, service/index-dir-watch.ts).
 */
import { mkdir, readFile, rename, rm, writeFile } from 'node:fs/promises'
import { join } from 'node:path'
import { describe, expect, it } from 'vitest'
import { callFresh as call } from '../helpers/fresh-request.ts'
import { copySavedDemo, type RunningServe } from '../helpers/start-serve.ts'
import { servesSideBySide, toolselOn as toolsel } from '../helpers/serve-per-test.ts'
import { toolselHere } from '../helpers/toolsel-here.ts'

// The tests run side by side (`concurrent` below), each on a directory and server of its own:
// each mostly waits on its server's polls and on process starts.
const perTest = servesSideBySide('toolsel-watch-')
const { workDir } = perTest

/**
 * `toolsel serve` (servesSideBySide's) on an index directory of `prepare`, which loaded the demo as
 * saved: not imported and indexed ('Indexed library "demo"'), nor its files compared to a
 * fingerprint that changed ('Library "demo": …').
 */
async function serve(...args: Parameters<typeof perTest.serve>): Promise<RunningServe> {
  const server = await perTest.serve(...args)
  expect(server.logs(), 'the saved demo loaded as saved').not.toMatch(
    /Indexed library "demo"|Library "demo": /,
  )
  return server
}

const PARCELS = [
  { name: 'lookup_parcel', description: 'Track a parcel by its tracking number.' },
  { name: 'cancel_parcel', description: 'Cancel a parcel delivery.' },
]
const PARCELS_V2 = [
  { name: 'track_shipment', description: 'Track a parcel shipment by its tracking number.' },
  { name: 'book_flight', description: 'Book a flight to a city.' },
]

/**
 * `toolsel index <tools> --name <name>` into `indexDir`, in this process: for the indexes made
 * before the server starts or away from the directory it watches (a process of its own is
 * what the tests' commits to the watched directory are; here it would only cost a start, which
 * took seconds a test on a loaded machine).
 */
const indexHere = (indexDir: string, tools: string, name: string) =>
  toolselHere(indexDir, 'index', tools, '--name', name)

/**
 * A fresh work directory with the tool files and an index directory holding `parcels`, and the
 * demo as saved once per run (vitest's global setup): a start loads it instead of importing and
 * indexing its 197 tools (with --workers 2, in each worker) before it is ready.
 */
async function prepare(): Promise<{ dir: string; indexDir: string; v1: string; v2: string }> {
  const dir = await workDir()
  const v1 = join(dir, 'parcels.json')
  const v2 = join(dir, 'parcels-v2.json')
  await writeFile(v1, JSON.stringify(PARCELS))
  await writeFile(v2, JSON.stringify(PARCELS_V2))
  const indexDir = join(dir, 'indexes')
  await indexHere(indexDir, v1, 'parcels')
  await copySavedDemo(indexDir)
  return { dir, indexDir, v1, v2 }
}

/**
 * `toolsel serve` on `indexDir` with `workers` processes, polling it every 200 ms, started
 * (with `env` besides).
 */
async function serveOn(
  indexDir: string,
  workers: number,
  env: Record<string, string> = {},
): Promise<RunningServe> {
  return serve(['--workers', String(workers)], {
    indexDir,
    env: { TOOLSEL_INDEX_WATCH_MS: '200', ...env },
  })
}

/** The first tool `select-tools` picks for `instruction` in library `parcels`, or the error code. */
async function firstTool(url: string, instruction: string): Promise<string> {
  const { status, text } = await call(
    url,
    'POST',
    '/v1/select-tools',
    JSON.stringify({ instruction, library: 'parcels' }),
  )
  const body = JSON.parse(text) as { tools?: Array<{ name: string }>; error?: { code: string } }
  return status === 200 ? (body.tools?.[0]?.name ?? 'none') : body.error!.code
}

async function libraryNames(url: string): Promise<string[]> {
  const { text } = await call(url, 'GET', '/v1/libraries')
  return (JSON.parse(text) as { libraries: Array<{ name: string }> }).libraries.map(
    (entry) => entry.name,
  )
}

/**
 * Waits (60 s at most, or `boundMs`) until `probe` holds on `times` answers in a row (every
 * worker's). A bound, not a wait: at load 20 a poll and a load took more than 20 s (round 46).
 */
async function eventually(
  probe: () => Promise<boolean>,
  times: number,
  what: string,
  boundMs = 60_000,
) {
  const deadline = Date.now() + boundMs
  let inRow = 0
  while (inRow < times) {
    if (Date.now() > deadline) throw new Error(`not within ${boundMs / 1000} s: ${what}`)
    if (await probe()) inRow += 1
    else {
      inRow = 0
      await new Promise((resolve) => setTimeout(resolve, 100))
    }
  }
}

/**
 * Commits a new index of `parcels` (built elsewhere) whose tools file no longer matches its
 * tools index, renamed into place as a commit is: no load accepts it.
 */
async function commitCorrupt(dir: string, indexDir: string, tools: string): Promise<void> {
  const elsewhere = join(dir, 'elsewhere')
  await indexHere(elsewhere, tools, 'parcels')
  const copy = join(elsewhere, 'parcels')
  const toolsFile = join(copy, 'tools.jsonl')
  await writeFile(toolsFile, (await readFile(toolsFile, 'utf8')).replace('parcel', 'PARCEL'))
  await rename(join(indexDir, 'parcels'), join(dir, 'replaced'))
  await rename(copy, join(indexDir, 'parcels'))
}

/**
 * Waits until the server (each worker: `times` answers in a row) polled its index directory at
 * least twice since the call: a library committed next to the others is served, then its delete
 * is seen. What a test says did not happen (a log line again, a load of its own commit) had those
 * polls to happen in. Before round 46 a fixed 1 s (5 polls of 200 ms), in which a loaded machine
 * (load 20) could run none.
 */
async function polledTwice(url: string, indexDir: string, tools: string, times = 1) {
  await indexHere(indexDir, tools, 'sentinel')
  await eventually(async () => (await libraryNames(url)).includes('sentinel'), times, 'a poll')
  await toolselHere(indexDir, 'libraries', 'delete', 'sentinel')
  await eventually(async () => !(await libraryNames(url)).includes('sentinel'), times, 'another')
}

/**
 * Waits (60 s at most) for the log line of `parcels` replaced by another process's commit. The
 * watch logs it once the new version is served, so an answer from that version may come before
 * the line reaches this process's pipe: read at once, it failed once at load 17 (round 55).
 */
const replaceLogged = (logs: () => string) =>
  eventually(async () => /"parcels" replaced: saved anew/.test(logs()), 1, 'the replace logged')

/** Undoes `commitCorrupt`'s edit in place, as a file that was briefly unreadable comes back: no commit. */
async function repairInPlace(indexDir: string): Promise<void> {
  const toolsFile = join(indexDir, 'parcels', 'tools.jsonl')
  await writeFile(toolsFile, (await readFile(toolsFile, 'utf8')).replace('PARCEL', 'parcel'))
}

/** `/readyz` failedIndexes' names, on a fresh connection (so from either worker). */
async function failedNames(url: string): Promise<string[]> {
  const ready = JSON.parse((await call(url, 'GET', '/readyz')).text) as {
    failedIndexes: Array<{ name: string }>
  }
  return ready.failedIndexes.map((failed) => failed.name)
}

const WATCH = 'toolsel serve picks up commits of other processes to its index directory'

describe(WATCH, { concurrent: true }, () => {
  it('one process: a rebuilt, a new and a deleted library; a corrupt commit keeps the old one; its own PUT is not loaded again', async () => {
    const { dir, indexDir, v1, v2 } = await prepare()
    const { url, logs } = await serveOn(indexDir, 1)
    expect(await firstTool(url, 'track my parcel')).toBe('lookup_parcel')

    await toolsel(indexDir, 'index', v2, '--name', 'parcels')
    await eventually(
      async () => (await firstTool(url, 'track my parcel')) === 'track_shipment',
      1,
      'the rebuilt library served',
    )
    await toolsel(indexDir, 'index', v1, '--name', 'other')
    await eventually(async () => (await libraryNames(url)).includes('other'), 1, 'new library')
    await toolsel(indexDir, 'libraries', 'delete', 'other')
    await eventually(async () => !(await libraryNames(url)).includes('other'), 1, 'deleted')

    await commitCorrupt(dir, indexDir, v1)
    await eventually(async () => /not loaded/.test(logs()), 1, 'the corrupt commit logged')
    await polledTwice(url, indexDir, v2)
    expect(logs().match(/"parcels" committed in .* not loaded/g)).toHaveLength(1)
    expect(await firstTool(url, 'track my parcel')).toBe('track_shipment')
    const ready = JSON.parse((await call(url, 'GET', '/readyz')).text) as {
      failedIndexes: Array<{ name: string; error: string }>
    }
    expect(ready.failedIndexes).toEqual([
      {
        name: 'parcels',
        error: expect.stringMatching(/was changed since its index was saved/) as unknown,
      },
    ])
    // A good commit after it is served, and the failure is no longer listed (--rebuild: the
    // corrupt index's manifest is the one this build would write).
    await toolsel(indexDir, 'index', v1, '--name', 'parcels', '--rebuild')
    await eventually(
      async () => (await firstTool(url, 'track my parcel')) === 'lookup_parcel',
      1,
      'the next good commit served',
    )
    expect(JSON.parse((await call(url, 'GET', '/readyz')).text).failedIndexes).toEqual([])

    // The server's own commit is served as it is, not loaded again by the poll.
    const put = await call(url, 'PUT', '/v1/libraries/mine', JSON.stringify(PARCELS_V2))
    expect(put.status, put.text).toBe(201)
    await polledTwice(url, indexDir, v2)
    expect(logs()).not.toMatch(/"mine" (added|replaced)/)
    expect(logs()).toMatch(/"parcels" replaced: saved anew/)
    expect(logs()).toMatch(/"other" added/)
    expect(logs()).toMatch(/"other" dropped/)
    // Five process starts (the server, four `toolsel` commands): 120 s ran out with two busy
    // loops and the children run through tsx (dist/ older than src/; round 39).
  }, 240_000)

  it('one process: a commit that failed to load is tried again on a backoff, logged once, and served once it loads', async () => {
    const { dir, indexDir, v2 } = await prepare()
    // The tries again wait 100 ms, 200 ms, … (2 s, 4 s, … by default: the test waited 2 s for
    // the next one; every try in between is one more that must not log).
    const { url, logs } = await serveOn(indexDir, 1, { TOOLSEL_TEST_INDEX_RETRY_BASE_MS: '100' })
    await commitCorrupt(dir, indexDir, v2)
    await eventually(async () => /not loaded/.test(logs()), 1, 'the corrupt commit logged')
    expect(await failedNames(url)).toEqual(['parcels'])
    // The file comes back whole without a new commit (nothing for the poll to see): the next
    // try (on the backoff after the failure) loads it.
    await repairInPlace(indexDir)
    await eventually(
      async () => (await firstTool(url, 'track my parcel')) === 'track_shipment',
      1,
      'the commit served once it loads',
    )
    expect(await failedNames(url)).toEqual([])
    expect(logs().match(/"parcels" committed in .* not loaded/g)).toHaveLength(1)
    await replaceLogged(logs)
  }, 120_000)

  it("--workers 2: /readyz failedIndexes is every worker's, the same from each; a worker started after a repair does not answer otherwise", async () => {
    const { dir, indexDir, v2 } = await prepare()
    // The tries again wait 100 ms, 200 ms, … (2 s, 4 s, … by default: this test took 24 s) and
    // are held while `hold` exists (test switches, config/env-vars.ts), so that the old worker
    // keeps the failure for as long as the test needs, however slow a worker's start.
    const hold = join(dir, 'hold-retries')
    const server = await serve(['--workers', '2'], {
      indexDir,
      env: {
        TOOLSEL_INDEX_WATCH_MS: '200',
        TOOLSEL_LOG_LEVEL: 'debug',
        TOOLSEL_TEST_INDEX_RETRY_BASE_MS: '100',
        TOOLSEL_TEST_INDEX_RETRY_HOLD_FILE: hold,
      },
    })
    const { url, logs } = server
    await commitCorrupt(dir, indexDir, v2)
    await eventually(async () => /Not picked up/.test(logs()), 1, 'the corrupt commit logged')
    for (let answer = 0; answer < 6; answer += 1)
      expect(await failedNames(url)).toEqual(['parcels'])
    // The tries after the failure fail too (logged at debug level only).
    await eventually(
      async () => (logs().match(/Tried again, not picked up/g) ?? []).length >= 2,
      1,
      'two tries',
    )
    expect(logs().match(/^.*ERROR.*Not picked up/gm)).toHaveLength(1)
    // The tries held: once a poll says so (`held`), none is under way and none starts. Then the
    // file comes back whole and one worker is replaced: the new one loads the commit at its
    // start, the other still has it failed.
    await writeFile(hold, '')
    await eventually(async () => (await readFile(hold, 'utf8')) === 'held', 1, 'the tries held')
    await repairInPlace(indexDir)
    const pid = Number(/Not picked up: worker (\d+),/.exec(logs())![1])
    process.kill(pid, 'SIGKILL')
    // A worker process's start, not a poll: the bound a serve's start has (startServe's 90 s).
    // 20 s ran out with two busy loops on this 2-core machine (round 39).
    await eventually(
      async () => (logs().match(/Ready: libraries/g) ?? []).length === 3,
      1,
      'the replacement ready',
      90_000,
    )
    // Fresh connections alternate between the workers: every answer lists the failure (each
    // worker's own list would not: the new one never had it). Before the hold, only the answers
    // before the old worker's next try (8 s later) could show that.
    for (let answer = 0; answer < 8; answer += 1)
      expect(await failedNames(url)).toEqual(['parcels'])
    // The next try (the first poll after the hold) loads it in the old worker: every worker
    // serves it, nothing listed.
    await rm(hold)
    await eventually(
      async () => (await firstTool(url, 'track my parcel')) === 'track_shipment',
      6,
      'every worker serves the repaired commit',
    )
    await eventually(async () => (await failedNames(url)).length === 0, 6, 'nothing listed')
  }, 240_000)

  it('one process: toolsel snapshot restore into its index directory is served without a restart', async () => {
    const { dir, indexDir, v2 } = await prepare()
    const snapshot = join(dir, 'snapshot')
    // Before the server starts: made in this process (the restore is the other process).
    await toolselHere(indexDir, 'snapshot', snapshot)
    await indexHere(indexDir, v2, 'parcels')
    const { url, logs } = await serveOn(indexDir, 1)
    expect(await firstTool(url, 'track my parcel')).toBe('track_shipment')
    await toolsel(indexDir, 'snapshot', 'restore', snapshot)
    await eventually(
      async () => (await firstTool(url, 'track my parcel')) === 'lookup_parcel',
      1,
      'the restored library served',
    )
    await replaceLogged(logs)
    // Two process starts (the server, the restore; four before round 42): 120 s ran out with
    // four, two busy loops and the children run through tsx (dist/ older than src/; round 39).
  }, 240_000)

  it("logs an index directory's entry of an unknown grammar through its logger, once", async () => {
    const { indexDir, v1 } = await prepare()
    const unknown = '.tmp-parcels+1.2.3-0123456789ab'
    await mkdir(join(indexDir, unknown))
    const { url, logs } = await serveOn(indexDir, 1)
    await eventually(async () => /looks like another toolsel/.test(logs()), 1, 'the entry logged')
    await polledTwice(url, indexDir, v1)
    expect(logs().match(/looks like another toolsel version's work directory/g)).toHaveLength(1)
    expect(logs()).toMatch(
      new RegExp(`WARN ${join(indexDir, unknown).replace(/[.+]/g, '\\$&')} looks like`),
    )
    expect(logs()).not.toMatch(/ToolselWarning/)
  }, 120_000)

  it('--workers 2: every worker serves the rebuilt library and drops the deleted one; a corrupt commit is logged once and the old one stays', async () => {
    const { dir, indexDir, v1, v2 } = await prepare()
    const { url, logs } = await serveOn(indexDir, 2)
    await toolsel(indexDir, 'index', v2, '--name', 'parcels')
    // Fresh connections alternate between the workers: 6 answers in a row, both workers'.
    await eventually(
      async () => (await firstTool(url, 'track my parcel')) === 'track_shipment',
      6,
      'every worker serves the rebuilt library',
    )
    await toolsel(indexDir, 'index', v1, '--name', 'other')
    await eventually(async () => (await libraryNames(url)).includes('other'), 6, 'added')
    await toolsel(indexDir, 'libraries', 'delete', 'other')
    await eventually(async () => !(await libraryNames(url)).includes('other'), 6, 'deleted')

    await commitCorrupt(dir, indexDir, v1)
    await eventually(async () => /Not picked up/.test(logs()), 1, 'the corrupt commit logged')
    await polledTwice(url, indexDir, v2, 6)
    expect(logs().match(/Not picked up/g)).toHaveLength(1)
    expect(logs().match(/worker \d+, library "parcels"/g)).toHaveLength(2)
    for (let answer = 0; answer < 6; answer += 1)
      expect(await firstTool(url, 'track my parcel')).toBe('track_shipment')
    // Six process starts (the server, its two workers, three `toolsel` commands): 150 s ran out
    // with two busy loops and the children run through tsx (dist/ older than src/; round 39).
  }, 300_000)
})
