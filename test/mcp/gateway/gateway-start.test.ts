/**
 * The gateway's start-up with real stdio processes (test/mcp/fixtures/tiny-upstream.sh, a bash
 * MCP server that starts in milliseconds): a listing is bounded as a whole by
 * gateway.listDeadlineMs (at connect and at a re-list on list_changed), all or nothing, and at
 * most gateway.connectConcurrency upstreams connect at once, `/readyz` saying how many are done,
 * connecting and waiting meanwhile.
 */
import { readdir, readFile } from 'node:fs/promises'
import { randomUUID } from 'node:crypto'
import { fileURLToPath } from 'node:url'
import { afterEach, describe, expect, it } from 'vitest'
import { createComponents } from '../../../src/components.ts'
import { parseConfig, type ConfigLayer } from '../../../src/config/load-config.ts'
import { createMemoryLogger } from '../../../src/log.ts'
import { McpGateway } from '../../../src/mcp/gateway/mcp-gateway.ts'
import type { FirstSyncCounts, UpstreamState } from '../../../src/mcp/gateway/upstream-state.ts'
import { createApp } from '../../../src/server/app.ts'
import { ToolselService } from '../../../src/service/toolsel-service.ts'
import { listenApp } from '../../helpers/listen-app.ts'

const TINY = fileURLToPath(new URL('../fixtures/tiny-upstream.sh', import.meta.url))

const cleanups: Array<() => Promise<unknown> | unknown> = []
afterEach(async () => {
  for (const cleanup of cleanups.splice(0).reverse()) await cleanup()
})

/** A tiny stdio upstream; `marker` (an argument the script ignores) finds its processes. */
const tiny = (env: Record<string, string> = {}, marker = 'tiny') => ({
  command: 'bash',
  args: [TINY, marker],
  env,
})

async function startGateway(gateway: Record<string, unknown>, layer: ConfigLayer = {}) {
  const config = parseConfig({
    ...layer,
    log: { level: 'silent' },
    library: { default: 'demo', loadAll: false },
    gateway: {
      syncIntervalMs: 0,
      reconnectInitialMs: 600_000,
      reconnectMaxMs: 600_000,
      ...gateway,
    },
  })
  const logger = createMemoryLogger()
  const service = new ToolselService(config, logger, createComponents(config, logger))
  await service.start()
  const made = new McpGateway(service)
  cleanups.push(() => made.close())
  return { service, gateway: made }
}

const stateOf = (gateway: McpGateway, name: string) =>
  gateway.servers().find((server) => server.name === name)!

const libraryIds = (service: ToolselService) =>
  service.libraries
    .require('gateway')
    .library.tools.map((tool) => tool.id)
    .sort()

async function until<T>(read: () => T, check: (seen: T) => boolean, what: string): Promise<T> {
  // Only a safety net for a hang; the error says what was seen instead.
  const deadline = Date.now() + 60_000
  for (;;) {
    const seen = read()
    if (check(seen)) return seen
    if (Date.now() > deadline) throw new Error(`not seen: ${what}: ${JSON.stringify(seen)}`)
    await new Promise((resolve) => setTimeout(resolve, 20))
  }
}

/**
 * How many of this process's children run with `marker` in their command line (Linux
 * /proc/<pid>/task/<tid>/children: a scan of every process took longer than the whole start-up).
 */
async function processesWith(marker: string): Promise<number> {
  let count = 0
  for (const task of await readdir(`/proc/${process.pid}/task`)) {
    const children = await readFile(`/proc/${process.pid}/task/${task}/children`, 'utf8').catch(
      () => '',
    )
    for (const child of children.split(' ').filter(Boolean)) {
      const commandLine = await readFile(`/proc/${child}/cmdline`, 'utf8').catch(() => '')
      if (commandLine.includes(marker)) count += 1
    }
  }
  return count
}

describe('gateway.listDeadlineMs: one whole listing is bounded, all or nothing', () => {
  it('marks an upstream whose listing never ends down at the deadline, taking none of its pages; the others are ready', async () => {
    // Each page answers in 0.2 s, well under listTimeoutMs, and always has a next cursor:
    // before the deadline the first sync followed 1,000 pages (200 s) and served 2,000 tools.
    const { service, gateway } = await startGateway({
      servers: {
        fast: tiny({ TINY_TOOLS: '3' }),
        endless: tiny({ TINY_ENDLESS: '1', TINY_LIST_DELAY: '0.2' }),
      },
      listTimeoutMs: 5000,
      listDeadlineMs: 1500,
    })
    await gateway.start()
    expect(gateway.synced).toBe(true)
    const endless = stateOf(gateway, 'endless')
    expect(endless).toMatchObject({ status: 'down', toolCount: 0, lastSyncAt: null })
    expect(endless.lastError).toMatch(
      /^MCP error -32001: tools\/list did not finish within 1500 ms \(gateway\.listDeadlineMs\): \d+ pages? \(\d+ tools?\) read; none of them were taken$/,
    )
    expect(stateOf(gateway, 'fast')).toMatchObject({ status: 'connected', toolCount: 3 })
    expect(libraryIds(service)).toEqual(['fast.tool_0', 'fast.tool_1', 'fast.tool_2'])
  }, 60_000)

  it('bounds a re-list on list_changed the same way: the upstream is slow, its earlier tools kept', async () => {
    const { service, gateway } = await startGateway({
      servers: { notes: tiny({ TINY_TOOLS: '3' }) },
      listTimeoutMs: 5000,
      listDeadlineMs: 1500,
    })
    await gateway.start()
    const before = libraryIds(service)
    expect(before).toEqual(['notes.tool_0', 'notes.tool_1', 'notes.tool_2'])
    // The server's listing becomes endless (0.2 s a page) and it sends list_changed.
    const tool = service.libraries.require('gateway').library.tools[0]
    await gateway.callTool({ ...tool, name: 'go_endless' }, { delay: '0.2' })
    const after = await until(
      () => stateOf(gateway, 'notes'),
      (state: UpstreamState) => state.lastError !== null,
      'the re-list failing',
    )
    expect(after).toMatchObject({ status: 'slow', toolCount: 3 })
    expect(after.lastError).toMatch(
      /^tools\/list: MCP error -32001: tools\/list did not finish within 1500 ms \(gateway\.listDeadlineMs\): \d+ pages? \(\d+ tools?\) read; none of them were taken$/,
    )
    await gateway.whenSynced()
    expect(libraryIds(service)).toEqual(before)
  }, 60_000)
})

describe('gateway.connectConcurrency: upstreams connect through a bounded pool', () => {
  it('never runs more upstream processes than those done plus the pool, and /readyz says how many wait', async () => {
    const marker = `pool-${randomUUID()}`
    const servers: Record<string, unknown> = {}
    // Each process works ~0.2 s before it reads stdin (start-up CPU, as node loading modules).
    for (let i = 0; i < 12; i += 1) servers[`s${i}`] = tiny({ TINY_START_WORK: '200000' }, marker)
    const { service, gateway } = await startGateway({ servers, connectConcurrency: 3 })
    const listening = await listenApp(createApp(service, { gateway }).fetch)
    cleanups.push(() => listening.close())

    const starting = gateway.start()
    let done = false
    void starting.finally(() => (done = true))
    const messages = new Set<string>()
    const counted = new Set<string>()
    let polls = 0
    while (!done) {
      // Processes first, then states: "done" only grows, so the bound holds for this order.
      const alive = await processesWith(marker)
      const states = gateway.servers()
      const settled = states.filter((state) => state.status !== 'connecting').length
      expect(alive, `poll ${polls}: ${settled} done`).toBeLessThanOrEqual(settled + 3)
      const answer = await fetch(`${listening.url}/readyz`)
      if (answer.status === 503) {
        const body = (await answer.json()) as {
          error: { message: string }
          firstSync: FirstSyncCounts
        }
        messages.add(body.error.message)
        // The message's counts, as fields.
        const { upstreams, done, connecting, pastSlot, waiting } = body.firstSync
        expect(body.firstSync.connectConcurrency).toBe(3)
        expect(upstreams).toBe(12)
        expect(done + connecting + waiting).toBe(12)
        expect(connecting).toBeLessThanOrEqual(3)
        expect(pastSlot).toBe(0)
        counted.add(`${done}/${connecting}/${waiting}`)
      }
      polls += 1
    }
    await starting
    expect(polls).toBeGreaterThan(0)
    // While the pool drained, /readyz (503) said where the first sync stood.
    expect(
      [...messages].some((message) =>
        /^Not ready: the gateway is still syncing its upstream servers \(\d+ of 12 upstreams done, [0-3] connecting, \d+ waiting for a connect slot \(gateway\.connectConcurrency 3\)\)\.$/.test(
          message,
        ),
      ),
      [...messages].join('\n'),
    ).toBe(true)
    // Some poll saw upstreams waiting for a slot, as fields too.
    expect(
      [...counted].some((seen) => Number(seen.split('/')[2]) > 0),
      [...counted].join(' '),
    ).toBe(true)
    expect(gateway.servers().map((state) => state.status)).toEqual(Array(12).fill('connected'))
    const ready = await fetch(`${listening.url}/readyz`)
    expect(ready.status).toBe(200)
    expect(((await ready.json()) as { firstSync: FirstSyncCounts }).firstSync).toEqual({
      upstreams: 12,
      done: 12,
      connecting: 0,
      pastSlot: 0,
      waiting: 0,
      connectConcurrency: 3,
    })
    expect(await processesWith(marker)).toBe(12)
  }, 120_000)
})

describe('gateway.firstSyncTimeoutMs: the first sync holds readiness this long at most', () => {
  it('is ready at the timeout with the upstreams not done yet still connecting, which go on', async () => {
    // `stuck` never answers initialize (a process that reads nothing) and holds the only slot
    // for its whole spawnTimeoutMs (4 s); `fast` waits behind it.
    const { service, gateway } = await startGateway({
      servers: {
        stuck: { command: 'sleep', args: ['600'] },
        fast: tiny({ TINY_TOOLS: '2' }),
      },
      connectConcurrency: 1,
      spawnTimeoutMs: 4000,
      firstSyncTimeoutMs: 1000,
    })
    const listening = await listenApp(createApp(service, { gateway }).fetch)
    cleanups.push(() => listening.close())
    await gateway.start()
    expect(gateway.synced).toBe(true)
    const answer = await fetch(`${listening.url}/readyz`)
    expect(answer.status).toBe(200)
    const body = (await answer.json()) as { upstreams: UpstreamState[] }
    expect(body.upstreams.map((state) => [state.name, state.status, state.lastSyncAt])).toEqual([
      ['stuck', 'connecting', null],
      ['fast', 'connecting', null],
    ])
    expect(gateway.pendingReason('fast.tool_0')).toBe(
      'server "fast" is connecting and has not listed its tools yet',
    )
    expect(libraryIds(service)).toEqual([])
    // They go on: `stuck` times out, `fast` gets the slot and its tools are added.
    await until(
      () => gateway.servers().map((state) => state.status),
      (statuses) => statuses[0] === 'down' && statuses[1] === 'connected',
      'stuck down, fast connected',
    )
    await gateway.whenSynced()
    expect(libraryIds(service)).toEqual(['fast.tool_0', 'fast.tool_1'])
  }, 60_000)
})

describe('gateway.connectSlotMs: a hung start-up gives its slot to the next in line', () => {
  const READ = 'read-key-0123456789abcdef'

  it('lists the healthy upstreams queued behind hung ones while those still run within spawnTimeoutMs', async () => {
    // 4 processes that never answer initialize take the 4 slots first; 8 healthy ones queue
    // behind them. Before connectSlotMs the healthy ones waited the hung ones' whole
    // spawnTimeoutMs (30 s here), and found them down by then.
    const servers: Record<string, unknown> = {}
    for (let i = 0; i < 4; i += 1) servers[`hung${i}`] = { command: 'sleep', args: ['600'] }
    for (let i = 0; i < 8; i += 1) servers[`ok${i}`] = tiny({ TINY_TOOLS: '2' })
    const { service, gateway } = await startGateway(
      {
        servers,
        connectConcurrency: 4,
        connectSlotMs: 300,
        spawnTimeoutMs: 30_000,
        firstSyncTimeoutMs: 60_000,
      },
      { auth: { readKeys: [READ] } },
    )
    const listening = await listenApp(createApp(service, { gateway }).fetch)
    cleanups.push(() => listening.close())
    const starting = gateway.start()

    const healthy = (states: UpstreamState[]) =>
      states.filter((state) => state.name.startsWith('ok'))
    const states = await until(
      () => gateway.servers(),
      (seen) => healthy(seen).every((state) => state.status === 'connected'),
      'every healthy upstream connected',
    )
    // The hung ones are still on their first attempt: nothing timed out.
    expect(
      states
        .filter((state) => state.name.startsWith('hung'))
        .map((state) => [state.status, state.lastError]),
    ).toEqual(Array(4).fill(['connecting', null]))
    expect(gateway.synced).toBe(false)
    // The healthy ones can all pass through the slots of the first 3 hung ones to step out,
    // before the 4th one's connectSlotMs timer fires (a loaded machine stretches it): wait
    // for all 4 to be outside the pool rather than race the last one.
    await until(
      () => gateway.firstSyncCounts(),
      (counts) => counts.pastSlot === 4,
      'the 4 hung upstreams past connectSlotMs',
    )

    // /readyz (503) with a key: the counts as fields, the 4 hung ones outside the pool.
    const keyed = await fetch(`${listening.url}/readyz`, {
      headers: { authorization: `Bearer ${READ}` },
    })
    expect(keyed.status).toBe(503)
    const body = (await keyed.json()) as { error: { message: string }; firstSync: FirstSyncCounts }
    expect(body.firstSync).toEqual({
      upstreams: 12,
      done: 8,
      connecting: 4,
      pastSlot: 4,
      waiting: 0,
      connectConcurrency: 4,
    })
    expect(body.error.message).toBe(
      'Not ready: the gateway is still syncing its upstream servers (8 of 12 upstreams done, 4 connecting (4 past gateway.connectSlotMs 300, outside the pool)).',
    )
    // Without a key: the status and a message without the counts.
    const keyless = await fetch(`${listening.url}/readyz`)
    expect(keyless.status).toBe(503)
    expect(await keyless.json()).toEqual({
      error: {
        code: 'NOT_READY',
        message: 'Not ready: the gateway is still syncing its upstream servers.',
      },
      status: 'starting',
    })
    await gateway.whenSynced()
    expect(libraryIds(service)).toHaveLength(16)
    // Closing ends the hung attempts (and so the first sync) without waiting for their timeout.
    await gateway.close()
    await starting
  }, 60_000)

  it('close() ends the wait of the upstreams queued for a slot: none of them starts a process', async () => {
    const marker = `queued-${randomUUID()}`
    const servers: Record<string, unknown> = { hung: { command: 'sleep', args: ['600'] } }
    for (let i = 0; i < 5; i += 1) servers[`q${i}`] = tiny({}, marker)
    const { gateway } = await startGateway({
      servers,
      connectConcurrency: 1,
      connectSlotMs: 60_000,
      spawnTimeoutMs: 60_000,
    })
    const starting = gateway.start()
    await until(
      () => gateway.firstSyncCounts(),
      (counts) => counts.waiting === 5,
      'five upstreams waiting for the slot',
    )
    await gateway.close()
    expect(gateway.firstSyncCounts().waiting).toBe(0)
    await starting
    expect(await processesWith(marker)).toBe(0)
  }, 60_000)
})

describe("/readyz during the first sync follows the caller's scope", () => {
  const ALL = 'read-key-all-0123456789abcdef'
  const OK_ONLY = 'read-key-ok-0123456789abcdef'
  const LIBS_ONLY = 'read-key-demo-0123456789abcdef'

  it('counts only the upstreams a scoped key may see, in firstSync and in the message', async () => {
    // "ok" lists at once, "hung" never answers initialize. Before, a key limited to "ok" got
    // upstreams [ok] but firstSync {upstreams: 2, done: 1, connecting: 1} and the message
    // "1 of 2 upstreams done, 1 connecting"; a caller without a key got the counts too.
    const { service, gateway } = await startGateway(
      {
        servers: { ok: tiny({ TINY_TOOLS: '2' }), hung: { command: 'sleep', args: ['600'] } },
        connectConcurrency: 4,
        spawnTimeoutMs: 60_000,
        firstSyncTimeoutMs: 60_000,
      },
      {
        auth: {
          readKeys: [
            ALL,
            { key: OK_ONLY, servers: ['ok'] },
            { key: LIBS_ONLY, libraries: ['demo'] },
          ],
        },
      },
    )
    const listening = await listenApp(createApp(service, { gateway }).fetch)
    cleanups.push(() => listening.close())
    const starting = gateway.start()
    await until(
      () => stateOf(gateway, 'ok'),
      (ok) => ok.status === 'connected',
      'ok connected',
    )
    await gateway.whenSynced()
    const readyz = async (key?: string) => {
      const answer = await fetch(`${listening.url}/readyz`, {
        headers: key ? { authorization: `Bearer ${key}` } : {},
      })
      expect(answer.status).toBe(503)
      return (await answer.json()) as {
        error: { message: string }
        upstreams?: UpstreamState[]
        firstSync?: FirstSyncCounts
      }
    }
    const pool = { pastSlot: 0, waiting: 0, connectConcurrency: 4 }

    const all = await readyz(ALL)
    expect(all.upstreams?.map((server) => server.name)).toEqual(['ok', 'hung'])
    expect(all.firstSync).toEqual({ upstreams: 2, done: 1, connecting: 1, ...pool })
    expect(all.error.message).toBe(
      'Not ready: the gateway is still syncing its upstream servers (1 of 2 upstreams done, 1 connecting).',
    )

    const scoped = await readyz(OK_ONLY)
    expect(scoped.upstreams?.map((server) => server.name)).toEqual(['ok'])
    expect(scoped.firstSync).toEqual({ upstreams: 1, done: 1, connecting: 0, ...pool })
    expect(scoped.error.message).toBe(
      'Not ready: the gateway is still syncing its upstream servers (1 of 1 upstreams done).',
    )

    // A key that may not use the gateway library, and no key: no upstream detail at all.
    for (const key of [LIBS_ONLY, undefined]) {
      const body = await readyz(key)
      expect(body.upstreams).toBeUndefined()
      expect(body.firstSync).toBeUndefined()
      expect(body.error.message).toBe(
        'Not ready: the gateway is still syncing its upstream servers.',
      )
    }

    // The same scope in an MCP call: a scoped client's pending reason counts its servers only.
    expect(gateway.pendingReason('ok.nothing', { servers: ['ok'], tags: [] })).toBe(
      'the gateway is still connecting to its upstream servers (first sync not done: 1 of 1 upstreams done)',
    )
    await gateway.close()
    await starting
  }, 60_000)
})
