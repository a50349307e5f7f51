/** Builds a started service over the sample tools for HTTP tests (no port: `app.request`). */
import { mkdtemp } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { createComponents, type Components } from '../../src/components.ts'
import { parseConfig, type ConfigLayer } from '../../src/config/load-config.ts'
import { ToolLibrary } from '../../src/library/tool-library.ts'
import { createMemoryLogger } from '../../src/log.ts'
import { createApp, type AppOptions } from '../../src/server/app.ts'
import { ToolselService } from '../../src/service/toolsel-service.ts'
import { buildIndexedLibrary } from '../../src/store/library-lifecycle.ts'
import { SAMPLE_TOOLS } from '../helpers/sample-tools.ts'

export async function createTestApp(
  options: {
    config?: ConfigLayer
    components?: Partial<Components>
    start?: boolean
    /** Options of `createApp` (a connection limit, …). */
    app?: AppOptions
  } = {},
) {
  const indexDir = await mkdtemp(join(tmpdir(), 'toolsel-server-'))
  // The caller's library settings kept (e.g. snapshotDir: was dropped, and snapshots landed in
  // the checkout's snapshots/), with the sample library and a fresh index directory.
  const config = parseConfig({
    ...options.config,
    library: { ...(options.config?.library as ConfigLayer), default: 'sample', indexDir },
  })
  const logger = createMemoryLogger()
  const components = { ...createComponents(config, logger), ...options.components }
  const service = new ToolselService(config, logger, components)
  if (options.start !== false) {
    await service.start([
      await buildIndexedLibrary(new ToolLibrary('sample', SAMPLE_TOOLS), config),
    ])
  }
  return { app: createApp(service, options.app), service, logger, indexDir }
}

export function postJson(body: unknown, init: RequestInit = {}): RequestInit {
  return {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: typeof body === 'string' ? body : JSON.stringify(body),
    ...init,
  }
}

/** The parsed JSON body (typed loosely: tests assert on its shape). */
export async function readJson(response: Response): Promise<any> {
  return response.json()
}
