/** `toolsel mcp --stdio`: serve the MCP tools over stdio for desktop clients. */
import { createComponents } from '../components.ts'
import { ToolselError } from '../errors.ts'
import { createMcpGateway } from '../mcp/gateway/create-mcp-gateway.ts'
import { gatewayConfigLayers, noUpstreamsWarning } from '../mcp/gateway/read-gateway-file.ts'
import { createMcpContext } from '../mcp/mcp-context.ts'
import { runStdioServer } from '../mcp/run-stdio-server.ts'
import { parseList } from '../mcp/tool-scope.ts'
import { ToolselService } from '../service/toolsel-service.ts'
import {
  commandConfig,
  maxFileBytesFlag,
  parseCommand,
  type CommandIO,
  printConfig,
} from './cli-options.ts'
import { HELP as MCP_HELP, OPTIONS } from './mcp-help.ts'

export { HELP as MCP_HELP, OPTIONS } from './mcp-help.ts'

export async function mcpCommand(argv: string[], io: CommandIO): Promise<number> {
  const { values } = parseCommand(argv, OPTIONS, 'mcp')
  if (values.help) return (io.stdout(`${MCP_HELP}\n`), 0)
  const gatewayFile = values['gateway-config']
  const { config, logger } = await commandConfig(
    values,
    {
      'library.default': values.library,
      'library.indexDir': values['index-dir'],
      'library.maxFileBytes': maxFileBytesFlag(values['max-file-bytes']),
      'mcp.servers': parseList(values.servers),
      'mcp.tags': parseList(values.tags),
    },
    io,
    await gatewayConfigLayers(gatewayFile),
  )
  const noUpstreams = gatewayFile && noUpstreamsWarning(gatewayFile, config.gateway)
  if (noUpstreams) logger.warn(noUpstreams)
  if (values['print-config']) return printConfig(config, io)
  if (!values.stdio) {
    throw new ToolselError(
      'INVALID_INPUT',
      'toolsel mcp serves over stdio only: add --stdio. For MCP over HTTP, run "toolsel serve" and connect to http://<host>:<port>/mcp.',
    )
  }

  const service = new ToolselService(config, logger, createComponents(config, logger))
  await service.start()
  const gateway = await createMcpGateway(service)
  // The first sync goes on behind the server: MCP clients give initialize 10-60 s, and one slow
  // or hung upstream holds the sync up to gateway.firstSyncTimeoutMs (120 s). The tools list
  // is toolsel's own tools, the same before and after it; searches over the gateway library
  // wait for it a little, then answer over what is listed so far with a `syncing` note.
  await gateway?.open()
  const syncing = gateway
    ?.start()
    .catch((error: unknown) =>
      logger.error(`Gateway first sync failed: ${(error as Error).message}`),
    )
  const context = createMcpContext(service, {
    gateway,
    // An explicit --library wins over the gateway library as the default.
    defaultLibrary: values.library ? service.defaultLibraryName : undefined,
  })
  // The whole stop fits server.shutdownGraceMs, as `toolsel serve`'s does: upstreams still
  // running at its end (deaf to their stdin's end and to SIGTERM) are SIGKILLed, not given the
  // SDK's 2 s + 2 s.
  let deadline: number | undefined
  try {
    deadline = await runStdioServer(context, { scope: context.scope })
  } finally {
    await context.close()
    await gateway?.close(deadline ?? Date.now() + config.server.shutdownGraceMs)
    await syncing
  }
  return 0
}
