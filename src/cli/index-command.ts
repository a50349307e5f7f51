/** `toolsel index`: import a tool file and build its index on disk. */
import {
  IMPORT_FORMATS,
  ON_DUPLICATE_CHOICES,
  PROVIDER_NAME_CHOICES,
  summarizeImport,
  type ImportFormat,
  type ImportResult,
  type ImportSummary,
  type OnDuplicate,
  type ProviderNames,
} from '../library/importers/index.ts'
import type { Config } from '../config/schema.ts'
import { ToolselError } from '../errors.ts'
import { ExampleSet } from '../examples/example-set.ts'
import {
  assertKnownTools,
  exampleKey,
  MAX_UNKNOWN_EXAMPLES_KEPT,
  readExamples,
  type UsageExample,
} from '../examples/usage-example.ts'
import { ToolLibrary } from '../library/tool-library.ts'
import { readStoredExamples } from '../store/examples-part.ts'
import { droppedPartsWarning } from '../store/dropped-parts.ts'
import {
  commandConfig,
  maxFileBytesFlag,
  parseCommand,
  type CommandIO,
  printConfig,
  readStdinText,
} from './cli-options.ts'
import { createProgress, progressOutput } from './progress.ts'
import { join } from 'node:path'
import {
  buildIndexedLibrary,
  buildsSameIndex,
  importAsLibrary,
  libraryNameFromPath,
  savedIndexProblem,
  savedManifest,
  saveIndexedLibrary,
} from '../store/library-lifecycle.ts'
import { readDataLines } from '../bench/suites/read-data-file.ts'
import { groupWarnings } from '../library/importers/group-warnings.ts'
import { terminalText } from '../terminal-text.ts'
import { assertReadableFile } from '../read-text-file.ts'
import { HELP as INDEX_HELP, OPTIONS } from './index-help.ts'

export { HELP as INDEX_HELP, OPTIONS } from './index-help.ts'

export async function indexCommand(argv: string[], io: CommandIO): Promise<number> {
  const { values, positionals } = parseCommand(argv, OPTIONS, 'index')
  if (values.help) return (io.stdout(`${INDEX_HELP}\n`), 0)
  const { config, logger } = await commandConfig(
    values,
    {
      'library.indexDir': values['index-dir'],
      'retrieve.build': values.retriever,
      'retrieve.dense.embedder': values.embedder,
      'retrieve.dense.index': values['dense-index'],
      'retrieve.dense.device': values.device,
      'library.maxFileBytes': maxFileBytesFlag(values['max-file-bytes']),
    },
    io,
  )
  if (values['print-config']) return printConfig(config, io)
  const [path] = positionals
  if (!path || positionals.length > 1) {
    throw new ToolselError(
      'INVALID_INPUT',
      'toolsel index takes exactly one file or directory. See: toolsel index --help',
    )
  }
  const format = values.format as ImportFormat | undefined
  if (format !== undefined && !Object.hasOwn(IMPORT_FORMATS, format)) {
    throw new ToolselError(
      'INVALID_INPUT',
      `Unknown --format "${format}" (available: ${Object.keys(IMPORT_FORMATS).join(', ')}).`,
    )
  }
  const onDuplicate = values['on-duplicate'] as OnDuplicate | undefined
  if (onDuplicate !== undefined && !ON_DUPLICATE_CHOICES.includes(onDuplicate)) {
    throw new ToolselError(
      'INVALID_INPUT',
      `Unknown --on-duplicate "${onDuplicate}" (available: ${ON_DUPLICATE_CHOICES.join(', ')}).`,
    )
  }
  const providerNames = values['provider-names'] as ProviderNames | undefined
  if (providerNames !== undefined && !PROVIDER_NAME_CHOICES.includes(providerNames)) {
    throw new ToolselError(
      'INVALID_INPUT',
      `Unknown --provider-names "${providerNames}" (available: ${PROVIDER_NAME_CHOICES.join(', ')}).`,
    )
  }
  // `-`: the tool file is standard input (`curl … | toolsel index - --name api`), read as a file
  // is (library.maxFileBytes at most, UTF-8; the format detected from its text or --format). Was
  // refused: `Cannot read tool path "-"`.
  const fromStdin = path === '-'
  if (fromStdin && values.name === undefined) {
    throw new ToolselError(
      'INVALID_INPUT',
      'toolsel index - (tools from stdin) needs --name <library>. See: toolsel index --help',
    )
  }
  const name = values.name ?? libraryNameFromPath(path)

  // Before the import (seconds for a large file): was refused only after it.
  if (values.examples !== undefined)
    await assertReadableFile(values.examples, '--examples file', { opened: false })
  const started = performance.now()
  const previousIndexDir = join(config.library.indexDir, name)
  const settings = {
    format,
    namespace: values.namespace,
    onDuplicate,
    providerNames,
    maxFileBytes: config.library.maxFileBytes,
    maxTools: config.library.maxTools,
  }
  const { library, imported, source } = await importAsLibrary(
    fromStdin
      ? {
          ...settings,
          // In messages and each tool's source.file (was `<name>.json`, an upload's name).
          inputName: 'stdin',
          text: await readStdinText(
            io,
            'The tool file',
            config.library.maxFileBytes,
            ' (library.maxFileBytes, env TOOLSEL_MAX_FILE_BYTES, or --max-file-bytes <n> raises the limit)',
          ),
        }
      : { ...settings, path },
    name,
  )
  // The summary below lists what these count: printed once, there.
  const summarized = new Set(imported.summarized)
  const unsummarized = imported.warnings.filter((warning) => !summarized.has(warning))
  // Thousands of warnings of one kind (a large OpenAPI spec): the first of each, counted. Plain
  // lines, as the command's other output (not the service log's timestamped ones); they quote
  // the imported file: no escape sequence of it reaches the terminal.
  for (const warning of groupWarnings(unsummarized).warnings)
    io.stderr(`Warning: ${terminalText(warning)}\n`)
  io.stderr(
    `Imported ${tools(library.size)} (${importedFormats(imported)}) from ${fromStdin ? 'stdin' : path} in ${Math.round(performance.now() - started)} ms\n`,
  )
  // Ids and schema errors quote the imported file: no escape sequence of it reaches the terminal.
  io.stderr(terminalText(describeImport(summarizeImport(imported, SHOWN_PER_LIST))))
  const examples = await libraryExamples(values.examples, previousIndexDir, library, config, io)
  const build = { source, previousIndexDir, logger, examples }
  const previous = await savedManifest(previousIndexDir)
  const saved = values.rebuild ? undefined : previous
  if (saved !== undefined && buildsSameIndex(saved, library, build, config)) {
    // The manifest says these tools; the files beside it must still load (a truncated or
    // overwritten file under an intact manifest is rebuilt, not kept).
    const unloadable = await savedIndexProblem(previousIndexDir, config)
    if (unloadable === undefined) {
      io.stderr(
        `Unchanged: ${previousIndexDir} already holds ${these(library.size)} (retrievers: ${Object.keys(saved.retrievers).join(', ')}, built ${saved.createdAt}); nothing written. --rebuild builds it again.\n`,
      )
      return 0
    }
    io.stderr(
      `${previousIndexDir} records ${these(library.size)} but does not load (${terminalText(unloadable)}): building it again.\n`,
    )
  }
  const progress = createProgress(`Indexing ${name}`, progressOutput(io))
  const indexed = await buildIndexedLibrary(library, config, {
    ...build,
    onProgress: ({ stage, done, total }) => progress.update(done, total, stage),
  })
  const dir = await saveIndexedLibrary(config.library.indexDir, indexed, {
    onUnsynced: (warning) => io.stderr(`Warning: ${warning}\n`),
  })
  const lost = droppedPartsWarning(name, previous, indexed.manifest, '--retriever ')
  if (lost !== undefined) io.stderr(`Warning: ${terminalText(lost)}\n`)
  const retrievers = [...indexed.retrievers.values()].map((retriever) => retriever.name)
  const withExamples = indexed.examples
    ? `, ${indexed.examples.set.size} usage example${indexed.examples.set.size === 1 ? '' : 's'}`
    : ''
  progress.done(
    `${tools(library.size)}${withExamples} written to ${dir} (retrievers: ${retrievers.join(', ')})`,
  )
  return 0
}

/** `1 tool`, `7 tools`. */
function tools(count: number): string {
  return `${count} tool${count === 1 ? '' : 's'}`
}

/** `this 1 tool`, `these 7 tools`. */
function these(count: number): string {
  return `${count === 1 ? 'this' : 'these'} ${tools(count)}`
}

/** `openai`; a directory of several formats: `openapi: 1 file, openai: 2 files`. */
function importedFormats(imported: ImportResult): string {
  const files = new Map<string, number>()
  for (const { format } of imported.files) files.set(format, (files.get(format) ?? 0) + 1)
  if (files.size <= 1) return imported.format
  return [...files]
    .map(([format, count]) => `${format}: ${count} file${count === 1 ? '' : 's'}`)
    .join(', ')
}

/** Renames and schema rewrites spelled out on stderr (the counts are complete). */
const SHOWN_PER_LIST = 20

function describeImport(summary: ImportSummary): string {
  const lines: string[] = []
  const { counts } = summary
  if (summary.duplicates.length > 0) {
    lines.push(
      `Duplicate ids: ${counts.renamed} renamed, ${counts.dropped} dropped, ${counts.identical} identical copies dropped`,
    )
    for (const entry of summary.duplicates) {
      const where = entry.record === undefined ? entry.file : `${entry.file} record ${entry.record}`
      lines.push(
        entry.action === 'renamed'
          ? `  ${entry.id} → ${entry.to} (${where})`
          : `  ${entry.id}: ${entry.action === 'identical' ? 'identical copy' : 'other definition'} dropped (${where})`,
      )
    }
  }
  if (counts.schemaChanges > 0) {
    lines.push(`Parameters rewritten into JSON Schema: ${counts.schemaChanges} tool(s)`)
    for (const { id, changes } of summary.schemaChanges) {
      lines.push(`  ${id}: ${changes.join('; ')}`)
    }
  }
  if (counts.invalidSchemas > 0) {
    lines.push(`Parameters that are still not valid JSON Schema: ${counts.invalidSchemas} tool(s)`)
    for (const { id, errors } of summary.invalidSchemas) lines.push(`  ${id}: ${errors.join('; ')}`)
  }
  const listed =
    summary.duplicates.length + summary.schemaChanges.length + summary.invalidSchemas.length
  const total =
    counts.renamed +
    counts.dropped +
    counts.identical +
    counts.schemaChanges +
    counts.invalidSchemas
  if (listed < total)
    lines.push(`  … (${total - listed} more; PUT /v1/libraries returns up to 200 of each)`)
  return lines.length === 0 ? '' : `${lines.join('\n')}\n`
}

/** `--examples <file>` (replacing the index's examples), else the current index's, pruned. */
async function libraryExamples(
  file: string | undefined,
  previousIndexDir: string,
  library: ToolLibrary,
  config: Config,
  io: CommandIO,
): Promise<ExampleSet | undefined> {
  const cap = config.library.maxExamples
  const previous = await readStoredExamples(previousIndexDir)
  if (file === undefined) {
    if (previous === undefined) return undefined
    const pruned = previous.prune((id) => library.has(id))
    if (pruned.removedToolIds.length > 0) {
      io.stderr(
        `Kept the index's usage examples without ${pruned.removedToolIds.length} tool id(s) the new tools lack; ${pruned.droppedExamples} example(s) left without a tool were dropped.\n`,
      )
    }
    return pruned.set.withCap(cap)
  }
  // Read a line at a time, the newest `cap` distinct examples kept as they come (what POST
  // /v1/libraries/:library/examples does past the cap, adding the lines in order): a file of
  // 3,000,000 lines was parsed whole first (1.7-2.1 GB of memory). Unknown tool ids refuse the
  // file, naming their lines: the first MAX_UNKNOWN_EXAMPLES_KEPT examples that name one are
  // kept for that message, the rest counted (all of them were kept before).
  // Kept in order in `queue` from `head` (a Map deleted from its front walked its holes on every
  // first-key look-up), their keys in `kept`.
  const kept = new Set<string>()
  let queue: Array<{ key: string; example: UsageExample }> = []
  let head = 0
  let evicted = 0
  const unknown: UsageExample[] = []
  const unknownPlaces: string[] = []
  let unlisted = 0
  let read = 0
  // `withIds`: a record may carry an `id`, as in the files of `toolsel train --examples` and
  // `train-data --examples` (read, not kept): one file serves all three (was: "Unrecognized key").
  const lines = readDataLines(file, '--examples file')
  for await (const batch of readExamples(lines, file, { withIds: true })) {
    for (const { example, where } of batch) {
      read += 1
      if (!example.tools.every((id) => library.has(id))) {
        if (unknown.length === MAX_UNKNOWN_EXAMPLES_KEPT) unlisted += 1
        else {
          unknown.push(example)
          unknownPlaces.push(where)
        }
        continue
      }
      const key = exampleKey(example)
      if (kept.has(key)) continue
      kept.add(key)
      queue.push({ key, example })
      if (kept.size > cap) {
        kept.delete(queue[head++].key)
        evicted += 1
      }
      if (head > cap) {
        queue = queue.slice(head)
        head = 0
      }
    }
  }
  assertKnownTools(
    library.name,
    unknown,
    (id) => library.has(id),
    { source: file, places: unknownPlaces, unlisted },
    (ids) => library.unknownIdsHint(ids),
  )
  const set = ExampleSet.of(
    queue.slice(head).map((entry) => entry.example),
    { cap, version: (previous?.version ?? 0) + 1 },
  )
  // Every example read (none names an unknown tool by now) is kept, a duplicate of one kept, or
  // evicted past the cap (a duplicate of an evicted one is taken again). Was always "(n kept:
  // duplicates removed)", also when there was none.
  const duplicates = read - set.size - evicted
  const dropped = [
    duplicates > 0 && `${duplicates} duplicate${duplicates === 1 ? '' : 's'} removed`,
    evicted > 0 && `${evicted} older past library.maxExamples (${cap}) dropped`,
  ].filter(Boolean)
  io.stderr(
    `Read ${read} usage example${read === 1 ? '' : 's'} from ${file} (${set.size} kept${dropped.length > 0 ? `: ${dropped.join(', ')}` : ''})\n`,
  )
  return set
}
