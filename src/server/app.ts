/**
 * The hono app: cross-cutting middleware (body limit, readiness, request timeout), the route
 * groups, and error mapping. Route handlers only parse input, call the service and shape output.
 * @module
 */
import { Hono } from 'hono'
import { ToolselError } from '../errors.ts'
import type { McpGateway } from '../mcp/gateway/mcp-gateway.ts'
import { createMcpContext, type McpContext } from '../mcp/mcp-context.ts'
import { mcpRoutes } from '../mcp/mcp-routes.ts'
import type { ToolselService } from '../service/toolsel-service.ts'
import type { AppEnv } from './app-env.ts'
import { createErrorHandler, errorResponse } from './error-response.ts'
import { cors } from 'hono/cors'
import { ApiKeys } from './auth/api-keys.ts'
import { authenticate, type AuthEnv } from './middleware/auth.ts'
import { bodyLimit } from './middleware/body-limit.ts'
import { effectiveAllowedHosts, hostCheck } from './middleware/host-check.ts'
import { requestTimeout, type TimeoutEnv } from './middleware/request-timeout.ts'
import { createMetrics, type Metrics } from './metrics.ts'
import { rejectDotSegments } from './middleware/raw-path.ts'
import { requestLog } from './middleware/request-log.ts'
import { createOpenApiDocument } from './openapi.ts'
import { componentsRoutes } from './routes/components-routes.ts'
import { healthRoutes } from './routes/health-routes.ts'
import { playgroundRoutes } from './routes/playground-routes.ts'
import { libraryRoutes } from './routes/library-routes.ts'
import { rewardRoutes } from './routes/reward-routes.ts'
import { selectRoutes } from './routes/select-routes.ts'
import { snapshotRoutes } from './routes/snapshot-routes.ts'
import { createRequestSchemas } from './schemas.ts'

export const API_VERSION = '0.1.0'

export interface AppOptions {
  /** The MCP gateway, when upstream servers are configured (see `createMcpGateway`). */
  gateway?: McpGateway
  /**
   * The MCP context `/mcp` serves; its owner closes it (`toolsel serve` at shutdown). Default: one
   * made for this app, which follows the service's library changes for as long as the service
   * lives; pass one (and close it) when several apps share a service.
   */
  mcp?: McpContext
  /** Metrics for `GET /metrics`; default: a new registry for this app. */
  metrics?: Metrics
}

export type { AppEnv } from './app-env.ts'

export function createApp(service: ToolselService, options: AppOptions = {}): Hono<AppEnv> {
  const { server } = service.config
  const schemas = createRequestSchemas(service.config)
  const app = new Hono<AppEnv>()
  const metrics = options.metrics ?? createMetrics(service, options.gateway)
  app.onError(createErrorHandler(service.logger))
  // First: the request id, access log and HTTP metrics see every answer, errors included.
  app.use(
    '*',
    requestLog({
      logger: service.logger,
      level: service.config.log.access,
      onResponse: (observation) => metrics.observeRequest(observation),
    }),
  )
  app.use('*', rejectDotSegments())
  // Before any route: Host/Origin checks, CORS (answers preflights), then API keys.
  app.use(
    '*',
    hostCheck({
      allowedHosts: effectiveAllowedHosts(server.allowedHosts, server.host),
      corsOrigins: server.corsOrigins,
    }),
  )
  if (server.corsOrigins.length > 0) {
    app.use(
      '*',
      cors({
        origin: server.corsOrigins.includes('*') ? '*' : [...server.corsOrigins],
        allowMethods: ['GET', 'HEAD', 'POST', 'PUT', 'DELETE', 'OPTIONS'],
        allowHeaders: [
          'authorization',
          'content-type',
          'x-request-id',
          'mcp-protocol-version',
          'mcp-session-id',
          'last-event-id',
        ],
        exposeHeaders: ['x-request-id', 'mcp-session-id', 'www-authenticate'],
        maxAge: 600,
      }),
    )
  }
  app.use('*', authenticate(new ApiKeys(service.config.auth)))
  app.notFound((c) =>
    errorResponse(
      c,
      new ToolselError(
        'NOT_FOUND',
        `No route for ${c.req.method} ${c.req.path}. See /openapi.json.`,
      ),
    ),
  )

  app.route('/', healthRoutes(service, options.gateway, metrics))
  app.route('/', playgroundRoutes(service))
  // MCP (Streamable HTTP) sits outside /v1: the SDK transport enforces its own body limit and
  // answers protocol errors itself; tool handlers apply server.requestTimeoutMs.
  if (service.config.mcp.http) {
    app.route(
      '/mcp',
      mcpRoutes(options.mcp ?? createMcpContext(service, { gateway: options.gateway })),
    )
  }
  const openApi = createOpenApiDocument(schemas, API_VERSION)
  app.get('/openapi.json', (c) => c.json(openApi))

  app.use(
    '/v1/*',
    bodyLimit({
      maxSize: server.bodyLimitBytes,
      onError: (c) =>
        errorResponse(
          c,
          new ToolselError(
            'PAYLOAD_TOO_LARGE',
            `The request body is larger than the ${server.bodyLimitBytes}-byte limit (server.bodyLimitBytes).`,
          ),
        ),
    }),
  )
  app.use('/v1/*', async (c, next) => {
    if (!service.ready)
      throw new ToolselError(
        'NOT_READY',
        'The service is still loading its libraries; retry shortly.',
      )
    await next()
  })
  app.use(
    '/v1/*',
    requestTimeout({
      timeoutMs: server.requestTimeoutMs,
      // Library writes rebuild the index: uploads, and usage examples (which re-index BM25).
      timeoutFor: (method, path) =>
        (method === 'PUT' && path.startsWith('/v1/libraries/')) ||
        (method === 'POST' &&
          (path.endsWith('/examples') || path === '/v1/feedback' || path === '/v1/snapshots'))
          ? server.buildTimeoutMs
          : undefined,
    }),
  )
  app.route('/v1', selectRoutes(service, schemas))
  app.route('/v1/libraries', libraryRoutes(service, schemas))
  app.route('/v1/rewards', rewardRoutes(service, schemas))
  app.route('/v1/components', componentsRoutes(service))
  app.route('/v1/snapshots', snapshotRoutes(service))
  return app
}
