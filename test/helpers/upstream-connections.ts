/**
 * UpstreamConnections made from a `gateway` config section, as the gateway makes them, for the
 * tests of one server at a time; each is closed after its test.
 */
import { afterEach } from 'vitest'
import { parseConfig } from '../../src/config/load-config.ts'
import type { UpstreamConfig } from '../../src/config/schema.ts'
import { createMemoryLogger, type Logger } from '../../src/log.ts'
import { UpstreamConnection } from '../../src/mcp/gateway/upstream-connection.ts'

export type MakeUpstream = (
  name: string,
  gateway: Record<string, unknown>,
  options?: { logger?: Logger; onTools?: () => void },
) => UpstreamConnection

/**
 * For a test file: a function making server `name` of `gateway` (the config's `gateway`
 * section, its `servers` included) with the section's settings, a memory logger unless one is
 * given, and `onTools` after each listing; every connection made is closed (and its processes
 * killed) after its test.
 */
export function useUpstreamConnections(): MakeUpstream {
  const open: UpstreamConnection[] = []
  // Closed, then SIGKILLed at once: the SDK's close gives a process that keeps running after
  // its stdin ends (a flooding or stalled fixture) 2 s, and one that ignores SIGTERM 2 s more,
  // paid after each test (round 48: ~20 s of test/mcp/gateway/upstream-bounds.test.ts). How a
  // close ends processes is tested where a test calls close() itself.
  afterEach(async () => {
    await Promise.all(
      open.splice(0).map((connection) => {
        const closed = connection.close()
        connection.kill()
        return closed
      }),
    )
  })
  return (name, gateway, options = {}) => {
    const config = parseConfig({ gateway })
    const made = new UpstreamConnection(name, config.gateway.servers[name] as UpstreamConfig, {
      settings: config.gateway,
      logger: options.logger ?? createMemoryLogger(),
      onTools: options.onTools ?? (() => undefined),
    })
    open.push(made)
    return made
  }
}
