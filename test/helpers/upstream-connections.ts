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
 * given, and `onTools` after each listing; every connection made is closed after its test.
 */
export function useUpstreamConnections(): MakeUpstream {
  const open: UpstreamConnection[] = []
  afterEach(async () => {
    await Promise.all(open.splice(0).map((connection) => connection.close()))
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
