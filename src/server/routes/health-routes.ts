/** Liveness and readiness probes. */
import { Hono } from 'hono'
import type { ToolselService } from '../../service/toolsel-service.ts'

export function healthRoutes(service: ToolselService) {
  return new Hono()
    .get('/healthz', (c) => c.json({ status: 'ok' }))
    .get('/readyz', (c) =>
      service.ready
        ? c.json({ status: 'ready', libraries: service.libraries.names() })
        : c.json(
            {
              error: { code: 'NOT_READY', message: 'The service is still loading its libraries.' },
            },
            503,
          ),
    )
}
