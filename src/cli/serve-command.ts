/** `toolsel serve`: start the HTTP service. */
import type { Server } from 'node:http'
import { serve } from '@hono/node-server'
import { createComponents } from '../components.ts'
import { createMcpGateway } from '../mcp/gateway/mcp-gateway.ts'
import { readGatewayFile } from '../mcp/gateway/read-gateway-file.ts'
import { createApp } from '../server/app.ts'
import { ToolselService } from '../service/toolsel-service.ts'
import {
  COMMON_HELP,
  commandConfig,
  numberFlag,
  parseCommand,
  type CommandIO,
} from './cli-options.ts'

export const SERVE_HELP = `Usage: toolsel serve [--port <n>] [--host <addr>] [--library <name|file|dir>] [--index-dir <dir>]

Starts the HTTP service (POST /v1/select-tools, /v1/search-tools, /v1/libraries…, /openapi.json)
and the MCP endpoint at /mcp.
With no options it serves the embedded demo library on port 8080.

Options:
  --port <n>             TCP port (default 8080, env TOOLSEL_PORT)
  --host <addr>          Interface (default 0.0.0.0, env TOOLSEL_HOST)
  --library <ref>        Default library: a built index name, an index dir, a tool file or a directory
                         of tool files (default demo, env TOOLSEL_LIBRARY)
  --index-dir <dir>      Where built indexes live (default indexes, env TOOLSEL_INDEX_DIR)
  --planner <id>         Default planner: rule, none, llm:onnx:<dir>, llm:openai:<model>
                         (default rule, env TOOLSEL_PLANNER); models load before /readyz is ready
  --selector <id>        Default selector: top1, llm:onnx:<dir>, llm:openai:<model>
                         (default top1, env TOOLSEL_SELECTOR)
  --gateway-config <f>   Upstream MCP servers to aggregate (a "gateway" config section or an
                         {"mcpServers": …} client config file); see docs/mcp.md
${COMMON_HELP}`

const OPTIONS = {
  port: { type: 'string' },
  host: { type: 'string' },
  library: { type: 'string' },
  'index-dir': { type: 'string' },
  'gateway-config': { type: 'string' },
  planner: { type: 'string' },
  selector: { type: 'string' },
} as const

export async function serveCommand(argv: string[], io: CommandIO): Promise<number> {
  const { values } = parseCommand(argv, OPTIONS, 'serve')
  if (values.help) return (io.stdout(`${SERVE_HELP}\n`), 0)
  const { config, logger } = await commandConfig(
    values,
    {
      'server.port': numberFlag(values.port, 'port'),
      'server.host': values.host,
      'library.default': values.library,
      'library.indexDir': values['index-dir'],
      'plan.planner': values.planner,
      'select.selector': values.selector,
      gateway: values['gateway-config']
        ? await readGatewayFile(values['gateway-config'])
        : undefined,
    },
    io,
  )
  if (values['print-config']) return (io.stdout(`${JSON.stringify(config, null, 2)}\n`), 0)

  const service = new ToolselService(config, logger, createComponents(config, logger))
  const gateway = createMcpGateway(service)
  const app = createApp(service, { gateway })
  const server = serve({
    fetch: app.fetch,
    port: config.server.port,
    hostname: config.server.host,
  }) as Server
  await new Promise<void>((resolve, reject) => {
    server.once('listening', resolve)
    server.once('error', reject)
  })
  const address = server.address()
  const port = typeof address === 'object' && address ? address.port : config.server.port
  logger.info(`Listening on http://${config.server.host}:${port} (loading libraries…)`)
  try {
    await service.start()
    await gateway?.start()
  } catch (error) {
    // A library or model that can't load is fatal: stop listening so the process exits.
    server.closeAllConnections()
    await new Promise((resolve) => server.close(resolve))
    await gateway?.close()
    throw error
  }
  logger.info(
    `Ready: libraries ${service.libraries.names().join(', ')}; default "${service.defaultLibraryName}"`,
  )

  // Graceful shutdown: stop accepting, let in-flight requests finish within the grace period.
  await new Promise<void>((resolve) => {
    const shutdown = (signal: string) => {
      logger.info(`${signal} received: closing (grace ${config.server.shutdownGraceMs} ms)`)
      const force = setTimeout(() => {
        logger.warn('Grace period over: closing remaining connections')
        server.closeAllConnections()
      }, config.server.shutdownGraceMs)
      force.unref()
      server.closeIdleConnections()
      server.close(() => {
        clearTimeout(force)
        void Promise.resolve(gateway?.close()).finally(resolve)
      })
    }
    process.once('SIGTERM', () => shutdown('SIGTERM'))
    process.once('SIGINT', () => shutdown('SIGINT'))
  })
  logger.info('Stopped')
  return 0
}
