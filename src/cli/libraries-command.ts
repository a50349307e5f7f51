/**
 * `toolsel libraries list|show|delete`: the saved indexes of a data directory (`--index-dir`),
 * or the libraries of a running service (`--server <url>`, its admin API with a key).
 * @module
 */
import { join } from 'node:path'
import { isSendableApiKey } from '../client/api-key.ts'
import { ToolselClient } from '../client/toolsel-client.ts'
import { ToolselClientError } from '../client/toolsel-client-error.ts'
import { closestName } from '../config/closest-name.ts'
import { ToolselError } from '../errors.ts'
import { assertLibraryName } from '../library/tool-library.ts'
import type { IndexManifest } from '../store/manifest.ts'
import { terminalLine } from '../terminal-text.ts'
import { deleteIndex, listIndexes, readManifest } from '../store/library-lifecycle.ts'
import { commandConfig, parseCommand, printConfig, type CommandIO } from './cli-options.ts'
import { HELP as LIBRARIES_HELP, OPTIONS } from './libraries-help.ts'

export { HELP as LIBRARIES_HELP, OPTIONS } from './libraries-help.ts'

const ACTIONS = ['list', 'show', 'delete']

/** One library as `list` and `show` print it (the HTTP API's fields, plus where it is saved). */
interface LibraryEntry {
  name: string
  toolCount?: number
  contentHash?: string
  createdAt?: string
  retrievers?: string[]
  defaultRetriever?: string
  isDefault?: boolean
  examples?: { count: number; version?: number; cap?: number }
  source?: { path?: string; format?: string }
  dir?: string
  /** A saved index whose manifest can't be read: why. */
  error?: string
}

export async function librariesCommand(argv: string[], io: CommandIO): Promise<number> {
  const { values, positionals } = parseCommand(argv, OPTIONS, 'libraries')
  if (values.help) return (io.stdout(`${LIBRARIES_HELP}\n`), 0)
  const { config } = await commandConfig(values, { 'library.indexDir': values['index-dir'] }, io)
  // Before the action: `libraries delete x --print-config` deleted x and printed nothing.
  if (values['print-config']) return printConfig(config, io)
  const [action, name, ...rest] = positionals
  if (action === undefined || !ACTIONS.includes(action)) {
    const guess = action === undefined ? undefined : closestName(action, ACTIONS)
    throw new ToolselError(
      'INVALID_INPUT',
      `${action === undefined ? 'Name an action' : `Unknown action "${action}"`}${guess ? ` (did you mean "${guess}"?)` : ''}: toolsel libraries list | show <name> | delete <name>. See: toolsel libraries --help`,
    )
  }
  if ((action === 'list') !== (name === undefined) || rest.length > 0) {
    throw new ToolselError(
      'INVALID_INPUT',
      action === 'list'
        ? 'toolsel libraries list takes no name (show <name> shows one).'
        : `toolsel libraries ${action} takes one library name. See: toolsel libraries --help`,
    )
  }
  if (name !== undefined) assertLibraryName(name)
  if (values.server !== undefined && values['index-dir'] !== undefined) {
    throw new ToolselError(
      'INVALID_INPUT',
      '--server and --index-dir name two different places: give one (a service reads its own index directory).',
    )
  }
  const where =
    values.server === undefined
      ? localLibraries(config.library.indexDir, config.library.default, (warning) =>
          io.stderr(`Warning: ${warning}\n`),
        )
      : remoteLibraries(values.server, values['api-key'] ?? io.env.TOOLSEL_API_KEY)
  if (action === 'list') {
    const libraries = await where.list()
    io.stdout(
      values.json
        ? `${JSON.stringify({ libraries }, null, 2)}\n`
        : listText(libraries, where.place),
    )
    return 0
  }
  if (action === 'show') {
    const entry = await where.show(name!)
    io.stdout(values.json ? `${JSON.stringify(entry, null, 2)}\n` : showText(entry))
    return 0
  }
  await where.delete(name!)
  io.stdout(
    values.json
      ? `${JSON.stringify({ deleted: name })}\n`
      : `Deleted library "${name}" from ${where.place}.\n`,
  )
  return 0
}

interface Libraries {
  /** Where they are, for messages: the index directory or the service's URL. */
  place: string
  list(): Promise<LibraryEntry[]>
  show(name: string): Promise<LibraryEntry>
  delete(name: string): Promise<void>
}

function localLibraries(
  indexDir: string,
  defaultName: string,
  onUnsynced: (warning: string) => void,
): Libraries {
  const entry = async (name: string): Promise<LibraryEntry> => {
    const dir = join(indexDir, name)
    let manifest: IndexManifest
    try {
      manifest = await readManifest(dir)
    } catch (error) {
      return { name, dir, error: (error as Error).message }
    }
    return {
      name,
      toolCount: manifest.toolCount,
      contentHash: manifest.contentHash,
      createdAt: manifest.createdAt,
      retrievers: Object.keys(manifest.retrievers),
      defaultRetriever: manifest.defaultRetriever,
      isDefault: name === defaultName,
      examples: {
        count: manifest.examples?.count ?? 0,
        version: manifest.examples?.version ?? 0,
        ...(manifest.examples && { cap: manifest.examples.cap }),
      },
      source: manifest.source,
      dir,
    }
  }
  const known = async (name: string): Promise<void> => {
    const names = await listIndexes(indexDir)
    if (names.includes(name)) return
    const closest = closestName(name, names)
    throw new ToolselError(
      'UNKNOWN_LIBRARY',
      `No library "${name}" is saved in ${indexDir}/${closest ? ` (did you mean "${closest}"?)` : ''}; ${names.length > 0 ? `saved: ${names.join(', ')}` : 'none is saved there'}. Another index directory: --index-dir <dir> (TOOLSEL_INDEX_DIR); a running service: --server <url>.`,
      { details: { library: name } },
    )
  }
  return {
    place: `${indexDir}/`,
    list: async () => Promise.all((await listIndexes(indexDir)).map(entry)),
    show: async (name) => (await known(name), entry(name)),
    delete: async (name) => {
      await known(name)
      if (name === defaultName) {
        throw new ToolselError(
          'INVALID_INPUT',
          `Library "${name}" is the default library (library.default, TOOLSEL_LIBRARY) and can't be deleted; make another library the default first (serve --library <name>, TOOLSEL_LIBRARY).`,
          { details: { library: name } },
        )
      }
      // deleteIndex renames the directory away in one step, then removes it.
      await deleteIndex(indexDir, name, { onUnsynced })
    },
  }
}

function remoteLibraries(server: string, apiKey: string | undefined): Libraries {
  if (!/^https?:\/\//.test(server)) {
    throw new ToolselError(
      'INVALID_INPUT',
      `--server expects the service's http(s) URL, e.g. http://localhost:8080; got "${server}".`,
    )
  }
  // Before the client is made: its constructor's TypeError came out of the command as INTERNAL,
  // with a stack trace (round 56).
  if (apiKey !== undefined && !isSendableApiKey(apiKey)) {
    throw new ToolselError(
      'INVALID_INPUT',
      "The API key (--api-key or TOOLSEL_API_KEY) holds a character an Authorization header can't carry (a space, a line break, a letter beyond ASCII): API keys are visible ASCII (the key is not shown).",
    )
  }
  const client = new ToolselClient({ baseUrl: server, ...(apiKey && { apiKey }) })
  const call = async <T>(work: () => Promise<T>): Promise<T> => {
    try {
      return await work()
    } catch (error) {
      throw serviceError(error, server, apiKey !== undefined && apiKey !== '')
    }
  }
  return {
    place: server,
    list: () => call(() => client.listLibraries()),
    show: (name) => call(() => client.getLibrary(name)),
    delete: (name) => call(() => client.deleteLibrary(name)),
  }
}

/** A client error as the CLI reports it: the service's code and message, and what to do. */
function serviceError(error: unknown, server: string, withKey: boolean): unknown {
  if (!(error instanceof ToolselClientError)) return error
  if (error.code === 'NETWORK' || error.code === 'CLIENT_TIMEOUT') {
    return new ToolselError('UPSTREAM_UNAVAILABLE', `No answer: ${error.message}`, {
      cause: error,
    })
  }
  const hint =
    error.status === 401
      ? withKey
        ? " The key was refused: set TOOLSEL_API_KEY to one of the service's keys."
        : ' The service needs a key: set TOOLSEL_API_KEY (the admin key to delete).'
      : error.status === 403 && !/gateway/i.test(error.message)
        ? ' Deleting needs the admin key (TOOLSEL_ADMIN_KEY of the service) in TOOLSEL_API_KEY.'
        : ''
  const code =
    error.code === 'BAD_RESPONSE' || error.code === 'CLIENT_ABORTED' ? 'INTERNAL' : error.code
  return new ToolselError(code, `${server}: ${error.message}${hint}`, { cause: error })
}

function listText(libraries: LibraryEntry[], place: string): string {
  if (libraries.length === 0)
    return `No libraries in ${place}. Build one: toolsel index <tool file> --name <library>.\n`
  // A service's answer (--server) is printed: no escape sequence of its strings reaches the terminal.
  const rows = libraries.map((entry) =>
    [
      `${entry.name}${entry.isDefault ? ' (default)' : ''}`,
      entry.error === undefined ? String(entry.toolCount) : '-',
      entry.error === undefined ? (entry.retrievers ?? []).join(',') : `unreadable: ${entry.error}`,
      entry.error === undefined ? String(entry.examples?.count ?? 0) : '',
      entry.createdAt ?? '',
    ].map(terminalLine),
  )
  const header = ['NAME', 'TOOLS', 'RETRIEVERS', 'EXAMPLES', 'BUILT']
  const widths = header.map((title, column) =>
    Math.max(title.length, ...rows.map((row) => row[column].length)),
  )
  const line = (cells: string[]) =>
    cells
      .map((cell, column) => (column === cells.length - 1 ? cell : cell.padEnd(widths[column])))
      .join('  ')
      .trimEnd()
  return `${[line(header), ...rows.map(line)].join('\n')}\n`
}

function showText(entry: LibraryEntry): string {
  if (entry.error !== undefined)
    return terminalLine(`${entry.name}: unreadable index in ${entry.dir}: ${entry.error}`) + '\n'
  const lines: Array<[string, string | undefined]> = [
    ['name', `${entry.name}${entry.isDefault ? ' (default)' : ''}`],
    ['tools', String(entry.toolCount)],
    ['retrievers', `${(entry.retrievers ?? []).join(', ')} (default ${entry.defaultRetriever})`],
    [
      'examples',
      `${entry.examples?.count ?? 0}${entry.examples?.version ? ` (version ${entry.examples.version})` : ''}`,
    ],
    ['built', entry.createdAt],
    ['content hash', entry.contentHash],
    ['source', entry.source && [entry.source.path, entry.source.format].filter(Boolean).join(', ')],
    ['saved in', entry.dir],
  ]
  return `${lines
    .filter(([, value]) => value !== undefined && value !== '')
    .map(([key, value]) => `${`${key}:`.padEnd(14)}${terminalLine(value!)}`)
    .join('\n')}\n`
}
