/**
 * A server of a checkout's built `dist/` in this process, over the sample tools (the side of a
 * `--before` comparison: runTurnBench in lib/measure.ts). Imported when a side runs, after
 * the flags are parsed.
 * @module
 */
import { writeFile } from 'node:fs/promises'
import { join } from 'node:path'
import { pathToFileURL } from 'node:url'

/**
 * `root`'s dist/ service over `indexDir`, its default library the sample tools (written there as
 * sample.json), `server` settings added; listening on port 0 once started.
 */
export async function serveSampleFromDist(
  root: string,
  indexDir: string,
  server: Record<string, unknown> = {},
): Promise<{ url: string; close(): Promise<void> }> {
  const dist = (path: string) => import(pathToFileURL(join(root, 'dist', path)).href)
  const { parseConfig } = await dist('config/load-config.js')
  const { createMemoryLogger } = await dist('log.js')
  const { createComponents } = await dist('components.js')
  const { ToolselService } = await dist('service/toolsel-service.js')
  const { createApp } = await dist('server/app.js')
  const { listenApp } = await import('../../test/helpers/listen-app.ts')
  const { SAMPLE_TOOLS } = await import('../../test/helpers/sample-tools.ts')
  const toolFile = join(indexDir, 'sample.json')
  await writeFile(toolFile, JSON.stringify(SAMPLE_TOOLS))
  const config = parseConfig({ library: { default: toolFile, indexDir }, server })
  const logger = createMemoryLogger()
  const service = new ToolselService(config, logger, createComponents(config, logger))
  await service.start()
  return listenApp(createApp(service).fetch)
}
