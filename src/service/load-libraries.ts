/**
 * Start-up loading: the default library (a built index, a tool file or directory, or the embedded
 * demo) and, optionally, every other index in the index directory.
 * @module
 */
import { basename, extname, join, resolve } from 'node:path'
import { fileURLToPath } from 'node:url'
import type { Config } from '../config/schema.ts'
import { ToolselError } from '../errors.ts'
import { importToolsFromPath } from '../library/importers/index.ts'
import { ToolLibrary } from '../library/tool-library.ts'
import type { Logger } from '../log.ts'
import { buildIndexedLibrary } from '../store/build-index.ts'
import type { IndexedLibrary } from '../store/indexed-library.ts'
import { isIndexDir, listIndexes, loadIndexedLibrary } from '../store/index-store.ts'
import { pathExists } from '../store/path-exists.ts'

/** The demo library that ships with toolsel: one MCP `tools/list` file per server. */
export const DEMO_LIBRARY_DIR = fileURLToPath(new URL('../library/demo/servers', import.meta.url))
export const DEMO_LIBRARY_NAME = 'demo'

/**
 * Resolves a library reference: an index name under `indexDir`, an index directory, a tool file
 * or directory of tool files, or `demo`.
 */
export async function loadLibraryReference(
  reference: string,
  config: Config,
  logger: Logger,
): Promise<IndexedLibrary> {
  const named = join(config.library.indexDir, reference)
  if (!reference.includes('/') && (await isIndexDir(named)))
    return loadIndexedLibrary(named, config, { logger })
  if (await isIndexDir(reference)) return loadIndexedLibrary(reference, config, { logger })
  if (reference === DEMO_LIBRARY_NAME)
    return importAndBuild(DEMO_LIBRARY_DIR, DEMO_LIBRARY_NAME, config, logger)
  if (await pathExists(reference))
    return importAndBuild(reference, libraryNameFromPath(reference), config, logger)
  throw new ToolselError(
    'UNKNOWN_LIBRARY',
    `Library "${reference}" not found: it is not an index in ${config.library.indexDir}/, an index directory, or a tool file. Build it with: toolsel index <file> --name ${reference}.`,
    { details: { library: reference } },
  )
}

async function importAndBuild(
  path: string,
  name: string,
  config: Config,
  logger: Logger,
): Promise<IndexedLibrary> {
  const started = performance.now()
  const imported = await importToolsFromPath(path)
  for (const warning of imported.warnings) logger.warn(warning, { library: name })
  const library = new ToolLibrary(name, imported.tools)
  const indexed = await buildIndexedLibrary(library, config, {
    source: { path: resolve(path), format: imported.format },
    logger,
  })
  logger.info(`Indexed library "${name}" from ${path}`, {
    tools: library.size,
    format: imported.format,
    ms: Math.round(performance.now() - started),
  })
  return indexed
}

/** `tools/my-tools.json` → `my-tools`; characters not allowed in library names become `-`. */
export function libraryNameFromPath(path: string): string {
  const stem = basename(path, extname(path))
    .replace(/[^a-zA-Z0-9._-]/g, '-')
    .replace(/^[^a-zA-Z0-9]+/, '')
  return stem.slice(0, 64) || 'library'
}

/** A saved index skipped at start-up, and why. */
export interface FailedIndex {
  name: string
  error: string
}

/**
 * Loads the default library (failure is fatal) and every other index (failures are logged and
 * passed to `onSkipped`, for `/readyz`).
 */
export async function loadStartupLibraries(
  config: Config,
  logger: Logger,
  onSkipped?: (failed: FailedIndex) => void,
): Promise<IndexedLibrary[]> {
  const loaded = [await loadLibraryReference(config.library.default, config, logger)]
  if (!config.library.loadAll) return loaded
  for (const name of await listIndexes(config.library.indexDir)) {
    if (loaded.some((indexed) => indexed.library.name === name)) continue
    try {
      loaded.push(await loadIndexedLibrary(join(config.library.indexDir, name), config, { logger }))
    } catch (error) {
      logger.error(`Skipped index "${name}": ${(error as Error).message}`)
      onSkipped?.({ name, error: (error as Error).message })
    }
  }
  return loaded
}
