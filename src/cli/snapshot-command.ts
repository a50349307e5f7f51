/** `toolsel snapshot <dir>` and `toolsel snapshot restore <dir>`: back up and restore indexes. */
import { isToolselError, ToolselError } from '../errors.ts'
import { pathExists } from '../store/path-exists.ts'
import { loadSavedIndexes, restoreSnapshot, writeSnapshot } from '../store/snapshot.ts'
import { terminalLine } from '../terminal-text.ts'
import { commandConfig, parseCommand, printConfig, type CommandIO } from './cli-options.ts'
import { HELP as SNAPSHOT_HELP, OPTIONS } from './snapshot-help.ts'

export { HELP as SNAPSHOT_HELP, OPTIONS } from './snapshot-help.ts'

export async function snapshotCommand(argv: string[], io: CommandIO): Promise<number> {
  const { values, positionals } = parseCommand(argv, OPTIONS, 'snapshot')
  if (values.help) return (io.stdout(`${SNAPSHOT_HELP}\n`), 0)
  const restore = positionals[0] === 'restore'
  const [dir, ...rest] = restore ? positionals.slice(1) : positionals
  if (!dir || rest.length > 0) {
    throw new ToolselError(
      'INVALID_INPUT',
      'Usage: toolsel snapshot <dir> | toolsel snapshot restore <dir>. See: toolsel snapshot --help',
    )
  }
  const { config, logger } = await commandConfig(
    values,
    { 'library.indexDir': values['index-dir'], 'retrieve.dense.embedder': values.embedder },
    io,
  )
  // Before any write: `snapshot <dir> --print-config` wrote a snapshot and printed nothing.
  if (values['print-config']) return printConfig(config, io)
  const { indexDir } = config.library
  if (restore) {
    const restored = await restoreSnapshot(dir, indexDir, config, logger).catch((error) => {
      throw withSnapshotHint(error, `toolsel snapshot restore ${dir}`)
    })
    io.stdout(
      values.json
        ? `${JSON.stringify({ restored, indexDir })}\n`
        : `Restored ${restored.length} index(es) into ${indexDir}: ${restored.join(', ')}\n`,
    )
    return 0
  }
  if (!(await pathExists(indexDir))) {
    // Likely a mistyped --index-dir: an empty snapshot would look like a backup and hold nothing.
    throw new ToolselError(
      'INVALID_INPUT',
      `Index directory "${indexDir}" does not exist: nothing to snapshot. Name the directory the indexes are in with --index-dir (or TOOLSEL_INDEX_DIR).`,
    )
  }
  const saved = await loadSavedIndexes(indexDir, config, logger).catch((error) => {
    throw withSnapshotHint(error, `toolsel snapshot ${dir}`)
  })
  const manifest = await writeSnapshot(dir, saved, {
    onUnsynced: (warning) => io.stderr(`Warning: ${warning}\n`),
    onSwept: (removed) =>
      io.stderr(
        `Removed ${terminalLine(removed)}: a snapshot left half-written by a process that is gone\n`,
      ),
  })
  const names = manifest.libraries.map((entry) => entry.name)
  io.stdout(
    values.json
      ? `${JSON.stringify(manifest)}\n`
      : `Snapshot ${dir}: ${names.length} index(es)${names.length > 0 ? ` (${names.join(', ')})` : ''}\n`,
  )
  // An empty snapshot looks like a backup: say why it is empty (was "0 index(es) ()" alone).
  if (names.length === 0) io.stderr(`Warning: ${emptySnapshot(indexDir)}\n`)
  return 0
}

/**
 * An index built with another embedder than this command's (INDEX_MISMATCH of dense-kind.ts's
 * `assertSameEmbedder`, the one that has `details.builtDimensions`): its message's first hint,
 * "Rebuild it with … --embedder <the configured one>", re-embeds the library with a model it never
 * used, which is no fix for a snapshot or a restore (they copy the vectors as they are). The hint
 * that is true here: run `command` again with the index's embedder.
 */
function withSnapshotHint(error: unknown, command: string): unknown {
  if (!isToolselError(error, 'INDEX_MISMATCH')) return error
  const { library, builtWith, builtDimensions, configured, configuredDimensions } = error.details
  if (typeof builtWith !== 'string' || typeof builtDimensions !== 'number') return error
  return new ToolselError(
    'INDEX_MISMATCH',
    `Index "${String(library)}" was built with embedder ${builtWith} (${builtDimensions} dims); this command checks every index against ${String(configured)} (${String(configuredDimensions)} dims), and a snapshot copies an index's vectors as they are. Use the index's embedder: ${command} --embedder ${builtWith} (or TOOLSEL_EMBEDDER=${builtWith}). Nothing was written.`,
    { cause: error, details: error.details },
  )
}

function emptySnapshot(indexDir: string): string {
  return (
    `no saved index in "${indexDir}": the snapshot holds nothing. Libraries a server builds at start ` +
    `(the demo, a --library tool file) are not saved; save one with toolsel index <file> --name <library>, ` +
    `or name the directory the indexes are in with --index-dir (TOOLSEL_INDEX_DIR).`
  )
}
