/** Liveness and readiness probes. */
import { Hono } from 'hono'
import type { McpGateway } from '../../mcp/gateway/mcp-gateway.ts'
import type { ToolselService } from '../../service/toolsel-service.ts'

/**
 * `/readyz` stays 200 while some gateway upstreams are down: the others and every library keep
 * working. `upstreams` reports each one's status so monitoring can alert on it.
 */
export function healthRoutes(service: ToolselService, gateway?: McpGateway) {
  return new Hono()
    .get('/healthz', (c) => c.json({ status: 'ok' }))
    .get('/readyz', (c) =>
      service.ready
        ? c.json({
            status: 'ready',
            libraries: service.libraries.names(),
            ...(gateway ? { upstreams: gateway.servers() } : {}),
          })
        : c.json(
            {
              error: { code: 'NOT_READY', message: 'The service is still loading its libraries.' },
            },
            503,
          ),
    )
}
