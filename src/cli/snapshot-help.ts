/**
 * The help and the flags of `toolsel snapshot`, apart from the command's module: main.ts
 * prints the help without loading what the command runs (bench/README.md, "CLI start cost",
 * round 49). Only constants and light modules here.
 * @module
 */
import { COMMON_HELP } from './command-help.ts'

export const HELP = `Usage: toolsel snapshot <dir> [--index-dir <dir>] [--embedder <id>] [--json]
       toolsel snapshot restore <dir> [--index-dir <dir>] [--embedder <id>] [--json]

snapshot <dir>: writes every saved index of the index directory into a new directory <dir>
(snapshot.json and indexes/<library>/); <dir> appears complete or not at all. A running
server writes the same from the libraries it serves with POST /v1/snapshots (admin key).
First it removes the temporary directories (.snapshot-tmp-<name>+<pid>…) that snapshots killed
mid-write on this host left beside <dir>, saying so on stderr; never a live writer's, one of
another host or one another user owns.

snapshot restore <dir>: checks every index of the snapshot, writes them all into the index
directory beside their places (a failure writing any, a full disk say, removes them and changes
nothing), then renames them all into place, replacing indexes of the same name (others are left
alone; a rename failing part-way puts back the ones renamed before it: nothing is restored;
a restore killed between its renames is undone by the next start or restore on the directory,
through its journal .toolsel-restore+...). A toolsel serve on that
index directory serves them within server.indexWatchMs (with it 0: once restarted), or start
one on it.

Options:
  --index-dir <dir>    Index directory (default indexes, env TOOLSEL_INDEX_DIR)
  --embedder <id>      The embedder of the indexes' plain dense and hybrid parts (what toolsel
                       index was given); every index is loaded to be checked, and one built
                       with another embedder is refused, naming it (default use-lite, env
                       TOOLSEL_EMBEDDER)
  --json               Print the result as JSON

${COMMON_HELP}`

export const OPTIONS = {
  'index-dir': { type: 'string' },
  embedder: { type: 'string' },
  json: { type: 'boolean' },
} as const
