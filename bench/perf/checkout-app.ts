/**
 * A checkout's toolsel app with the checkout's own modules, so that two versions can be served
 * side by side (`bench/http-overhead.ts`, `bench/pipelined-flood.ts`).
 * @module
 */
import { resolve } from 'node:path'
import type { Hono } from 'hono'

/**
 * `root`'s (a checkout with `src/`) service on its default config as `configure` changes it
 * (logging at warn), started when `start`, and its app.
 */
export async function loadCheckoutApp(
  root: string,
  { configure, start = false }: { configure?: (config: any) => void; start?: boolean } = {},
): Promise<{ service: any; app: Hono }> {
  const source = resolve(root, 'src')
  const { defaultConfig } = await import(`${source}/config/schema.ts`)
  const { createComponents } = await import(`${source}/components.ts`)
  const { createLogger } = await import(`${source}/log.ts`)
  const { ToolselService } = await import(`${source}/service/toolsel-service.ts`)
  const { createApp } = await import(`${source}/server/app.ts`)
  const config = defaultConfig()
  configure?.(config)
  const logger = createLogger('warn')
  const service = new ToolselService(config, logger, createComponents(config, logger))
  if (start) await service.start()
  return { service, app: createApp(service) as Hono }
}
