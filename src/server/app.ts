/**
 * The hono app: cross-cutting middleware (body limit, readiness, request timeout), the route
 * groups, and error mapping. Route handlers only parse input, call the service and shape output.
 * @module
 */
import { Hono, type Context } from 'hono'
import { ToolselError } from '../errors.ts'
import type { McpGateway } from '../mcp/gateway/mcp-gateway.ts'
import { createMcpContext, type McpContext } from '../mcp/mcp-context.ts'
import { mcpRoutes } from '../mcp/mcp-routes.ts'
import type { ToolselService } from '../service/toolsel-service.ts'
import type { AppEnv } from './app-env.ts'
import { refuseOverLimit, type ConnectionLimit } from './connection-limits.ts'
import { createErrorHandler, errorResponse } from './error-response.ts'
import { cors } from 'hono/cors'
import { ApiKeys } from './auth/api-keys.ts'
import { authenticate, noRouteError, type AuthEnv } from './middleware/auth.ts'
import { bodyLimit } from './middleware/body-limit.ts'
import { effectiveAllowedHosts, hostCheck } from './middleware/host-check.ts'
import { requestTimeout, type TimeoutEnv } from './middleware/request-timeout.ts'
import { pipelinedOneAtATime } from './middleware/pipelined-requests.ts'
import { refuseTransferCodings } from './middleware/transfer-coding.ts'
import { createMetrics, type Metrics } from './metrics.ts'
import { clientAddresses, type ClientAddresses } from './client-address.ts'
import { limitRequestRate } from './rate-limit.ts'
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
import { createRequestSchemas, MAX_COMPLETIONS_TOTAL_CHARS } from './schemas.ts'

export const API_VERSION = '0.1.0'

export interface AppOptions {
  /** The MCP gateway, when upstream servers are configured (see `createMcpGateway`). */
  gateway?: McpGateway
  /**
   * The MCP context `/mcp` serves; whoever passes one closes it. Default: one made for this app
   * (when `mcp.http` is on), closed by the app's `close()`.
   */
  mcp?: McpContext
  /**
   * Metrics for `GET /metrics`; whoever passes them closes them. Default: a new registry for this
   * app, closed by the app's `close()`.
   */
  metrics?: Metrics
  /**
   * The per-address connection limit of the server serving the app (`toolsel serve`): a request
   * on a connection past it is answered 429 RATE_LIMITED before anything else but its request id
   * and access-log line (`refuseOverLimit`).
   */
  connectionLimit?: ConnectionLimit
  /**
   * Who sent a request (`server.trustedProxies`, `server.forwardedHeader`), for the request rate.
   * Made from the config when not given; `toolsel serve` gives the one its connection limit asks
   * whether a peer is a trusted proxy, so that both share one list and one memory of answers.
   */
  clientAddresses?: ClientAddresses
}

/** The hono app, and the `close()` that lets go of what `createApp` made for it. */
export type ToolselApp = Hono<AppEnv> & {
  /**
   * Closes what the app made for itself (not what `options` gave it): its MCP context (the
   * service's registry listener, cached views, tokenizer worker) and its metrics' subscription
   * to the service's selections, which would otherwise last as long as the service. Call it once
   * nothing serves through the app (`toolsel serve` does at shutdown); calling it again does
   * nothing. The service itself stays usable (other apps may share it).
   */
  close(): Promise<void>
}

export type { AppEnv } from './app-env.ts'

/** The body limit of the query routes (QUERY_ROUTES), as the MCP SDK's for `/mcp`: 4 MiB. */
export const MAX_QUERY_BODY_BYTES = 4 * 1024 * 1024
/** Routes whose bodies are queries, not uploads: they get MAX_QUERY_BODY_BYTES. */
const QUERY_ROUTES = [
  '/v1/select-tools',
  '/v1/search-tools',
  '/v1/feedback',
  '/v1/libraries/:library/tools/batch',
]
/**
 * The body limit of the reward routes: room for their largest valid batch, 4,000,000 characters
 * of completions (MAX_COMPLETIONS_TOTAL_CHARS) at up to 4 bytes each (UTF-8 takes at most 3 for
 * a character, 4 for a pair; JSON escapes `\n` and `\"` take 2), and 1 MiB for the instruction,
 * the gold tools and the options: 17 MB. A 30 MB body under `server.bodyLimitBytes` was read and
 * decoded before its values were counted (bench/README round 22).
 */
export const MAX_REWARD_BODY_BYTES = 4 * MAX_COMPLETIONS_TOTAL_CHARS + 1024 * 1024

export function createApp(service: ToolselService, options: AppOptions = {}): ToolselApp {
  const { server } = service.config
  const schemas = createRequestSchemas(service.config)
  const app = new Hono<AppEnv>()
  const metrics = options.metrics ?? createMetrics(service, options.gateway)
  const mcp = service.config.mcp.http
    ? (options.mcp ?? createMcpContext(service, { gateway: options.gateway }))
    : undefined
  let closed: Promise<void> | undefined
  const close = () =>
    (closed ??= (async () => {
      if (!options.metrics) metrics.close()
      if (!options.mcp) await mcp?.close()
    })())
  app.onError(createErrorHandler(service.logger))
  // Before all: a pipelined request waits for the answer before it on its connection to go out
  // (answers a client never read piled up: pipelined-requests.ts).
  app.use('*', pipelinedOneAtATime())
  // First: the request id, access log and HTTP metrics see every answer, errors included.
  app.use(
    '*',
    requestLog({
      logger: service.logger,
      level: service.config.log.access,
      onResponse: (observation) => metrics.observeRequest(observation),
    }),
  )
  if (options.connectionLimit) app.use('*', refuseOverLimit(options.connectionLimit))
  // Before anything reads a body: one sent with a transfer coding besides chunked is 501.
  app.use('*', refuseTransferCodings())
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
        exposeHeaders: [
          'x-request-id',
          'mcp-session-id',
          'www-authenticate',
          'retry-after',
          'ratelimit',
          'ratelimit-policy',
        ],
        maxAge: 600,
      }),
    )
  }
  app.use('*', authenticate(new ApiKeys(service.config.auth)))
  // After the key (a client is its key when keys are on), before any body is read.
  const rateLimit = limitRequestRate({
    readsPerMinute: server.readsPerMinute,
    writesPerMinute: server.writesPerMinute,
    clientAddresses:
      options.clientAddresses ?? clientAddresses(server.trustedProxies, server.forwardedHeader),
    onLimited: (routeClass) => metrics.observeRateLimited(routeClass),
  })
  if (rateLimit) app.use('*', rateLimit)
  app.notFound((c) => errorResponse(c, noRouteError(c.req.method, c.req.path)))

  app.route('/', healthRoutes(service, options.gateway, metrics))
  app.route('/', playgroundRoutes(service))
  // MCP (Streamable HTTP) sits outside /v1: its route reads the body with the SDK's bounded
  // reader and counts its values before parsing it; the transport answers protocol errors itself;
  // tool handlers apply server.requestTimeoutMs.
  if (mcp) app.route('/mcp', mcpRoutes(mcp))
  // Made on the first request, not at every start (about 0.1 s of zod-to-JSON-Schema work that a
  // server no one asks for the document would pay for nothing); the same document after.
  let openApi: ReturnType<typeof createOpenApiDocument> | undefined
  app.get('/openapi.json', (c) => c.json((openApi ??= createOpenApiDocument(schemas, API_VERSION))))

  // Before the body limits: a chunked body is read whole there (hono's streaming check), and a
  // query route's deadline must cover that reading too, as it covers a Content-Length body.
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
  // Each body is judged once, by the limit of its route. Query bodies are small (an
  // 8,000-character instruction, at most 1,000 ids), reward batches at most 4 M characters:
  // reading and decoding 30 MB for one held the event loop 100-200 ms before it was refused. A
  // route whose own limit is below server.bodyLimitBytes is judged by that limit alone (a chunked
  // body was read up to server.bodyLimitBytes, then again up to the route's limit); every other
  // /v1 request by server.bodyLimitBytes.
  const judged = new WeakSet<Context>()
  const routeLimits: Array<[string, number]> = [
    ...QUERY_ROUTES.map((path): [string, number] => [path, MAX_QUERY_BODY_BYTES]),
    ['/v1/rewards/*', MAX_REWARD_BODY_BYTES],
  ]
  // A body over `maxSize`: PAYLOAD_TOO_LARGE, `message` naming the limit that applies.
  const limitTo = (maxSize: number, message: (c: Context) => string) =>
    bodyLimit({
      maxSize,
      onError: (c) => errorResponse(c, new ToolselError('PAYLOAD_TOO_LARGE', message(c))),
    })
  for (const [path, maxSize] of routeLimits) {
    if (maxSize >= server.bodyLimitBytes) continue
    const routeLimit = limitTo(
      maxSize,
      (c) =>
        `The request body is larger than the ${maxSize}-byte limit of ${c.req.path} (library uploads and examples take up to server.bodyLimitBytes).`,
    )
    app.use(path, (c, next) => {
      judged.add(c)
      return routeLimit(c, next)
    })
  }
  const serverLimit = limitTo(
    server.bodyLimitBytes,
    () =>
      `The request body is larger than the ${server.bodyLimitBytes}-byte limit (server.bodyLimitBytes).`,
  )
  app.use('/v1/*', (c, next) => (judged.has(c) ? next() : serverLimit(c, next)))
  app.use('/v1/*', async (c, next) => {
    if (!service.ready)
      throw new ToolselError(
        'NOT_READY',
        'The service is still loading its libraries; retry shortly.',
      )
    await next()
  })
  app.route('/v1', selectRoutes(service, schemas))
  app.route('/v1/libraries', libraryRoutes(service, schemas))
  app.route('/v1/rewards', rewardRoutes(service, schemas))
  app.route('/v1/components', componentsRoutes(service))
  app.route('/v1/snapshots', snapshotRoutes(service))
  return Object.assign(app, { close })
}
