/**
 * Log forging (round 39's attacker pass): the text log format wrote a message as it came, so a
 * line break in an upstream's error text (or in a request's path, which hono decodes: `%0A` is a
 * newline) wrote a line of its own that read as the server's (`<time> ERROR …`). Every line
 * break in a text-format message now starts an indented continuation, and the controls, format
 * characters (bidi, zero-width) and line separators are written as escapes.
 */
import { fileURLToPath } from 'node:url'
import { describe, expect, it } from 'vitest'
import { createLogger, createMemoryLogger } from '../src/log.ts'
import { useUpstreamConnections } from './helpers/upstream-connections.ts'

const NODE_FIXTURE = fileURLToPath(new URL('./mcp/fixtures/node-upstream.mjs', import.meta.url))

/** What a log line a client or upstream forged would start with. */
const FORGED = '2026-12-06T00:00:00.000Z ERROR admin key rejected'
/** Raw controls, format characters (bidi, zero-width), separators, lone surrogates. */
const RAW = /[\u0000-\u0008\u000b-\u001f\u007f-\u009f\p{Cf}\u2028\u2029\p{Cs}]/u
/** An event's first line: its time and level. */
const EVENT_START = /^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z (DEBUG|INFO|WARN|ERROR) /

const upstreamConnection = useUpstreamConnections()

/** Every line of what `logger` wrote: each starts an event or is an indented continuation. */
function expectNoForgedLine(lines: string[]): void {
  for (const event of lines) {
    const [first, ...rest] = event.split('\n')
    expect(first).toMatch(EVENT_START)
    for (const line of rest) expect(line).toMatch(/^ {2}/)
    expect(event).not.toMatch(RAW)
  }
}

describe('text-format log lines carry no forged line and no raw control', () => {
  it("an upstream's error, logged as it goes down: one event, its line break indented", async () => {
    const logger = createMemoryLogger()
    const upstream = upstreamConnection(
      'forger',
      {
        servers: {
          forger: {
            command: process.execPath,
            args: [NODE_FIXTURE],
            env: {
              UPSTREAM_INIT_ERROR: JSON.stringify(`no\n${FORGED}\u001b[2J\u202e\u200b\u2028.`),
            },
          },
        },
        spawnTimeoutMs: 120_000,
      },
      { logger },
    )
    await upstream.connect().catch(() => undefined)
    await expect
      .poll(() => logger.lines.filter((line) => line.includes('is down')).length, {
        timeout: 30_000,
      })
      .toBe(1)
    const down = logger.lines.find((line) => line.includes('is down'))!
    expect(down).toContain(`no\n  ${FORGED}\\x1b[2J\\u202e\\u200b\\u2028.`)
    expectNoForgedLine(logger.lines)
  })

  it("an upstream's error text and a stack: continuation lines, indented", () => {
    const lines: string[] = []
    const logger = createLogger('debug', (line) => lines.push(line))
    const error = new Error(`boom\r\n${FORGED}\u2029${FORGED}\u0085${FORGED}`)
    logger.error(`MCP tool t failed: ${error.stack}`)
    logger.warn(`Gateway first sync failed: x\n${FORGED}`, { upstream: `u\n${FORGED}` })
    expect(lines).toHaveLength(2)
    expectNoForgedLine(lines)
    expect(lines[0]).toMatch(/\n {6}at /)
    expect(lines[1]).toContain(`x\n  ${FORGED} {"upstream":"u\\n${FORGED}"}`)
  })
})
