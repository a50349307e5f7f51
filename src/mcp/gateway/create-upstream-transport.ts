/**
 * The SDK client transport for one configured upstream: a spawned process over stdio, or
 * Streamable HTTP. The only gateway file that knows the two kinds apart.
 * @module
 */
import { StdioClientTransport } from '@modelcontextprotocol/sdk/client/stdio.js'
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js'
import type { Transport } from '@modelcontextprotocol/sdk/shared/transport.js'
import type { UpstreamConfig } from '../../config/schema.ts'

export type UpstreamKind = 'stdio' | 'http'

export function upstreamKind(config: UpstreamConfig): UpstreamKind {
  return 'url' in config ? 'http' : 'stdio'
}

/** Where the upstream is, for status and messages; never includes headers or env (secrets). */
export function upstreamTarget(config: UpstreamConfig): string {
  if ('url' in config) return config.url
  return [config.command, ...config.args].join(' ')
}

/**
 * `onStderr` receives the process's stderr lines (stdio only): they go to our log instead of
 * our stderr, where in stdio mode they would mix with toolsel's own log.
 */
export function createUpstreamTransport(
  config: UpstreamConfig,
  onStderr: (line: string) => void,
): Transport {
  if ('url' in config) {
    return new StreamableHTTPClientTransport(new URL(config.url), {
      requestInit: { headers: config.headers },
      // Our own backoff reconnects the whole client; the SDK's SSE retries would only add noise.
      reconnectionOptions: {
        maxReconnectionDelay: 30_000,
        initialReconnectionDelay: 1_000,
        reconnectionDelayGrowFactor: 2,
        maxRetries: 2,
      },
    })
  }
  const transport = new StdioClientTransport({
    command: config.command,
    args: config.args,
    env: config.env,
    cwd: config.cwd,
    stderr: 'pipe',
  })
  let pending = ''
  transport.stderr?.on('data', (chunk: Buffer) => {
    pending += chunk.toString('utf8')
    const lines = pending.split('\n')
    pending = lines.pop() ?? ''
    for (const line of lines) if (line.trim()) onStderr(line)
  })
  return transport
}
