/** Liveness and readiness probes, and the Prometheus metrics. */
import { Hono } from 'hono'
import type { z } from 'zod'
import type { McpGateway } from '../../mcp/gateway/mcp-gateway.ts'
import type { ToolselService } from '../../service/toolsel-service.ts'
import type { Metrics } from '../metrics.ts'
import type { RESPONSE_SCHEMAS } from '../schemas.ts'

/**
 * `/readyz` is 503 until the libraries and models are loaded and the gateway (when configured)
 * has synced its upstreams once. Then it is 200, also while some upstreams are down or some saved
 * indexes failed to load (the rest keeps working): `upstreams` reports each server's status and
 * `failedIndexes` each skipped index with its error, so monitoring can alert on them.
 */
export function healthRoutes(service: ToolselService, gateway?: McpGateway, metrics?: Metrics) {
  const routes = new Hono()
    .get('/healthz', (c) => c.json({ status: 'ok' }))
    .get('/readyz', (c) => {
      const report = {
        libraries: service.libraries.names(),
        failedIndexes: service.failedIndexes,
        ...(gateway ? { upstreams: gateway.servers() } : {}),
      }
      if (service.ready && (gateway?.synced ?? true)) {
        const ready = { status: 'ready' as const, ...report }
        return c.json(ready satisfies z.infer<typeof RESPONSE_SCHEMAS.readyz>)
      }
      const waitingFor = service.ready
        ? 'the gateway is still syncing its upstream servers'
        : 'the service is still loading its libraries'
      const starting = {
        error: { code: 'NOT_READY' as const, message: `Not ready: ${waitingFor}.` },
        status: 'starting' as const,
        ...report,
      }
      return c.json(starting satisfies z.infer<typeof RESPONSE_SCHEMAS.readyzStarting>, 503)
    })
  if (metrics) {
    routes.get('/metrics', async (c) => {
      const { text, contentType } = await metrics.scrape()
      return c.body(text, 200, { 'content-type': contentType })
    })
  }
  return routes
}
