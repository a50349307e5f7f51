/**
 * Start-up loading: the default library (a built index, a tool file or directory, or the embedded
 * demo) and, optionally, every other index in the index directory. Each is loaded or imported by
 * the library lifecycle (`store/library-lifecycle.ts`).
 * @module
 */
import { join } from 'node:path'
import type { Config } from '../config/schema.ts'
import type { Logger } from '../log.ts'
import {
  listIndexes,
  loadIndexedLibrary,
  loadLibraryReference,
  type IndexedLibrary,
} from '../store/library-lifecycle.ts'

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
