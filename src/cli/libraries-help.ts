/**
 * The help and the flags of `toolsel libraries`, apart from the command's module: main.ts
 * prints the help without loading what the command runs (bench/README.md, "CLI start cost",
 * round 49). Only constants and light modules here.
 * @module
 */
import { COMMON_HELP } from './command-help.ts'

export const HELP = `Usage: toolsel libraries list|show <name>|delete <name> [--index-dir <dir> | --server <url>]
                         [--json]

Lists, shows and deletes libraries. By default the saved indexes in the index directory (what
toolsel index and uploads write); with --server, the libraries a running service serves, through
its HTTP API (GET and DELETE /v1/libraries…; deleting needs the admin key).

  list            Every library: tools, retrievers, usage examples, when it was built
  show <name>     One library in full (its manifest's summary, where it is saved)
  delete <name>   Removes the library: its index directory is renamed away in one step, then
                  removed (a reader never sees half an index). The default library
                  (library.default, TOOLSEL_LIBRARY) is refused, as the HTTP API refuses it.
                  A running service on that directory stops serving it within
                  server.indexWatchMs (the default library, or with it 0: once restarted);
                  delete through --server to stop serving it at once.

Options:
  --index-dir <dir>  Where indexes live (default indexes, env TOOLSEL_INDEX_DIR)
  --server <url>     A running service, e.g. http://localhost:8080
  --api-key <key>    Its API key (default env TOOLSEL_API_KEY; prefer the variable: a flag is
                     visible to other users of the machine); deleting needs the admin key
  --json             Print JSON (list: {libraries: [...]}, show: one library)

${COMMON_HELP}`

export const OPTIONS = {
  'index-dir': { type: 'string' },
  server: { type: 'string' },
  'api-key': { type: 'string' },
  json: { type: 'boolean' },
} as const
