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

/** A flag whose value is a credential: `--api-key`, `--token`, `--header`, `--password`… */
const SECRET_FLAG = /key|token|secret|passw|auth|cred|header|bearer|cookie/i

/**
 * Where the upstream is, for `list_servers` and `/readyz` (which needs no key): never headers or
 * env, and no credential a URL or command line carries. A URL loses its user info, and its query
 * and fragment show as `?***`; in a command line the value of a flag that names a credential
 * (`--api-key sk-…`, `--token=…`, `--header "Authorization: Bearer …"`) and any argument holding
 * `Bearer ` show as `***`.
 */
export function upstreamTarget(config: UpstreamConfig): string {
  if ('url' in config) {
    try {
      const url = new URL(config.url)
      return `${url.origin}${url.pathname}${url.search || url.hash ? '?***' : ''}`
    } catch {
      return '***'
    }
  }
  const shown: string[] = []
  let hideNext = false
  for (const arg of config.args) {
    const flag = /^(--?[^=\s]+)(=.*)?$/s.exec(arg)
    if (hideNext && flag === null) shown.push('***')
    else if (flag !== null && SECRET_FLAG.test(flag[1]))
      shown.push(flag[2] === undefined ? arg : `${flag[1]}=***`)
    else shown.push(/bearer\s/i.test(arg) ? '***' : arg)
    hideNext = flag !== null && flag[2] === undefined && SECRET_FLAG.test(flag[1])
  }
  return [config.command, ...shown].join(' ')
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
