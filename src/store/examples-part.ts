/**
 * The usage examples of an index: `examples.jsonl` (one `{"instruction", "tools"}` per line,
 * oldest first), described by the manifest's `examples` entry (count, version, cap, hash).
 * @module
 */
import { writeFile } from 'node:fs/promises'
import { join } from 'node:path'
import { ToolselError } from '../errors.ts'
import { ExampleSet } from '../examples/example-set.ts'
import type { ExamplesConfig } from '../config/schema.ts'
import { learnLibraryExamples, type LibraryExamples } from '../examples/library-examples.ts'
import { parseExamplesBytesSliced, type UsageExample } from '../examples/usage-example.ts'
import type { ToolLibrary } from '../library/tool-library.ts'
import { runStepsSliced, type Steps } from '../time-slicer.ts'
import type { IndexedLibrary } from './indexed-library.ts'
import {
  indexFileBound,
  indexFileProblem,
  readIndexFile,
  readIndexFileBytes,
} from './index-file-read.ts'
import {
  EXAMPLES_FILE,
  IndexManifestSchema,
  MANIFEST_FILE,
  type ExamplesManifest,
  type IndexManifest,
  readManifestText,
} from './manifest.ts'

/**
 * The manifest entry for `set` (written with the index); its hash computed yielding to the event
 * loop (`ExampleSet.contentHashSliced`).
 */
export async function examplesManifest(
  set: ExampleSet,
  signal?: AbortSignal,
): Promise<ExamplesManifest> {
  return {
    file: EXAMPLES_FILE,
    count: set.size,
    version: set.version,
    cap: set.cap,
    contentHash: await set.contentHashSliced(signal),
  }
}

/** Writes the examples file into `dir`, a chunk of lines at a time (no copy of the whole file). */
export async function saveExamples(indexed: IndexedLibrary, dir: string): Promise<void> {
  const entry = indexed.manifest.examples
  if (entry === undefined || indexed.examples === undefined) return
  await writeFile(join(dir, entry.file), await indexed.examples.set.toJsonLineChunksSliced())
}

export async function loadExamples(
  dir: string,
  manifest: IndexManifest,
  library: ToolLibrary,
  config: ExamplesConfig,
): Promise<LibraryExamples | undefined> {
  const entry = manifest.examples
  if (entry === undefined) return undefined
  const path = join(dir, entry.file)
  const corrupt = (problem: string, cause?: unknown) =>
    new ToolselError(
      'INDEX_CORRUPT',
      `Index "${manifest.library}" at ${dir}: its usage examples (${entry.file}) ${problem}. Rebuild it with: toolsel index <file> --name ${manifest.library} --examples <examples.jsonl>.`,
      { cause, details: { library: manifest.library } },
    )
  // A regular file of at most its recorded size and slack (index-file-read.ts).
  const bound = indexFileBound(manifest, entry.file)
  let bytes: Buffer
  try {
    bytes = await readIndexFileBytes(path, bound)
  } catch (error) {
    const problem = indexFileProblem(error, bound)
    throw corrupt(problem === undefined ? 'are missing' : `are not read: ${problem}`, error)
  }
  let examples
  try {
    examples = await parseExamplesBytesSliced(bytes, path)
  } catch (error) {
    throw corrupt(`can't be read (${(error as Error).message})`, error)
  }
  const set = await ExampleSet.ofSliced(examples, {
    cap: Math.max(entry.cap, examples.length, 1),
    version: entry.version,
    normalized: true,
  })
  if (set.size !== entry.count || (await set.contentHashSliced()) !== entry.contentHash) {
    throw corrupt('do not match the manifest (count or hash differs)')
  }
  // In slices: every example's tools looked up in one piece was 30-50 ms at 16.8k examples.
  const unknown = await runStepsSliced(firstUnknownTool(set.examples, library))
  if (unknown !== undefined) throw corrupt(`name tools the library does not have ("${unknown}")`)
  return learnLibraryExamples(set, library, config)
}

/** The first tool id (in example order) that `library` does not have; a step per example. */
function* firstUnknownTool(
  examples: readonly UsageExample[],
  library: ToolLibrary,
): Steps<string | undefined> {
  for (const example of examples) {
    for (const id of example.tools) if (!library.has(id)) return id
    yield
  }
  return undefined
}

/**
 * The usage examples stored in the index at `dir`, for a rebuild that keeps them (`toolsel
 * index` without `--examples`); undefined when there is no index or it has none. Unreadable
 * examples are an error: silently dropping them would lose data.
 */
export async function readStoredExamples(dir: string): Promise<ExampleSet | undefined> {
  let manifestText: string
  try {
    manifestText = await readManifestText(dir)
  } catch {
    return undefined
  }
  const parsed = IndexManifestSchema.safeParse(JSON.parse(manifestText))
  const entry = parsed.success ? parsed.data.examples : undefined
  if (entry === undefined) return undefined
  const path = join(dir, entry.file)
  const bound = indexFileBound(parsed.data!, entry.file)
  const examples = await parseExamplesBytesSliced(
    await readIndexFile(
      path,
      bound,
      (why, cause) =>
        new ToolselError('INDEX_CORRUPT', `The usage examples file ${path} ${why}.`, {
          cause,
          details: { file: path },
        }),
    ),
    path,
  )
  return ExampleSet.ofSliced(examples, {
    cap: Math.max(entry.cap, examples.length, 1),
    version: entry.version,
    normalized: true,
  })
}
