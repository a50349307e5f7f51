/**
 * What one caller's rejected call_tool leaves for other keys to read (round 40, hard28). An
 * upstream answering a call with a JSON-RPC error that quotes the call's arguments (as many
 * servers' validation errors do) had that message kept as the server's `lastError`, which
 * `list_servers` and `/readyz` show every key that sees the server: another caller's arguments.
 * Now the caller gets the message and `lastError` the code only. A real stdio upstream (the node
 * fixture), a real HTTP toolsel, real keys.
 */
import { fileURLToPath } from 'node:url'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { call, dataOf, errorOf, startToolsel, type Harness } from './fixtures/toolsel-harness.ts'

const UPSTREAM = fileURLToPath(new URL('./fixtures/node-upstream.mjs', import.meta.url))
const ADMIN = 'admin-key-0123456789abcdef'
const CALLER = 'caller-key-0123456789abcdef'
const OTHER = 'other-key-0123456789abcdefg'
const SECRET = 'account 4000-1234 of Ann Example'

describe("a rejected call's message", () => {
  let harness: Harness

  beforeAll(async () => {
    harness = await startToolsel({
      log: { level: 'silent' },
      auth: { adminKey: ADMIN, readKeys: [CALLER, OTHER] },
      gateway: {
        spawnTimeoutMs: 120_000,
        servers: {
          ledger: {
            command: process.execPath,
            args: [UPSTREAM],
            env: { UPSTREAM_TOOLS: '1', UPSTREAM_REJECT_CALLS: '1' },
          },
        },
      },
    })
  }, 150_000)
  afterAll(async () => {
    await harness?.close()
  })

  const connect = (key: string) => harness.connect('/mcp', { authorization: `Bearer ${key}` })

  it('goes to its caller only, not to list_servers or /readyz', async () => {
    const rejected = errorOf(
      await call(await connect(CALLER), 'call_tool', {
        id: 'ledger.tool_0',
        arguments: { text: SECRET },
      }),
    )
    expect(rejected.code).toBe('INVALID_INPUT')
    expect(rejected.message).toContain(SECRET)

    const listed = dataOf<{ servers: Array<{ name: string; lastError: string | null }> }>(
      await call(await connect(OTHER), 'list_servers'),
    )
    expect(listed.servers.map(({ name, lastError }) => ({ name, lastError }))).toEqual([
      {
        name: 'ledger',
        lastError:
          "tools/call tool_0: rejected with JSON-RPC error -32602 (its message went to that call's caller only)",
      },
    ])
    const readyz = await fetch(`${harness.baseUrl}/readyz`, {
      headers: { authorization: `Bearer ${OTHER}` },
    })
    const text = await readyz.text()
    expect(text).toContain('rejected with JSON-RPC error -32602')
    expect(text).not.toContain('Ann Example')
  })
})
