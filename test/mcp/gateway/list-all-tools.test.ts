/**
 * listAllTools against a real stdio server (test/mcp/fixtures/node-upstream.mjs): a single
 * tools/list page far larger than usual is taken whole. Before, its tools were appended as the
 * arguments of one push call, and a page of ~150,000 tools or more (possible under
 * gateway.maxMessageBytes with short tools, once maxToolsPerServer is raised) failed with
 * "RangeError: Maximum call stack size exceeded", marking the server down for it.
 */
import { fileURLToPath } from 'node:url'
import type { Client } from '@modelcontextprotocol/sdk/client/index.js'
import { afterEach, describe, expect, it, vi } from 'vitest'
import { parseConfig } from '../../../src/config/load-config.ts'
import { createUpstreamTransport } from '../../../src/mcp/gateway/create-upstream-transport.ts'
import {
  newUpstreamClient,
  OutputChecks,
  OutputSchemaCompiler,
} from '../../../src/mcp/gateway/upstream-output-schemas.ts'
import {
  listAllTools,
  upstreamTools,
  type ListBounds,
} from '../../../src/mcp/gateway/upstream-tools.ts'

const UPSTREAM = fileURLToPath(new URL('../fixtures/node-upstream.mjs', import.meta.url))

const clients: Client[] = []
afterEach(async () => {
  for (const client of clients.splice(0)) await client.close()
})

/** The fixture through the gateway's own stdio transport (its reads bounded by maxMessageBytes). */
async function connect(env: Record<string, string>): Promise<Client> {
  const maxMessageBytes = 64 * 1024 * 1024
  const { gateway } = parseConfig({
    gateway: { servers: { big: { command: process.execPath, args: [UPSTREAM], env } } },
  })
  const transport = createUpstreamTransport(gateway.servers.big, () => undefined, {
    maxMessageBytes,
    onOversize: () => undefined,
  })
  const client = newUpstreamClient()
  clients.push(client)
  await client.connect(transport)
  return client
}

/** A listing's bounds for a test: 60 s each, 200 tools, 64 MiB of tools, but what `set` says. */
function listBounds(set: Partial<ListBounds>): ListBounds {
  return {
    pageTimeoutMs: 60_000,
    deadlineMs: 60_000,
    maxTools: 200,
    maxChars: 2 ** 26,
    compileBudgetMs: 60_000,
    ...set,
  }
}

describe('listAllTools', () => {
  it('takes one page of 200,000 tools (10 MB) whole', async () => {
    const client = await connect({
      UPSTREAM_TOOLS: '200000',
      UPSTREAM_PAGE_SIZE: '200000',
      UPSTREAM_BARE: '1',
    })
    const bounds = listBounds({ maxTools: 200_000 })
    const { tools } = await listAllTools(client, bounds)
    expect(tools).toHaveLength(200_000)
    expect([tools[0].name, tools[199_999].name]).toEqual(['tool_0', 'tool_199999'])
  }, 60_000)

  it("keeps a tool's annotations whole (keys beyond the five hints too), as an MCP file's import does", async () => {
    const annotations = {
      title: 'Delete a file',
      destructiveHint: true,
      'x-vendor': { approval: { required: true, roles: ['admin'] } },
    }
    const listed = [
      { name: 'delete_file', inputSchema: { type: 'object' }, annotations },
      { name: 'bad_hint', inputSchema: { type: 'object' }, annotations: { readOnlyHint: 'yes' } },
    ]
    // One page, as the SDK's request hands it back parsed with the schema it is given.
    const client = {
      request: async (_request: unknown, schema: { parse(value: unknown): unknown }) =>
        schema.parse({ tools: listed }),
    } as unknown as Client
    const { tools } = await listAllTools(client, listBounds({}))
    expect(tools[0].annotations).toEqual(annotations)
    const served = upstreamTools('files', tools, [])
    expect(served.tools.map((tool) => tool.source?.annotations)).toEqual([annotations])
    // A hint it knows is still checked.
    expect(served.warnings).toEqual([
      'Upstream "files": skipped tool #1 ("bad_hint"): its annotations.readOnlyHint is not valid: Invalid input: expected boolean, received string',
    ])
  })

  it('follows the cursor page by page, in order', async () => {
    const client = await connect({ UPSTREAM_TOOLS: '2500', UPSTREAM_PAGE_SIZE: '1000' })
    const bounds = listBounds({ pageTimeoutMs: 10_000, deadlineMs: 30_000, maxTools: 2500 })
    const names = (await listAllTools(client, bounds)).tools.map((tool) => tool.name)
    expect(names).toEqual(Array.from({ length: 2500 }, (_, k) => `tool_${k}`))
  }, 60_000)

  it('compiles a page of slow output schemas in slices: the event loop runs, the deadline holds', async () => {
    // 120 tools, each outputSchema 1,000 properties (~48,000 characters, under the 65,536 cap):
    // ~0.2-1.5 s of Ajv compile each. Before, the whole page compiled in one turn of the event
    // loop (every request of the server waited 24-180 s) and the deadline was only checked
    // between pages.
    const client = await connect({
      UPSTREAM_TOOLS: '120',
      UPSTREAM_PAGE_SIZE: '120',
      UPSTREAM_OUTPUT_SCHEMA_PROPERTIES: '1000',
    })
    const bounds = listBounds({ pageTimeoutMs: 30_000, deadlineMs: 3_000 })
    let last = performance.now()
    let longestGap = 0
    const tick = setInterval(() => {
      longestGap = Math.max(longestGap, performance.now() - last)
      last = performance.now()
    }, 20)
    try {
      await expect(listAllTools(client, bounds)).rejects.toThrow(
        /tools\/list did not finish within 3000 ms \(gateway\.listDeadlineMs\)/,
      )
    } finally {
      clearInterval(tick)
    }
    // One schema's compile at most (an order of magnitude under the page's).
    expect(longestGap).toBeLessThan(8_000)
  }, 60_000)

  it('stops a listing whose output schemas pass compileBudgetMs of compiling, naming the setting', async () => {
    // The same slow page, a deadline it never reaches: before round 42 nothing but the deadline
    // (60 s by default) bounded the compiling, and a hostile server held a core for all of it at
    // each listing.
    const client = await connect({
      UPSTREAM_TOOLS: '120',
      UPSTREAM_PAGE_SIZE: '120',
      UPSTREAM_OUTPUT_SCHEMA_PROPERTIES: '1000',
    })
    const bounds = listBounds({ compileBudgetMs: 300 })
    const started = performance.now()
    await expect(listAllTools(client, bounds)).rejects.toThrow(
      /^tools\/list's output schemas took more than 300 ms to compile \(gateway\.listCompileBudgetMs\): 1 page \((?:1 tool|\d+ tools)\) read; none of them were taken$/,
    )
    // The budget and one compile past it (0.2-1.5 s on a busy host), not the page's 24-180 s.
    expect(performance.now() - started).toBeLessThan(20_000)
  }, 60_000)

  it('compiles an outputSchema that every tool of a listing shares once, each tool checked by it', async () => {
    // 120 tools sharing one outputSchema of 1,000 properties: before round 43 it was compiled
    // 120 times (~0.2-1.5 s each on a busy host) and the listing ran past a 10 s budget.
    const client = await connect({
      UPSTREAM_TOOLS: '120',
      UPSTREAM_PAGE_SIZE: '40',
      UPSTREAM_OUTPUT_SCHEMA_PROPERTIES: '1000',
      UPSTREAM_OUTPUT_SCHEMA_SAME: '1',
    })
    const bounds = listBounds({ compileBudgetMs: 10_000 })
    const { tools, checks } = await listAllTools(client, bounds)
    expect(tools).toHaveLength(120)
    for (const name of ['tool_0', 'tool_119']) {
      expect(() =>
        checks.check(name, { content: [], structuredContent: { field_7: 'x' } }),
      ).not.toThrow()
      expect(() => checks.check(name, { content: [], structuredContent: { field_7: '' } })).toThrow(
        /data\/field_7 must NOT have fewer than 1 characters/,
      )
    }
  }, 120_000)

  it("counts a compile's own time against compileBudgetMs, not another thread's CPU meanwhile", async () => {
    // process.cpuUsage as it reads while another thread (an import worker) burns a core: 1 s more
    // at each reading. Before round 43 that counted whole, and three small schemas passed a
    // 500 ms budget.
    const client = await connect({ UPSTREAM_TOOLS: '3', UPSTREAM_OUTPUT_SCHEMA_PROPERTIES: '5' })
    const bounds = listBounds({
      pageTimeoutMs: 30_000,
      deadlineMs: 30_000,
      maxTools: 10,
      compileBudgetMs: 500,
    })
    const real = process.cpuUsage.bind(process)
    let other = 0
    const busy = vi.spyOn(process, 'cpuUsage').mockImplementation((previous) => {
      other += 1_000_000
      const now = real()
      now.user += other
      return previous
        ? { user: now.user - previous.user, system: now.system - previous.system }
        : now
    })
    try {
      const { tools } = await listAllTools(client, bounds)
      expect(tools.map((tool) => tool.name)).toEqual(['tool_0', 'tool_1', 'tool_2'])
    } finally {
      busy.mockRestore()
    }
  }, 60_000)
})

describe('OutputSchemaCompiler', () => {
  const schema = (pattern: string, id?: string) => ({
    ...(id && { $id: id }),
    type: 'object',
    properties: { value: { type: 'string', pattern } },
  })

  it('compiles a schema met again in a listing once, $id or not, and a different one again', () => {
    const compiler = new OutputSchemaCompiler()
    const first = compiler.compile(schema('^a+$'))
    expect(compiler.compile(schema('^a+$'))).toBe(first)
    const id = 'https://example.com/result.json'
    const named = compiler.compile(schema('^a+$', id))
    expect(compiler.compile(schema('^a+$', id))).toBe(named)
    expect(compiler.compiles).toBe(2)
    // The same $id, another schema: its own validator (round 42's rule), checking its own pattern.
    const other = compiler.compile(schema('^b+$', id))
    expect(compiler.compiles).toBe(3)
    expect(typeof other === 'function' && other({ value: 'b' })).toBe(true)
    expect(typeof named === 'function' && named({ value: 'b' })).toBe(false)
  })

  it('gives a schema that does not compile the same reason again without compiling it', () => {
    const compiler = new OutputSchemaCompiler()
    const bogus = { type: 'object', properties: { a: { type: 'bogus' } } }
    const reason = compiler.compile(bogus)
    expect(reason).toMatch(/^does not compile: /)
    expect(compiler.compile(structuredClone(bogus))).toBe(reason)
    expect(compiler.compiles).toBe(1)
  })

  it('never shares a validator between schemas whose JSON is the same but not the schema (1e999)', () => {
    // JSON.parse reads 1e999 as Infinity, which JSON.stringify writes as null: as keys, the two
    // schemas of each pair were one, and the tool listed second got the first one's validator
    // (or its refusal), checking another schema than its own.
    const compiler = new OutputSchemaCompiler()
    const listed = (bound: string) =>
      JSON.parse(`{"type":"object","properties":{"y":{"type":"number","maximum":${bound}}}}`)
    expect(compiler.compile(listed('null'))).toMatch(/^does not compile: .*maximum/)
    const infinite = compiler.compile(listed('1e999'))
    expect(typeof infinite).toBe('function')
    expect(typeof infinite === 'function' && infinite({ y: 5 })).toBe(true)
    const constant = (value: string) =>
      JSON.parse(`{"type":"object","properties":{"y":{"const":${value}}}}`)
    const isNull = compiler.compile(constant('null'))
    const isInfinite = compiler.compile(constant('-1e999'))
    expect(typeof isNull === 'function' && isNull({ y: null })).toBe(true)
    expect(typeof isInfinite === 'function' && isInfinite({ y: null })).toBe(false)
    expect(typeof isInfinite === 'function' && isInfinite({ y: -Infinity })).toBe(true)
    expect(compiler.compiles).toBe(4)
  })
})

describe('OutputChecks', () => {
  it('checks many short strings against a bounded pattern: the bound of each search is not summed', () => {
    // 2,000 ids of 38 characters against ^[a-zA-Z0-9_-]{1,64}$ (131 instructions): 1.02e7 steps
    // by the bound, ~1 ms in fact. Summing the bound (ccc2d5f) refused this honest result.
    const validator = new OutputSchemaCompiler().compile({
      type: 'object',
      properties: {
        ids: { type: 'array', items: { type: 'string', pattern: '^[a-zA-Z0-9_-]{1,64}$' } },
      },
    })
    if (typeof validator === 'string') throw new Error(validator)
    const checks = new OutputChecks()
    checks.add({ name: 't', inputSchema: { type: 'object' } }, validator)
    const ids = Array.from({ length: 2000 }, (_, k) => `id_${String(k).padStart(35, '0')}`)
    expect(() => checks.check('t', { content: [], structuredContent: { ids } })).not.toThrow()
    expect(() =>
      checks.check('t', { content: [], structuredContent: { ids: [...ids, 'no spaces allowed'] } }),
    ).toThrow(/must match pattern/)
  })

  it("counts the searches' own time against MAX_PATTERN_MS, not a loaded host's wait for a core", () => {
    // The wall clock as a starved process reads it: a second more at each reading. Counted whole,
    // three short searches passed the 500 ms and the honest result was refused.
    const validator = new OutputSchemaCompiler().compile({
      type: 'object',
      properties: { ids: { type: 'array', items: { type: 'string', pattern: '^[a-z_]+$' } } },
    })
    if (typeof validator === 'string') throw new Error(validator)
    const checks = new OutputChecks()
    checks.add({ name: 't', inputSchema: { type: 'object' } }, validator)
    const real = performance.now.bind(performance)
    let waited = 0
    const starved = vi.spyOn(performance, 'now').mockImplementation(() => {
      waited += 1000
      return real() + waited
    })
    try {
      const result = { content: [], structuredContent: { ids: ['id_a', 'id_b', 'id_c'] } }
      expect(() => checks.check('t', result)).not.toThrow()
    } finally {
      starved.mockRestore()
    }
  })
})
