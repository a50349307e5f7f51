/**
 * A read client chooses its scope with each request (`/mcp?servers=…&tags=…`). Round 27 (sec13):
 * every union of real servers it had not asked for lately built its own BM25 index (~0.11 ms of
 * CPU a tool plus ~50 ms, bench/scope-union-probe.ts), so a client naming a new union with each
 * request kept a core busy for as long as it liked. Each key now has a budget of tools indexed
 * into new views a minute (`mcp.scopeViewToolsPerMinute`); past it a new scope is
 * `RATE_LIMITED`, while its scopes asked for before, and other keys, answer as they did.
 */
import { mkdtemp, rm } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { MIN_VIEW_CHARGE, ViewBudget } from '../../src/mcp/view-budget.ts'
import { serverTools } from './fixtures/server-tools.ts'
import { call, dataOf, errorOf, startToolsel, type Harness } from './fixtures/toolsel-harness.ts'

const KEYS = {
  admin: 'admin-key-0123456789',
  a: 'read-key-a-0123456789',
  b: 'read-key-b-0123456789',
  /** Two keys given one name, and a read key named "admin". */
  bot1: 'read-key-bot1-0123456789',
  bot2: 'read-key-bot2-0123456789',
  namedAdmin: 'read-key-admin-0123456789',
}
const SEARCH = { query: 'record status owner', k: 5 }

type ReadKeys = Array<string | { key: string; name: string }>

/** The index directories the harnesses save `big` in (was the checkout's indexes/). */
const indexDirs: string[] = []

async function start(perMinute: number, readKeys: ReadKeys = [KEYS.a, KEYS.b]): Promise<Harness> {
  const indexDir = await mkdtemp(join(tmpdir(), 'toolsel-scope-budget-'))
  indexDirs.push(indexDir)
  const harness = await startToolsel({
    log: { level: 'silent' },
    library: { default: 'demo', loadAll: false, indexDir },
    auth: { adminKey: KEYS.admin, readKeys },
    mcp: { scopeViewToolsPerMinute: perMinute },
  })
  await harness.service.putLibrary('big', Buffer.from(JSON.stringify(serverTools(2000))), {})
  return harness
}

describe('new scoped views a read key may have built', () => {
  let limited: Harness
  let unlimited: Harness
  let named: Harness

  beforeAll(async () => {
    // Two new views of 200 tools (each charged MIN_VIEW_CHARGE) and one of 1,800 leave the bucket
    // 1,300 tools short: 31 s until a new view is built again.
    limited = await start(2.5 * MIN_VIEW_CHARGE)
    unlimited = await start(0)
    named = await start(2.5 * MIN_VIEW_CHARGE, [
      { key: KEYS.bot1, name: 'bot' },
      { key: KEYS.bot2, name: 'bot' },
      { key: KEYS.namedAdmin, name: 'admin' },
    ])
    // Three servers over a saved 2,000-tool library: seconds when quiet; past the 60 s hook
    // timeout in a full run at load ~18 (round 38).
  }, 180_000)
  afterAll(async () => {
    await limited.close()
    await unlimited.close()
    await named.close()
    for (const dir of indexDirs.splice(0)) await rm(dir, { recursive: true, force: true })
  })

  /** Three new unions built for `key` (the budget then spent), a fourth one refused. */
  const exhaust = async (harness: Harness, key: string, unions: string[], refused: string) => {
    for (const union of unions) dataOf(await search(harness, key, union))
    const error = errorOf(await search(harness, key, refused))
    expect([error.code, error.message]).toEqual([
      'RATE_LIMITED',
      expect.stringContaining('mcp.scopeViewToolsPerMinute'),
    ])
  }

  const search = async (harness: Harness, key: string, servers: string) =>
    call(
      await harness.connect(`/mcp?library=big&servers=${servers}`, {
        authorization: `Bearer ${key}`,
      }),
      'search_tools',
      SEARCH,
    )

  it('refuses a new union past the budget; its scopes asked for before and other keys answer as without one', async () => {
    const wide = Array.from({ length: 18 }, (_, index) => `srv${index + 2}`).join(',')
    const unions = ['srv0,srv1', 'srv1,srv2', wide]
    const answers = []
    for (const union of unions) answers.push(dataOf(await search(limited, KEYS.a, union)))
    const refused = errorOf(await search(limited, KEYS.a, 'srv0,srv2'))
    expect(refused.code).toBe('RATE_LIMITED')
    expect(refused.message).toContain('mcp.scopeViewToolsPerMinute')
    expect(refused.message).not.toContain(KEYS.a)
    expect(refused.details?.retryAfterSeconds).toBeGreaterThan(0)
    // The same tools named otherwise are the same view: not new.
    expect(dataOf(await search(limited, KEYS.a, 'srv1,srv0,nosuch'))).toEqual(answers[0])
    for (const [index, union] of unions.entries()) {
      expect(dataOf(await search(limited, KEYS.a, union))).toEqual(answers[index])
      expect(dataOf(await search(unlimited, KEYS.a, union))).toEqual(answers[index])
    }
    // Another key has its own budget, and its answer is the one a server without budgets gives.
    expect(dataOf(await search(limited, KEYS.b, 'srv0,srv2'))).toEqual(
      dataOf(await search(unlimited, KEYS.b, 'srv0,srv2')),
    )
    // Without a budget, as before round 27: every new union is built.
    for (const union of ['srv8,srv9', 'srv10,srv11', 'srv12,srv13', 'srv14,srv15'])
      expect(
        dataOf<{ tools: unknown[] }>(await search(unlimited, KEYS.a, union)).tools,
      ).toHaveLength(5)
  })

  it('is a key\'s, not its name\'s: two keys given one name, a read key named "admin"', async () => {
    // Before round 33 a bucket was a name's: bot2 and then the admin key were refused here.
    const wide = Array.from({ length: 18 }, (_, index) => `srv${index + 2}`).join(',')
    await exhaust(named, KEYS.bot1, ['srv0,srv1', 'srv1,srv2', wide], 'srv0,srv2')
    expect(dataOf(await search(named, KEYS.bot2, 'srv0,srv2'))).toBeDefined()
    // Views are shared (a cached one is free to any key): other unions for the next key.
    const rest = Array.from({ length: 14 }, (_, index) => `srv${index + 6}`).join(',')
    await exhaust(named, KEYS.namedAdmin, ['srv3,srv4', 'srv4,srv5', rest], 'srv3,srv5')
    // The admin key's budget is its own.
    expect(dataOf(await search(named, KEYS.admin, 'srv3,srv5'))).toBeDefined()
  })
})

describe('ViewBudget', () => {
  it('builds one view larger than the bucket, then refills at its rate', () => {
    const budget = new ViewBudget(60_000)
    const k = { name: 'k' }
    budget.take(k, 100_000, 0)
    expect(() => budget.take(k, 10, 1)).toThrow(/Too many new scopes: "k"/)
    // 40,000 tools behind at 0 ms: above zero again after 40,000 ms (1,000 tools a second).
    expect(() => budget.take(k, 10, 39_999)).toThrow(/about 1 s/)
    budget.take(k, 10, 40_001)
    // Another key, even under the same name, has its own bucket.
    budget.take({ name: 'k' }, 60_000, 40_002)
    expect(() => new ViewBudget(0).take(k, 1e9, 0)).not.toThrow()
  })
})
