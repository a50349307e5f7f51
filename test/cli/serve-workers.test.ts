import { execFile } from 'node:child_process'
import { existsSync } from 'node:fs'
import { mkdtemp, readFile, rename, rm, writeFile } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest'
import { callFresh as call } from '../helpers/fresh-request.ts'
import { defaultConfig } from '../../src/config/schema.ts'
import { loadIndexedLibrary } from '../../src/store/library-lifecycle.ts'
import { indexDirEntries } from '../helpers/index-dir-entries.ts'
import { procState, until } from '../helpers/process-wait.ts'
import { ROOT, startServe, workerPids, type RunningServe } from '../helpers/start-serve.ts'

let server: RunningServe | undefined

afterEach(async () => {
  await server?.stop()
  server = undefined
})

async function libraryNames(url: string): Promise<string[]> {
  const { status, text } = await call(url, 'GET', '/v1/libraries')
  expect(status).toBe(200)
  return (JSON.parse(text) as { libraries: Array<{ name: string }> }).libraries.map(
    (library) => library.name,
  )
}

/**
 * `call` with a deadline of its own: a request that hangs (handed to a worker that never answers)
 * fails naming itself instead of running into the test's timeout.
 */
async function callWithin(
  url: string,
  method: string,
  path: string,
  body?: string,
  timeoutMs = 30_000,
): Promise<{ status: number; text: string }> {
  let timer: NodeJS.Timeout | undefined
  try {
    return await Promise.race([
      call(url, method, path, body),
      new Promise<never>((_, reject) => {
        timer = setTimeout(
          () => reject(new Error(`${method} ${path}: no answer within ${timeoutMs} ms`)),
          timeoutMs,
        )
      }),
    ])
  } finally {
    clearTimeout(timer)
  }
}

/** `toolsel serve --workers 2` on a fresh index directory, started. */
async function startWorkers(env: Record<string, string>): Promise<RunningServe> {
  server = await startServe(['--workers', '2'], { env })
  return server
}

/**
 * `listings` listings on fresh connections (the workers answer in turn) all show library `race`
 * as saved in `dir` now (or none when none is saved).
 */
async function expectServesDisk(url: string, dir: string, listings: number, where: string) {
  const manifest = await readFile(join(dir, 'race', 'manifest.json'), 'utf8').then(
    (text) => JSON.parse(text) as { contentHash: string; createdAt: string },
    () => undefined,
  )
  for (let listing = 0; listing < listings; listing += 1) {
    const { status, text } = await call(url, 'GET', '/v1/libraries')
    expect(status).toBe(200)
    const served = (
      JSON.parse(text) as {
        libraries: Array<{ name: string; contentHash: string; createdAt: string }>
      }
    ).libraries.find((library) => library.name === 'race')
    if (manifest === undefined) expect(served, `${where}, listing ${listing}`).toBeUndefined()
    else
      expect(served, `${where}, listing ${listing}`).toMatchObject({
        contentHash: manifest.contentHash,
        createdAt: manifest.createdAt,
      })
  }
}

describe('toolsel serve --workers', () => {
  it('serves from two processes, and a PUT (imported in a worker thread) or DELETE through one is seen by every one', async () => {
    const { url, logs, child } = await startWorkers({
      // Every upload is imported in a worker thread of the server process that takes it.
      TOOLSEL_IMPORT_WORKER_MIN_CHARS: '0',
    })
    expect(logs().match(/Ready: libraries/g)).toHaveLength(2)

    const tools = [
      { name: 'lookup_parcel', description: 'Track a parcel by its tracking number.' },
      { name: 'cancel_parcel', description: 'Cancel a parcel delivery.' },
    ]
    const put = await call(url, 'PUT', '/v1/libraries/parcels', JSON.stringify(tools))
    expect(put.status, put.text).toBe(201)
    // Fresh connections alternate between the workers: each must have the new library already.
    for (let attempt = 0; attempt < 12; attempt += 1) {
      expect(await libraryNames(url)).toContain('parcels')
      const selected = await call(
        url,
        'POST',
        '/v1/select-tools',
        JSON.stringify({ instruction: 'track my parcel', library: 'parcels' }),
      )
      expect(selected.status, selected.text).toBe(200)
      expect(JSON.parse(selected.text).tools[0].name).toBe('lookup_parcel')
    }
    const deleted = await call(url, 'DELETE', '/v1/libraries/parcels')
    expect(deleted.status, deleted.text).toBe(204)
    for (let attempt = 0; attempt < 12; attempt += 1)
      expect(await libraryNames(url)).not.toContain('parcels')

    child.kill('SIGTERM')
    await new Promise((resolve) => child.once('exit', resolve))
    expect(child.exitCode).toBe(0)
    expect(logs()).toMatch(/SIGTERM received: stopping the workers/)
    // The primary's own last line, after the workers' (it wrote none before round 38).
    expect(logs().trimEnd().split('\n').at(-1)).toMatch(
      /INFO Stopped: every worker has exited \(SIGTERM received\); exit code 0 \{"restarts":0\}$/,
    )
  }, 150_000)

  // One `serve --workers 2` (no setting of its own) for these tests, in this order: starting one
  // per test cost 5-9 s each under load. Each test states what it needs of the server's state.
  describe('one server for the tests that set nothing', () => {
    let shared: RunningServe
    /** Its `Ready: libraries` lines: one per worker started. */
    const readyLines = () => (shared.logs().match(/Ready: libraries/g) ?? []).length
    /** The server's log from `from` (a length of it) on, for a failed wait to say what it saw. */
    const logsFrom = (from: number) => () => `server log since:\n${shared.logs().slice(from)}`
    // While this file exists, the next worker started removes it and stops itself (SIGSTOP)
    // before it is ready, until the test lets it go on (SIGCONT).
    const hold = join(tmpdir(), `toolsel-serve-workers-hold-${process.pid}-${Date.now()}`)

    beforeAll(async () => {
      shared = await startServe(['--workers', '2'], {
        // Its tests write as fast as the workers answer (hundreds of writes): no write budget.
        // They kill a worker five times: replaced at once, then 0.1 s, 0.2 s, 0.4 s and 0.8 s
        // later (1 s, 2 s, 4 s and 8 s by default: 15 s of waiting).
        env: {
          TOOLSEL_WRITES_PER_MINUTE: '0',
          TOOLSEL_TEST_STOP_BEFORE_READY_FILE: hold,
          TOOLSEL_TEST_WORKER_REPLACE_BASE_MS: '100',
        },
      })
    }, 120_000)
    afterAll(async () => {
      await rm(hold, { force: true })
      await shared?.stop()
    })

    it("/metrics is every worker's, summed through the primary, and counts a worker replaced", async () => {
      const { url, logs, child } = shared
      // First on this server: no request, no worker replaced before.
      const series = async (name: string) => {
        const { status, text } = await call(url, 'GET', '/metrics')
        expect(status).toBe(200)
        return text
          .split('\n')
          .filter((line) => line.startsWith(name))
          .join('\n')
      }
      // Fresh connections: the workers take them in turn, five each.
      for (let request = 0; request < 10; request += 1) {
        const { status } = await call(url, 'POST', '/v1/search-tools', '{"query":"send an email"}')
        expect(status).toBe(200)
      }
      for (let scrape = 0; scrape < 2; scrape += 1) {
        expect(await series('toolsel_http_requests_total{method="POST"')).toBe(
          'toolsel_http_requests_total{method="POST",route="/v1/search-tools",status="200"} 10',
        )
        expect(await series('toolsel_worker')).toBe(
          'toolsel_workers 2\ntoolsel_worker_restarts_total 0\ntoolsel_workers_scraped 2',
        )
      }
      expect(await series('toolsel_library_tools{library="demo"}')).toBe(
        'toolsel_library_tools{library="demo"} 197',
      )
      expect(await series('toolsel_ready')).toBe('toolsel_ready 1')

      const [victim] = workerPids(child.pid!)
      const logsBefore = logs().length
      process.kill(victim!, 'SIGKILL')
      // A replacement's start is a serve's (startServe: 90 s at most).
      await until(
        `a worker in place of ${victim}`,
        () => readyLines() >= 3,
        90_000,
        logsFrom(logsBefore),
      )
      expect(await series('toolsel_worker')).toBe(
        'toolsel_workers 2\ntoolsel_worker_restarts_total 1\ntoolsel_workers_scraped 2',
      )
    }, 120_000)

    it('answers concurrent PUTs of one library through both workers with 2xx (or a clean 503), and saves one of them whole', async () => {
      const { url, logs, indexDir: dir } = shared
      // Upload i holds i + 1 tools: the saved tool count tells which upload won.
      const uploads = Array.from({ length: 8 }, (_, upload) =>
        Array.from({ length: upload + 1 }, (_, tool) => ({
          name: `tool_${upload}_${tool}`,
          description: `Tool ${tool} of upload ${upload}.`,
        })),
      )
      for (let round = 0; round < 3; round += 1) {
        // Fresh connections alternate between the workers: both write the library at once, and
        // each loads the other's saves (a load recovers the index directory) meanwhile.
        const answers = await Promise.all(
          uploads.map((tools) => call(url, 'PUT', '/v1/libraries/race', JSON.stringify(tools))),
        )
        for (const answer of answers) {
          if (answer.status === 503)
            expect(JSON.parse(answer.text).error.code, answer.text).toBe('LIBRARY_BUSY')
          else expect([200, 201], answer.text).toContain(answer.status)
        }
        const saved = await loadIndexedLibrary(join(dir, 'race'), defaultConfig())
        const names = saved.library.tools.map((tool) => tool.name)
        expect(names).toEqual(uploads[names.length - 1]!.map((tool) => tool.name))
        // Nothing of a write is left behind: no temporary or old directory, no lock.
        expect(await indexDirEntries(dir)).toEqual(['race'])
      }
      expect(logs()).not.toMatch(/Library change not applied/)
    }, 150_000)
    it('leaves every worker serving what is on disk after concurrent PUTs and DELETEs through both', async () => {
      const { url, logs, indexDir: dir } = shared
      const upload = (size: number) =>
        JSON.stringify(
          Array.from({ length: size }, (_, tool) => ({
            name: `tool_${size}_${tool}`,
            description: `Tool ${tool} of upload ${size}.`,
          })),
        )
      for (let round = 0; round < 12; round += 1) {
        // Fresh connections alternate between the workers: both change the library at once.
        const answers = await Promise.all(
          [1, 0, 2, 0, 3, 4, 0, 5].map((size) =>
            size === 0
              ? call(url, 'DELETE', '/v1/libraries/race')
              : call(url, 'PUT', '/v1/libraries/race', upload(size)),
          ),
        )
        // 404: a DELETE that found the library deleted already.
        for (const answer of answers)
          expect([200, 201, 204, 404, 503], answer.text).toContain(answer.status)
        // Every change is answered once every worker has it: each must serve what is saved.
        await expectServesDisk(url, dir, 4, `round ${round}`)
      }
      expect(logs()).not.toMatch(/Library change not applied/)
    }, 240_000)

    it('a worker started after another was killed during writes answers every write and serves what is on disk', async () => {
      const { url, logs, child, indexDir: dir } = shared
      const readyBefore = readyLines()
      const upload = (size: number) =>
        JSON.stringify(
          Array.from({ length: size }, (_, tool) => ({
            name: `tool_${size}_${tool}`,
            description: `Tool ${tool} of upload ${size}.`,
          })),
        )
      // The tests before leave library `race` saved or deleted: none from here.
      expect([204, 404]).toContain((await call(url, 'DELETE', '/v1/libraries/race')).status)
      expect((await call(url, 'PUT', '/v1/libraries/race', upload(1))).status).toBe(201)
      const workers = () => workerPids(child.pid!)
      // A write that waits for a worker that never answers hangs: each must be answered.
      const answered = (request: Promise<{ status: number; text: string }>) =>
        Promise.race([
          request.catch((error: Error) => ({ status: 0, text: error.message })),
          new Promise<{ status: number; text: string }>((resolve) =>
            setTimeout(() => resolve({ status: -1, text: 'no answer within 20 s' }), 20_000),
          ),
        ])
      for (let kill = 1; kill <= 2; kill += 1) {
        let writing = true
        // Held while the worker is killed: a connection handed to a worker as it dies is node's
        // matter, not this test's.
        let paused = false
        let inFlight = 0
        // Two writers: fresh connections, so both workers (and the new one once it listens).
        const writer = async (offset: number) => {
          const answers: { status: number; text: string }[] = []
          for (let size = offset; writing; size += 2) {
            if (paused) {
              await new Promise((resolve) => setTimeout(resolve, 5))
              continue
            }
            inFlight += 1
            answers.push(
              await answered(call(url, 'PUT', '/v1/libraries/race', upload(2 + (size % 9)))),
            )
            inFlight -= 1
          }
          return answers
        }
        const writers = [writer(0), writer(1)]
        await new Promise((resolve) => setTimeout(resolve, 300))
        paused = true
        while (inFlight > 0) await new Promise((resolve) => setTimeout(resolve, 5))
        const [victim] = workers()
        const logsBefore = logs().length
        process.kill(victim!, 'SIGKILL')
        await until(
          `"Worker ${victim} exited" (killed)`,
          () => logs().includes(`Worker ${victim} exited`),
          30_000,
          logsFrom(logsBefore),
        )
        paused = false
        // The primary starts another (after 0.1 s or 0.2 s: its second and third death in 5 min);
        // writes go on while it loads, and after it is ready.
        await until(
          `a worker in place of ${victim}`,
          () => readyLines() >= readyBefore + kill,
          90_000,
          logsFrom(logsBefore),
        )
        await new Promise((resolve) => setTimeout(resolve, 500))
        writing = false
        // 503: the new worker not ready yet (NOT_READY), or LIBRARY_BUSY.
        const all = (await Promise.all(writers)).flat()
        for (const answer of all) expect([200, 201, 503], answer.text).toContain(answer.status)
        await expectServesDisk(url, dir, 6, `kill ${kill}`)
      }
      expect(logs()).not.toMatch(/Library change not applied|not reconciled/)
      // Two kills, each bounded by its waits (30 s + 90 s), and the writes.
    }, 300_000)

    it('a worker started in place of a killed one takes no connection before it is ready: /readyz and queries stay 200', async () => {
      const { url, logs, child } = shared
      const readyBefore = readyLines()
      const before = workerPids(child.pid!)
      const [victim] = before
      const logsBefore = logs().length
      const seen = () =>
        `workers ${JSON.stringify(workerPids(child.pid!).map((pid) => [pid, procState(pid)]))}; ${logsFrom(logsBefore)()}`
      // Its replacement stops itself before it is ready, for as long as this test takes to ask
      // (until round 43 the test raced its load: at load 15-25 it asked too few times, or timed
      // out waiting without a word).
      await writeFile(hold, '')
      let held: number | undefined
      try {
        process.kill(victim!, 'SIGKILL')
        await until(
          `"Worker ${victim} exited" (killed)`,
          () => logs().includes(`Worker ${victim} exited`),
          30_000,
          seen,
        )
        // Started after a backoff (its fourth death in 5 min: 0.4 s), then held before it is ready.
        await until(
          'the replacement to stop itself before it is ready',
          () => {
            held = workerPids(child.pid!).find(
              (pid) => !before.includes(pid) && procState(pid) === 'T',
            )
            return held !== undefined && !existsSync(hold)
          },
          120_000,
          seen,
        )
        // Fresh connections, handed to the listening workers in turn, while the new one loads: a
        // connection handed to it would hang (it is stopped) and fail the call.
        const answers: Array<{ status: number; text: string }> = []
        for (let turn = 0; turn < 6; turn += 1) {
          answers.push(await callWithin(url, 'GET', '/readyz'))
          answers.push(
            await callWithin(
              url,
              'POST',
              '/v1/search-tools',
              JSON.stringify({ query: 'send an email' }),
            ),
          )
        }
        expect(procState(held!), 'held before it is ready meanwhile').toBe('T')
        expect(readyLines()).toBe(readyBefore)
        process.kill(held!, 'SIGCONT')
        await until(
          `the replacement ${held} ready`,
          () => readyLines() >= readyBefore + 1,
          90_000,
          seen,
        )
        // And once it listens: both serve.
        for (let turn = 0; turn < 6; turn += 1)
          answers.push(await callWithin(url, 'GET', '/readyz'))
        expect(answers.filter((answer) => answer.status !== 200)).toEqual([])
        expect(logs().slice(logsBefore)).toMatch(/Listening on http:\/\/[^ ]+ \(ready\)/)
        expect(workerPids(child.pid!)).toHaveLength(2)
      } finally {
        // Never leave a worker stopped, nor the switch armed, for the next test.
        await rm(hold, { force: true })
        if (held !== undefined && procState(held) === 'T') process.kill(held, 'SIGCONT')
      }
      // The waits' bounds, 240 s, and some.
    }, 300_000)

    // Last on this server: it stops it (its own server cost a start, 5-9 s under load; round 41).
    it('on SIGINT stops every worker, a replaced one too, and its last line says why and the exit code', async () => {
      const { logs, child } = shared
      const readyBefore = readyLines()
      const [victim] = workerPids(child.pid!)
      const logsBefore = logs().length
      process.kill(victim!, 'SIGKILL')
      // Its fifth death in 5 min: replaced 0.8 s later (the switch's backoff), then its start (90 s
      // at most).
      await until(
        `a worker in place of ${victim}`,
        () => readyLines() >= readyBefore + 1,
        120_000,
        logsFrom(logsBefore),
      )
      expect(logs().slice(logsBefore)).toContain(
        '5 workers in the last 5 min after they were ready; starting another in 0.8 s',
      )
      child.kill('SIGINT')
      await new Promise((resolve) => child.once('exit', resolve))
      expect(child.exitCode, logs()).toBe(0)
      const lines = logs().trimEnd().split('\n')
      expect(lines.filter((line) => / INFO Stopped \{/.test(line))).toHaveLength(2)
      // Every worker started after the first two replaced one (this test's and earlier tests').
      expect(lines.at(-1)).toMatch(
        new RegExp(
          `INFO Stopped: every worker has exited \\(SIGINT received\\); exit code 0 \\{"restarts":${readyLines() - 2}\\}$`,
        ),
      )
    }, 150_000)
  })

  it('a worker that fails to start exits: at the start the server stops with 1 (it hung), a replacement is tried again after a doubling delay', async () => {
    // Each wait below is bounded as a serve's start is (startServe: 90 s), from its own start:
    // with two busy loops on this 2-core machine a worker took 10-20 s from its fork to ready or
    // to its failure, and one 60 s bound from the kill to the third start's end ran out (round 39).
    const START_MS = 90_000
    const root = await mkdtemp(join(tmpdir(), 'toolsel-worker-start-'))
    try {
      const failed = await new Promise<{ code: number | null; stderr: string }>((resolve) => {
        const child = execFile(
          process.execPath,
          ['bin/toolsel.mjs', 'serve', '--workers', '2', '--port', '0', '--index-dir', root],
          {
            cwd: ROOT,
            timeout: START_MS,
            env: { ...process.env, TOOLSEL_LIBRARY: join(root, 'missing.json'), TOOLSEL_PORT: '' },
          },
          (_error, _stdout, stderr) => resolve({ code: child.exitCode, stderr }),
        )
      })
      expect(failed.code, failed.stderr).toBe(1)
      expect(failed.stderr).toMatch(/Worker \d+ exited before it was ready \(code 1\); stopping/)
      expect(failed.stderr).toMatch(
        /ERROR Stopped: every worker has exited \(worker \d+ exited before it was ready, code 1\); exit code 1/,
      )

      // Served from a tool file, which is gone when a worker is replaced: not started again at once.
      const file = join(root, 'tools.json')
      await writeFile(file, JSON.stringify([{ name: 'ping', description: 'Ping a host.' }]))
      // Tried again 0.1 s, 0.2 s, … later (TOOLSEL_TEST_WORKER_REPLACE_BASE_MS; 1 s, 2 s, … by
      // default, as serve-workers-crash-loop checks): the same doubling without 3-7 s of waits.
      server = await startServe(['--workers', '2', '--library', file], {
        env: { TOOLSEL_TEST_WORKER_REPLACE_BASE_MS: '100' },
      })
      const { url, logs, child } = server
      await rename(file, `${file}.away`)
      const [victim] = workerPids(child.pid!)
      process.kill(victim!, 'SIGKILL')
      // Two replacements' starts, both failing, and the 0.1 s between them.
      let deadline = Date.now() + START_MS
      while (!logs().includes('exited before it was ready (code 1); starting another in 0.2 s')) {
        if (Date.now() > deadline) throw new Error(`no second try:\n${logs()}`)
        await new Promise((resolve) => setTimeout(resolve, 50))
      }
      expect(logs()).toContain('exited before it was ready (code 1); starting another in 0.1 s')
      // The other worker serves meanwhile, and the metrics say one is missing between two tries
      // (asked until then: a try forked meanwhile is alive, counted, until it fails again; before
      // round 50 asked once, within 2 s of the second failure, a race on a loaded machine).
      expect((await call(url, 'GET', '/readyz')).status).toBe(200)
      deadline = Date.now() + START_MS
      let metrics = ''
      while (!/^toolsel_workers 1$/m.test((metrics = (await call(url, 'GET', '/metrics')).text))) {
        if (Date.now() > deadline)
          throw new Error(`never one worker missing:\n${metrics}\n${logs()}`)
        await new Promise((resolve) => setTimeout(resolve, 20))
      }
      await rename(`${file}.away`, file)
      // The next try's start (the doubled delay after the last failure: 0.4 s, 0.8 s, …).
      deadline = Date.now() + START_MS
      while ((logs().match(/Ready: libraries/g) ?? []).length < 3) {
        if (Date.now() > deadline) throw new Error(`no worker once the file is back:\n${logs()}`)
        await new Promise((resolve) => setTimeout(resolve, 50))
      }
      expect(workerPids(child.pid!)).toHaveLength(2)
    } finally {
      await rm(root, { recursive: true, force: true })
    }
    // The three waits and the server's start (startServe: 90 s), and some.
  }, 400_000)
})
