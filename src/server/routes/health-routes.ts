/** Liveness and readiness probes, and the Prometheus metrics. */
import { Hono } from 'hono'
import type { z } from 'zod'
import { ToolselError } from '../../errors.ts'
import type { McpGateway } from '../../mcp/gateway/mcp-gateway.ts'
import { serversInScope } from '../../mcp/tools/list-servers-tool.ts'
import type { ToolselService } from '../../service/toolsel-service.ts'
import { canUseLibrary, isLimited, PUBLIC_PRINCIPAL, type Principal } from '../auth/api-keys.ts'
import { principalOf } from '../middleware/auth.ts'
import type { Metrics } from '../metrics.ts'
import type { READINESS_REPORT, RESPONSE_SCHEMAS } from '../schemas.ts'

/**
 * `/readyz` is 503 until the libraries and models are loaded and the gateway (when configured)
 * has synced its upstreams once. Then it is 200, also while some upstreams are down, some saved
 * indexes failed to load or a model endpoint fails (the rest keeps working, fallbacks answer for
 * the model): `upstreams` reports each server's status, `failedIndexes` each skipped index with
 * its error and `degraded` each planner or selector that fell back (service/model-health.ts), so
 * monitoring can alert on them.
 *
 * With API keys configured the report is the caller's key's: a caller without a valid key gets
 * the status only (the errors hold the index directory's path, upstream targets are internal
 * URLs and command lines; nor the 503 message the gateway's counts), a key limited to some
 * libraries, servers or tags what it may use: `upstreams`, `firstSync` and the counts in the
 * message cover only the servers it may see. `degraded` shows its messages to the admin key alone
 * (and to every caller when no key is configured): one quotes the model's or its endpoint's answer
 * to another caller's request, whatever its library; a read key, limited or not, gets the
 * entries with `DEGRADED_MESSAGE_HIDDEN`. `/metrics` labels every library and upstream server:
 * it needs a key limited to none; its labels carry no request text (route templates, configured
 * names, error codes).
 */
export function healthRoutes(service: ToolselService, gateway?: McpGateway, metrics?: Metrics) {
  const routes = new Hono()
    .get('/healthz', (c) => c.json({ status: 'ok' }))
    .get('/readyz', (c) => {
      const principal = principalOf(c)
      const report = readinessReport(service, gateway, principal)
      if (service.ready && (gateway?.synced ?? true)) {
        const ready = { status: 'ready' as const, ...report }
        return c.json(ready satisfies z.infer<typeof RESPONSE_SCHEMAS.readyz>)
      }
      // The counts are the report's: a caller that is not shown firstSync is not told them.
      const progress =
        report.firstSync && gateway ? ` (${gateway.firstSyncProgress(principal)})` : ''
      const waitingFor = service.ready
        ? `the gateway is still syncing its upstream servers${progress}`
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
      const principal = principalOf(c)
      if (isLimited(principal)) {
        throw new ToolselError(
          'FORBIDDEN',
          `/metrics labels every library and upstream server; the API key "${principal.name}" is limited to some of them. Use a read key without libraries, servers or tags, or the admin key.`,
        )
      }
      const { text, contentType } = await metrics.scrape()
      return c.body(text, 200, { 'content-type': contentType })
    })
  }
  return routes
}

/**
 * The `message` of a `degraded` entry that `/readyz` shows a read key: the planners and
 * selectors serve every caller, and a failure's message may quote the model's answer
 * (PLAN_UNPARSABLE) or its endpoint's (a 4xx body that echoes the prompt), i.e. another caller's
 * instruction. Before round 40 a read key limited to none saw it: no other route shows one
 * caller's request to another.
 */
export const DEGRADED_MESSAGE_HIDDEN =
  "Shown to the admin key only: it may quote another caller's request. See the log, or use the admin key."

/** What `/readyz` reports to `principal` (see `healthRoutes`). */
function readinessReport(
  service: ToolselService,
  gateway: McpGateway | undefined,
  principal: Principal,
): z.infer<typeof READINESS_REPORT> {
  if (principal === PUBLIC_PRINCIPAL) return {}
  const usable = (name: string) => canUseLibrary(principal, name)
  const degraded = service.modelHealth
    .degraded()
    .map((entry) =>
      principal.role === 'read' ? { ...entry, message: DEGRADED_MESSAGE_HIDDEN } : entry,
    )
  return {
    libraries: service.libraries.names().filter(usable),
    failedIndexes: service.reportedFailedIndexes.filter((failed) => usable(failed.name)),
    ...(degraded.length > 0 ? { degraded } : {}),
    ...(gateway && usable(gateway.libraryName)
      ? {
          upstreams: serversInScope(gateway.servers(), principal),
          firstSync: gateway.firstSyncCounts(principal),
        }
      : {}),
  }
}
