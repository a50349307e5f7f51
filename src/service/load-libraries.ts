/**
 * Start-up loading: the default library (a built index, a tool file or directory, or the embedded
 * demo) and, optionally, every other index in the index directory. Each is loaded or imported by
 * the library lifecycle (`store/library-lifecycle.ts`).
 * @module
 */
import { join } from 'node:path'
import type { Config } from '../config/schema.ts'
import type { Logger } from '../log.ts'
import { hostDir, withoutHostPaths } from './host-paths.ts'
import {
  DEMO_LIBRARY_NAME,
  listIndexes,
  loadIndexedLibrary,
  loadLibraryReference,
  readManifest,
  recoverIndexDir,
  type IndexedLibrary,
} from '../store/library-lifecycle.ts'
import { errorMessage } from '../errors.ts'

/** A saved index skipped at start-up, and why. */
export interface FailedIndex {
  name: string
  error: string
}

/**
 * Loads the default library (failure is fatal; then `onDefaultLoaded`) and every other index
 * (failures are logged and passed to `onSkipped`, for `/readyz`). `asSavedDemo`: a saved demo
 * loads as saved, not checked against the demo's files (another worker did).
 */
export async function loadStartupLibraries(
  config: Config,
  logger: Logger,
  onSkipped?: (failed: FailedIndex) => void,
  options: { asSavedDemo?: boolean; onDefaultLoaded?: () => void } = {},
): Promise<IndexedLibrary[]> {
  // Listing (or, loading no other, recovering) the index directory first: it undoes a restore
  // killed between its renames, which may have renamed in the default library's index too.
  const names = config.library.loadAll
    ? await listIndexes(config.library.indexDir)
    : await recoverIndexDir(config.library.indexDir).then(() => [])
  const loaded = [
    await loadLibraryReference(config.library.default, config, logger, {
      asSavedDemo: options.asSavedDemo,
    }),
  ]
  options.onDefaultLoaded?.()
  for (const name of names) {
    if (loaded.some((indexed) => indexed.library.name === name)) continue
    try {
      // The saved demo, when it is not the default, is checked against the demo's files as the
      // default is (rebuilt when they or the code that indexes them changed): until round 45
      // (qa16) it loaded as saved, however stale, or failed to load (built by another tokenizer).
      loaded.push(
        name === DEMO_LIBRARY_NAME
          ? await loadLibraryReference(name, config, logger, { asSavedDemo: options.asSavedDemo })
          : await loadIndexedLibrary(join(config.library.indexDir, name), config, { logger }),
      )
    } catch (error) {
      logger.error(`Skipped index "${name}": ${(error as Error).message}`)
      onSkipped?.(await failedIndex(name, error, config.library.indexDir))
    }
  }
  return loaded
}

/**
 * Library `name` of `indexDir` failed to load with `error`: what `/readyz` failedIndexes shows of
 * it. The message is written for the log and the CLI, which keep it whole; HTTP answers get it
 * without this host's paths: the tool file the index was built from (its manifest's
 * `source.path`, which rebuild hints name) becomes `<file>`, the library's directory
 * `<library.indexDir>/<name>`.
 */
export async function failedIndex(
  name: string,
  error: unknown,
  indexDir: string,
): Promise<FailedIndex> {
  const dir = join(indexDir, name)
  const source = (await readManifest(dir).catch(() => undefined))?.source.path
  const paths = [
    ...hostDir(dir, `<library.indexDir>/${name}`),
    ...(source !== undefined ? [[source, '<file>'] as const] : []),
  ]
  const message = errorMessage(error)
  return { name, error: withoutHostPaths(message, paths) }
}
