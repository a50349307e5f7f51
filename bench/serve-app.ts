/**
 * The HTTP app over a service of a configuration layer, on a real port (port 0), as `toolsel
 * serve` runs it, for the benchmarks that send it requests (bench/adversarial.ts,
 * bench/restart-first-call.ts). Logs are silent.
 * @module
 */
import { createComponents } from '../src/components.ts'
import { parseConfig, type ConfigLayer } from '../src/config/load-config.ts'
import { createMemoryLogger } from '../src/log.ts'
import { createApp } from '../src/server/app.ts'
import { ToolselService } from '../src/service/toolsel-service.ts'
import { listenApp } from '../test/helpers/listen-app.ts'

export interface ServedApp {
  url: string
  close(): Promise<void>
}

export async function serveApp(layer: ConfigLayer): Promise<ServedApp> {
  const config = parseConfig({ ...layer, log: { level: 'silent' } })
  const logger = createMemoryLogger()
  const service = new ToolselService(config, logger, createComponents(config, logger))
  await service.start()
  const app = createApp(service)
  const server = await listenApp(app.fetch)
  return {
    url: server.url,
    async close() {
      await server.close()
      await app.close()
    },
  }
}
