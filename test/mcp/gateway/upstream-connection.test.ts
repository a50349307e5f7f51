import { readdir, readFile } from 'node:fs/promises'
import { fileURLToPath } from 'node:url'
import { describe, expect, it } from 'vitest'
import type { GatewayConfig } from '../../../src/config/schema.ts'
import {
  MAX_UPSTREAM_ERROR_CHARS,
  RELIST_GAP_FACTOR,
  type UpstreamConnection,
} from '../../../src/mcp/gateway/upstream-connection.ts'
import {
  MAX_UPSTREAM_DESCRIPTION_CHARS,
  MAX_UPSTREAM_SCHEMA_CHARS,
} from '../../../src/mcp/gateway/upstream-tools.ts'
import type { UpstreamState } from '../../../src/mcp/gateway/upstream-state.ts'
import { MAX_PATTERN_SEARCH_WORK } from '../../../src/mcp/gateway/upstream-output-schemas.ts'
import { createMemoryLogger } from '../../../src/log.ts'
import { useUpstreamConnections } from '../../helpers/upstream-connections.ts'

const NOTES_FIXTURE = fileURLToPath(new URL('../fixtures/notes-upstream.ts', import.meta.url))
const NODE_FIXTURE = fileURLToPath(new URL('../fixtures/node-upstream.mjs', import.meta.url))
/** gateway.relistGapMs in the re-list tests (its default, RELIST_GAP_MS, is 1 s). */
const TEST_RELIST_GAP_MS = 250

const upstreamConnection = useUpstreamConnections()

/** Server `under_test` of a gateway section with `gateway`'s settings. */
function connection(upstream: Record<string, unknown>, gateway: Partial<GatewayConfig>) {
  return upstreamConnection('under_test', { servers: { under_test: upstream }, ...gateway })
}

/** The notes fixture as a stdio server with `env` (its delays), its start-up bounded by 120 s. */
function notesEnv(env: Record<string, string>, gateway: Partial<GatewayConfig>) {
  return connection(
    { command: process.execPath, args: ['--import', 'tsx', NOTES_FIXTURE], env },
    { spawnTimeoutMs: 120_000, ...gateway },
  )
}

/**
 * The node fixture (node-upstream.mjs) as stdio server `name` with `env`, its start-up bounded
 * by 120 s, logging to `logger` and calling `onTools` after each listing.
 */
function nodeUpstream(
  name: string,
  env: Record<string, string>,
  logger = createMemoryLogger(),
  onTools: () => void = () => undefined,
  gateway: Partial<GatewayConfig> = {},
) {
  return upstreamConnection(
    name,
    {
      servers: { [name]: { command: process.execPath, args: [NODE_FIXTURE], env } },
      spawnTimeoutMs: 120_000,
      ...gateway,
    },
    { logger, onTools },
  )
}

/** The ids of the running processes whose command line holds `marker` (Linux /proc). */
async function processesWith(marker: string): Promise<number[]> {
  const found: number[] = []
  for (const entry of await readdir('/proc')) {
    if (!/^\d+$/.test(entry)) continue
    const commandLine = await readFile(`/proc/${entry}/cmdline`, 'utf8').catch(() => '')
    if (commandLine.includes(marker)) found.push(Number(entry))
  }
  return found
}

/**
 * Polls the state until `check` holds. `timeoutMs` is only a safety net for a hang; the error
 * says what was seen instead.
 */
async function until(
  upstream: UpstreamConnection,
  check: (state: UpstreamState) => boolean,
  timeoutMs = 30_000,
): Promise<UpstreamState> {
  const deadline = Date.now() + timeoutMs
  for (;;) {
    const state = upstream.state()
    if (check(state)) return state
    if (Date.now() > deadline)
      throw new Error(`not seen in ${timeoutMs} ms: ${JSON.stringify(state)}`)
    await new Promise((resolve) => setTimeout(resolve, 10))
  }
}

describe('UpstreamConnection with real stdio processes', () => {
  it('gives a stdio server slower to start than connectTimeoutMs the whole spawnTimeoutMs', async () => {
    // The process reads stdin only 1 s after it starts; the handshake itself is instant. Under
    // connectTimeoutMs (500 ms) alone the start-up would time out every time: a timer never
    // ends early, so twice the bound is margin enough (4 s and 2 s until round 44: 3 s waited
    // for nothing).
    const notes = notesEnv({ NOTES_START_DELAY_MS: '1000' }, { connectTimeoutMs: 500 })
    await notes.connect()
    expect(notes.state()).toMatchObject({
      status: 'connected',
      toolCount: 5,
      lastError: null,
      attempt: 0,
      downSince: null,
    })
  }, 150_000)

  it('lists a server whose tools/list is slower than connectTimeoutMs within listTimeoutMs', async () => {
    // Starts at once, answers each of its 3 tools/list pages after 600 ms (1.5 s against 500 ms
    // until round 44). With connectTimeoutMs (300 ms) bounding the pages, as before
    // listTimeoutMs, it was down after every attempt.
    const notes = notesEnv(
      { NOTES_LIST_DELAY_MS: '600' },
      { connectTimeoutMs: 300, listTimeoutMs: 60_000 },
    )
    await notes.connect()
    expect(notes.state()).toMatchObject({ status: 'connected', toolCount: 5, lastError: null })
  }, 150_000)

  it('bounds each tools/list page by listTimeoutMs, and names it when one times out', async () => {
    const notes = notesEnv(
      { NOTES_LIST_DELAY_MS: '5000' },
      {
        connectTimeoutMs: 60_000,
        listTimeoutMs: 300,
        reconnectInitialMs: 600_000,
        reconnectMaxMs: 600_000,
      },
    )
    await notes.connect()
    const down = notes.state()
    expect(down).toMatchObject({ status: 'down', attempt: 1, toolCount: 0 })
    expect(down.lastError).toMatch(
      /a tools\/list page did not answer within 300 ms \(gateway\.listTimeoutMs\)/,
    )
  }, 150_000)

  it('marks a server listing more than maxToolsPerServer tools down, naming it, and takes none', async () => {
    // The notes fixture lists 5 tools in 3 pages: the page that passes 3 stops the listing.
    const notes = notesEnv(
      {},
      { maxToolsPerServer: 3, reconnectInitialMs: 600_000, reconnectMaxMs: 600_000 },
    )
    await notes.connect()
    const down = notes.state()
    expect(down).toMatchObject({ status: 'down', attempt: 1, toolCount: 0, lastSyncAt: null })
    expect(down.lastError).toBe(
      'tools/list listed more than 3 tools (gateway.maxToolsPerServer); none of them were taken',
    )
    expect(notes.tools).toEqual([])
  }, 150_000)

  it('skips tools whose names hold control or bidi characters or pass 128 characters, logging them escaped', async () => {
    // On e8dbfac all were taken as ids (an ESC sequence, U+202E, a line break, 10,000 "n"s), and
    // logged raw; the schema 100,000 deep was skipped as "Maximum call stack size exceeded".
    const logger = createMemoryLogger()
    const names = nodeUpstream('names', { UPSTREAM_HOSTILE_NAMES: '1' }, logger)
    await names.connect()
    expect(names.tools.map((tool) => tool.id)).toEqual([
      `names.${'x'.repeat(128)}`,
      'names.tool_0',
      'names.tool_1',
      'names.tool_2',
    ])
    const skipped = logger.lines.filter((line) => line.includes('skipped tool'))
    expect(skipped.map((line) => line.slice(line.indexOf('Upstream')))).toEqual([
      'Upstream "names": skipped tool #0 ("deep"): its inputSchema is nested too deep to read (at most 64 levels are taken)',
      'Upstream "names": skipped tool #1 ("red\\u001b[31m_bell\\u0007"): its name holds U+001B (a control or invisible formatting character) at 3',
      'Upstream "names": skipped tool #2 ("rtl\\u202etxt.exe"): its name holds U+202E (a control or invisible formatting character) at 3',
      'Upstream "names": skipped tool #3 ("zero\\u200bwidth"): its name holds U+200B (a control or invisible formatting character) at 4',
      'Upstream "names": skipped tool #4 ("line\\nbreak"): its name holds U+000A (a control or invisible formatting character) at 4',
      `Upstream "names": skipped tool #5 ("${'n'.repeat(64)}"…): its name is 10,000 characters long, over 128`,
    ])
  }, 150_000)

  it('skips one tool whose outputSchema, inputSchema or _meta is hostile, naming the field, and serves the others', async () => {
    // On a156677 the whole listing failed (the server down, none of its tools served): the SDK's
    // listTools compiled every outputSchema (RangeError at 1,000 levels, "type must be JSONType"
    // for "bogus") and parsed the page as a whole (no inputSchema, a property that is no schema).
    const logger = createMemoryLogger()
    const schemas = nodeUpstream('schemas', { UPSTREAM_HOSTILE_SCHEMAS: '1' }, logger)
    await schemas.connect()
    expect(schemas.state()).toMatchObject({ status: 'connected', toolCount: 4, lastError: null })
    expect(schemas.tools.map((tool) => tool.id)).toEqual([
      'schemas.deep_annotations',
      'schemas.tool_0',
      'schemas.tool_1',
      'schemas.tool_2',
    ])
    // Annotations are kept whole (list-all-tools.test.ts), but one MCP does not define nested
    // 20,000 deep is dropped (the SDK's parse: its five hints only), the tool served.
    expect(schemas.tools[0].source?.annotations).toEqual({ readOnlyHint: true })
    const skipped = logger.lines.filter((line) => line.includes('skipped tool'))
    expect(skipped.map((line) => line.slice(line.indexOf('Upstream')))).toEqual([
      'Upstream "schemas": skipped tool #0 ("deep_output"): its outputSchema is nested too deep to read',
      'Upstream "schemas": skipped tool #1 ("deepish_output"): its outputSchema is nested too deep to compile',
      'Upstream "schemas": skipped tool #2 ("bogus_output"): its outputSchema does not compile: "type must be JSONType or JSONType[]: bogus"',
      'Upstream "schemas": skipped tool #3 ("no_input"): its inputSchema is not valid: Invalid input: expected object, received undefined',
      'Upstream "schemas": skipped tool #4 ("not_a_property"): its inputSchema.properties.rtl\\u202e is not valid: Invalid input',
      'Upstream "schemas": skipped tool #5 ("deep_meta"): its _meta is nested too deep to read',
    ])
  }, 150_000)

  it("checks a call's structuredContent against the outputSchema of a tool on any page", async () => {
    // Each tool has an outputSchema and the fixture answers calls without structuredContent. On
    // a156677 only the last page's tools were checked (the SDK's cache is cleared at each page):
    // tool_0's call, on page 1 of 3, went through.
    const paged = nodeUpstream('paged', {
      UPSTREAM_TOOLS: '3',
      UPSTREAM_PAGE_SIZE: '1',
      UPSTREAM_OUTPUT_SCHEMA_CHARS: '10',
    })
    await paged.connect()
    expect(paged.tools.map((tool) => tool.name)).toEqual(['tool_0', 'tool_1', 'tool_2'])
    for (const name of ['tool_0', 'tool_2']) {
      await expect(paged.callTool(name, {})).rejects.toThrow(
        /has an output schema but did not return structured content/,
      )
    }
  }, 150_000)

  it("checks a result against its outputSchema's pattern in linear time (RE2, no backtracking)", async () => {
    // ^(a+)+$ against 40 a's and a "!": JavaScript's RegExp backtracks 2^40 times, so on
    // a156677 the call's check held the event loop (the whole server) for hours (24 a's: 0.2 s,
    // x4 for every 2 more). Ajv now runs the schemas' patterns on re2js.
    const hostile = nodeUpstream('redos', {
      UPSTREAM_TOOLS: '2',
      UPSTREAM_OUTPUT_PATTERN: '^(a+)+$',
      UPSTREAM_OUTPUT_VALUE: `${'a'.repeat(40)}!`,
    })
    await hostile.connect()
    expect(hostile.tools.map((tool) => tool.name)).toEqual(['tool_0', 'tool_1'])
    await expect(hostile.callTool('tool_0', {})).rejects.toThrow(/must match pattern/)
    // A value the pattern matches goes through, and a JavaScript \\u escape means what it says.
    const fine = nodeUpstream('fine', {
      UPSTREAM_TOOLS: '1',
      UPSTREAM_OUTPUT_PATTERN: '^\\u00e9(a+)+$',
      UPSTREAM_OUTPUT_VALUE: `\u00e9${'a'.repeat(40)}`,
    })
    await fine.connect()
    await expect(fine.callTool('tool_0', {})).resolves.toMatchObject({
      structuredContent: { value: `\u00e9${'a'.repeat(40)}` },
    })
  }, 150_000)

  it('refuses a result whose pattern checks would hold the event loop, before running them', async () => {
    // RE2 is linear, not small: \w{999}\d is ~1,000 instructions, each run over each character
    // of a string it does not match, so 20,000 x's cost 2e7 steps (857 ms at load 8, the whole
    // server held meanwhile), and 600 strings of 1,000 against \w{9xx} in one result held it
    // 13.5 s (hard38, round 43). Now a search whose bound passes MAX_PATTERN_SEARCH_WORK is not run: refused.
    const heavy = nodeUpstream('heavy', {
      UPSTREAM_TOOLS: '1',
      UPSTREAM_OUTPUT_PATTERN: '\\w{999}\\d',
      UPSTREAM_OUTPUT_VALUE: 'x'.repeat(20_000),
    })
    await heavy.connect()
    expect(MAX_PATTERN_SEARCH_WORK).toBeLessThan(20_000 * 1000)
    await expect(heavy.callTool('tool_0', {})).rejects.toThrow(
      /Tool tool_0's structured content was not checked against its output schema: its patterns would take too long over its strings \(a search of more than 10,000,000 steps/,
    )
    expect(heavy.state()).toMatchObject({ status: 'connected' })
    // Within the bound (5,000 characters: at most 5e6 steps) the result is checked and goes through.
    const light = nodeUpstream('light', {
      UPSTREAM_TOOLS: '1',
      UPSTREAM_OUTPUT_PATTERN: '\\w{999}',
      UPSTREAM_OUTPUT_VALUE: 'x'.repeat(5000),
    })
    await light.connect()
    await expect(light.callTool('tool_0', {})).resolves.toMatchObject({
      structuredContent: { value: 'x'.repeat(5000) },
    })
  }, 150_000)

  it("checks each tool's results against its own outputSchema, whatever $id they share", async () => {
    // tool_0 (listed first) and tool_1 name the same $id; tool_0's takes any value, tool_1's
    // only a's. Before round 42 the SDK's Ajv looked the $id up before compiling: tool_1's
    // results were checked against tool_0's schema, and "b" went through.
    const shared = nodeUpstream('shared', {
      UPSTREAM_TOOLS: '2',
      UPSTREAM_OUTPUT_PATTERN: '^a+$',
      UPSTREAM_OUTPUT_ID: 'https://example.com/result.json',
      UPSTREAM_OUTPUT_VALUE: 'b',
    })
    await shared.connect()
    expect(shared.tools.map((tool) => tool.name)).toEqual(['tool_0', 'tool_1'])
    await expect(shared.callTool('tool_0', {})).resolves.toMatchObject({
      structuredContent: { value: 'b' },
    })
    await expect(shared.callTool('tool_1', {})).rejects.toThrow(
      /Structured content does not match the tool's output schema: data\/value must match pattern/,
    )
  }, 150_000)

  it('refuses a call to a tool that requires task-based execution, as the SDK did', async () => {
    const tasks = nodeUpstream('tasks', { UPSTREAM_TOOLS: '1', UPSTREAM_TASK_REQUIRED: '1' })
    await tasks.connect()
    // Said in words an agent behind call_tool can act on, not the SDK's method to use instead.
    const refusal = await tasks.callTool('tool_0', {}).catch((error: Error) => error.message)
    expect(refusal).toMatch(
      /Tool "tool_0" requires task-based execution \(its server lists execution\.taskSupport "required"\), which call_tool does not offer/,
    )
    expect(refusal).not.toContain('callToolStream')
    expect(tasks.state()).toMatchObject({ status: 'connected' })
  }, 150_000)

  it('skips a tool whose outputSchema has a pattern RE2 cannot run, naming it', async () => {
    const logger = createMemoryLogger()
    const lookahead = nodeUpstream(
      'lookahead',
      { UPSTREAM_TOOLS: '1', UPSTREAM_OUTPUT_PATTERN: '^(?=a)a+$' },
      logger,
    )
    await lookahead.connect()
    expect(lookahead.tools).toEqual([])
    expect(logger.lines.join('\n')).toMatch(
      /skipped tool #0 \("tool_0"\): its outputSchema does not compile: .*unsupported Perl syntax/,
    )
  }, 150_000)

  it("keeps and logs a server's 4 MiB error cut at MAX_UPSTREAM_ERROR_CHARS", async () => {
    // Before: kept whole in lastError (list_servers, /readyz) and logged as one 5 MB line.
    const logger = createMemoryLogger()
    const big = nodeUpstream(
      'big',
      { UPSTREAM_INIT_ERROR: JSON.stringify('failed!\n'), UPSTREAM_INIT_ERROR_REPEAT: '524288' },
      logger,
    )
    await big.connect().catch(() => undefined)
    const { lastError } = await until(big, (state) => state.status === 'down')
    expect(lastError).toMatch(/^MCP error -32603: failed!\nfailed!\n/)
    expect(lastError!.length).toBeLessThan(MAX_UPSTREAM_ERROR_CHARS + 40)
    expect(lastError).toMatch(/… \(4,192,\d{3} more characters\)$/)
    const down = logger.lines.filter((line) => line.includes('"big" is down'))
    expect(down).toHaveLength(1)
    expect(down[0].length).toBeLessThan(MAX_UPSTREAM_ERROR_CHARS * 2)
  })

  it('takes a tool description of 1 MiB cut at MAX_UPSTREAM_DESCRIPTION_CHARS, naming it', async () => {
    // Before: kept whole, indexed and served (100 such tools held 100 MB).
    const logger = createMemoryLogger()
    const long = nodeUpstream(
      'long',
      { UPSTREAM_TOOLS: '3', UPSTREAM_DESCRIPTION_CHARS: String(2 ** 20) },
      logger,
    )
    await long.connect()
    expect(long.tools.map((tool) => tool.description.length)).toEqual(
      Array(3).fill(MAX_UPSTREAM_DESCRIPTION_CHARS + 1),
    )
    expect(long.tools[0].description).toMatch(/^Fixture tool number 0 ledger record text .*…$/)
    expect(logger.lines.filter((line) => line.includes('its description is'))).toEqual([
      expect.stringContaining(
        'Upstream "long": tool #0 ("tool_0"): its description is 1,048,576 characters long: cut at 16,384',
      ),
      expect.stringContaining('tool #1 ("tool_1")'),
      expect.stringContaining('tool #2 ("tool_2")'),
    ])
  })

  // inputSchema before f604b5d: kept whole (descriptions were cut, schemas not: a hostile
  // server's bulk moved there); outputSchema before hard29: kept whole in the tool's source (only
  // inputSchema was capped).
  it.each([
    ['inputSchema', 'UPSTREAM_SCHEMA_CHARS'],
    ['outputSchema', 'UPSTREAM_OUTPUT_SCHEMA_CHARS'],
  ])(
    'drops a tool whose %s passes MAX_UPSTREAM_SCHEMA_CHARS as its page arrives, naming it',
    async (field, knob) => {
      const logger = createMemoryLogger()
      const wide = nodeUpstream('wide', { UPSTREAM_TOOLS: '3', [knob]: String(2 ** 20) }, logger)
      await wide.connect()
      expect(wide.state()).toMatchObject({ status: 'connected', toolCount: 0 })
      expect(wide.tools).toEqual([])
      const skipped = logger.lines.filter((line) => line.includes(`its ${field} is`))
      expect(skipped).toHaveLength(3)
      expect(skipped[0]).toContain(
        `Upstream "wide": skipped tool #0 ("tool_0"): its ${field} is 1,048,6`,
      )
      expect(skipped[0]).toContain(
        `characters long, over ${MAX_UPSTREAM_SCHEMA_CHARS.toLocaleString('en-US')}`,
      )
    },
  )

  it('marks a server whose listing passes maxListChars down, naming it, and takes none', async () => {
    // 2 tools of ~10,200 characters a page: the 7th tool, on the 4th page, passes 65,536.
    // Before: all 50 taken (each page was bounded by maxMessageBytes alone).
    const big = nodeUpstream(
      'big',
      { UPSTREAM_TOOLS: '50', UPSTREAM_PAGE_SIZE: '2', UPSTREAM_SCHEMA_CHARS: '10000' },
      undefined,
      undefined,
      { maxListChars: 65_536, reconnectInitialMs: 600_000, reconnectMaxMs: 600_000 },
    )
    await big.connect()
    const down = big.state()
    expect(down).toMatchObject({ status: 'down', attempt: 1, toolCount: 0, lastSyncAt: null })
    expect(down.lastError).toBe(
      'tools/list sent more than 65,536 characters of tools (gateway.maxListChars): 4 pages (6 tools) read; none of them were taken',
    )
    expect(big.tools).toEqual([])
  })

  it('keeps serving the earlier tools when a re-list passes maxListChars', async () => {
    // 3 tools of ~10,200 characters fit in 65,536; the re-list's 50 do not.
    const logger = createMemoryLogger()
    const grown = nodeUpstream(
      'grown',
      { UPSTREAM_TOOLS: '3', UPSTREAM_RELIST_TOOLS: '50', UPSTREAM_SCHEMA_CHARS: '10000' },
      logger,
      undefined,
      { maxListChars: 65_536, reconnectInitialMs: 600_000, reconnectMaxMs: 600_000 },
    )
    await grown.connect()
    expect(grown.tools.map((tool) => tool.name)).toEqual(['tool_0', 'tool_1', 'tool_2'])
    await grown.sync()
    const state = grown.state()
    expect(state).toMatchObject({ status: 'down', toolCount: 3 })
    expect(state.lastError).toMatch(
      /^tools\/list sent more than 65,536 characters of tools \(gateway\.maxListChars\): 1 page \(6 tools\) read; none of them were taken$/,
    )
    expect(grown.tools.map((tool) => tool.name)).toEqual(['tool_0', 'tool_1', 'tool_2'])
    expect(logger.lines.join('\n')).toContain('gateway.maxListChars')
  })

  it('re-lists a server sending list_changed in a loop at most once per relistGapMs', async () => {
    // 20 notifications every 50 ms after its first listing, for good. On e8dbfac each listing
    // was followed at once by the next (at 20 every ms: 3,733 listings in 4 s). 400 a second, not
    // 4,000 (round 43): at load 24 the gateway read 4,000 a second slower than they came, the
    // fixture blocked on its full pipe, and its answer to a tools/list page came after
    // listTimeoutMs (10 s): no listing for minutes.
    // Each listing's end and its own time (lastLatencyMs: at most the time the gap is made of),
    // as the connection saw them: the gap is checked between every two, not counted in a window
    // of wall time (a loaded host stretched the listings and the gaps with them, round 42).
    const listings: Array<{ endedAt: number; latencyMs: number }> = []
    // A gap of TEST_RELIST_GAP_MS (the default 1 s made this test's 3 gaps 3 s): notifications
    // every 50 ms still ask for a re-list several times a gap.
    const flood = nodeUpstream(
      'flood',
      { UPSTREAM_LIST_CHANGED_MS: '50' },
      undefined,
      () => {
        listings.push({ endedAt: performance.now(), latencyMs: flood.state().lastLatencyMs ?? 0 })
      },
      { relistGapMs: TEST_RELIST_GAP_MS },
    )
    await flood.connect()
    expect(flood.state()).toMatchObject({ toolCount: 3 })
    // The connect's listing and three re-lists (since round 42 the first waits for the gap after
    // the connect's listing too); the bound is only a safety net for a hang.
    await until(flood, () => listings.length >= 4, 120_000).catch((error: Error) => {
      throw new Error(`${error.message}; listings seen: ${JSON.stringify(listings)}`)
    })
    for (let index = 1; index < listings.length; index += 1) {
      const [last, next] = [listings[index - 1]!, listings[index]!]
      // The next listing starts a gap after the last one's end, relistGapMs or RELIST_GAP_FACTOR
      // times its time (lastLatencyMs is rounded: 0.5 ms less), and takes its own time.
      const gapMs = Math.max(TEST_RELIST_GAP_MS, RELIST_GAP_FACTOR * (last.latencyMs - 0.5))
      expect(
        next.endedAt - last.endedAt,
        `listing ${index} after ${index - 1}: ${JSON.stringify(listings)}`,
      ).toBeGreaterThanOrEqual(gapMs + next.latencyMs - 0.5)
    }
  }, 150_000)

  it("holds a list_changed sent during the connect's listing until the gap after it", async () => {
    // 3 pages; list_changed from the first page's answer on, 400 a second (4,000 until round 43:
    // at load 24 a page's answer waited behind them past listTimeoutMs). Before round 42 the
    // first notification started a re-list at once, beside the connect's listing (two listings
    // compiling at once), and it ended a page after that one.
    const ended: number[] = []
    const logger = createMemoryLogger()
    const storm = nodeUpstream(
      'storm',
      { UPSTREAM_TOOLS: '3000', UPSTREAM_PAGE_SIZE: '1000', UPSTREAM_LIST_CHANGED_MS: '50' },
      logger,
      () => ended.push(performance.now()),
      { relistGapMs: TEST_RELIST_GAP_MS },
    )
    await storm.connect()
    const listingMs = storm.state().lastLatencyMs ?? 0
    expect(storm.state()).toMatchObject({ toolCount: 3000 })
    while (ended.length < 2) await new Promise((resolve) => setTimeout(resolve, 50))
    expect(
      ended[1] - ended[0],
      `${JSON.stringify(storm.state())}\n${logger.lines.join('\n')}`,
    ).toBeGreaterThanOrEqual(Math.max(TEST_RELIST_GAP_MS, RELIST_GAP_FACTOR * listingMs))
  }, 150_000)

  it('bounds the start-up by spawnTimeoutMs, and reports each reconnect attempt while it runs', async () => {
    // A process that never answers: every attempt runs its full spawnTimeoutMs.
    const marker = `toolsel-silent-upstream-${process.pid}-${Date.now()}`
    const silent = connection(
      { command: process.execPath, args: ['-e', 'setInterval(() => {}, 1000)', marker] },
      { spawnTimeoutMs: 600, reconnectInitialMs: 200, reconnectMaxMs: 400 },
    )
    await silent.connect()
    const down = silent.state()
    expect(down).toMatchObject({ status: 'down', attempt: 1, transport: 'stdio' })
    expect(down.lastError).toMatch(
      /^the process did not start and answer initialize within 600 ms \(gateway\.spawnTimeoutMs\)/,
    )
    expect(down.nextRetryAt).not.toBeNull()
    expect(down.downSince).not.toBeNull()

    // The retry runs: reconnecting, which attempt, no next retry planned yet, same outage.
    const retrying = await until(silent, (state) => state.status === 'reconnecting')
    expect(retrying).toMatchObject({ attempt: 1, nextRetryAt: null, downSince: down.downSince })
    const call = await silent.callTool('list_notes', {}).catch((error: unknown) => error)
    expect(call).toMatchObject({ code: 'UPSTREAM_UNAVAILABLE' })
    expect((call as Error).message).toMatch(
      /^Upstream server "under_test" is down \(for \d+ s; last error: the process did not start.*\)\. Reconnect attempt 1 is running\. Its tools stay searchable/,
    )

    // It fails too: down again, the next attempt numbered and planned.
    const again = await until(silent, (state) => state.status === 'down' && state.attempt === 2)
    expect(again.nextRetryAt).not.toBeNull()
    expect(again.downSince).toBe(down.downSince)
    expect((await until(silent, (state) => state.status === 'reconnecting')).attempt).toBe(2)

    // close() ends every process it started, the attempt still connecting too, before it
    // resolves (the test runner's worker exited first and left them running before round 21).
    await silent.close()
    expect(await processesWith(marker)).toEqual([])
  }, 60_000)
})
