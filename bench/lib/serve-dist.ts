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
 * sample.json), `server` settings added; listening on port 0 once started. `moreTools` (some):
 * the sample tools and those, built and saved as index `sample` first, so that the service
 * serves them loaded from that index (a file-backed library, as a server restarted over its
 * saved libraries holds them).
 */
export async function serveSampleFromDist(
  root: string,
  indexDir: string,
  server: Record<string, unknown> = {},
  moreTools: readonly object[] = [],
): Promise<{ url: string; close(): Promise<void> }> {
  const dist = (path: string) => import(pathToFileURL(join(root, 'dist', path)).href)
  const { parseConfig } = await dist('config/load-config.js')
  const { createMemoryLogger } = await dist('log.js')
  const { createComponents } = await dist('components.js')
  const { ToolselService } = await dist('service/toolsel-service.js')
  const { createApp } = await dist('server/app.js')
  const { listenApp } = await import('../../test/helpers/listen-app.ts')
  const { SAMPLE_TOOLS } = await import('../../test/helpers/sample-tools.ts')
  let reference = join(indexDir, 'sample.json')
  if (moreTools.length > 0) {
    const { ToolLibrary } = await dist('library/tool-library.js')
    const { buildIndexedLibrary, saveIndexedLibrary } = await dist('store/library-lifecycle.js')
    const tools = [...SAMPLE_TOOLS, ...moreTools]
    const built = await buildIndexedLibrary(
      new ToolLibrary('sample', tools),
      parseConfig({ library: { indexDir } }),
    )
    await saveIndexedLibrary(indexDir, built)
    reference = 'sample'
  } else await writeFile(reference, JSON.stringify(SAMPLE_TOOLS))
  const config = parseConfig({ library: { default: reference, indexDir }, server })
  const logger = createMemoryLogger()
  const service = new ToolselService(config, logger, createComponents(config, logger))
  await service.start()
  return listenApp(createApp(service).fetch)
}
