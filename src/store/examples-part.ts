/**
 * The usage examples of an index: `examples.jsonl` (one `{"instruction", "tools"}` per line,
 * oldest first), described by the manifest's `examples` entry (count, version, cap, hash).
 * @module
 */
import { readFile, writeFile } from 'node:fs/promises'
import { join } from 'node:path'
import { ToolselError } from '../errors.ts'
import { ExampleSet } from '../examples/example-set.ts'
import type { ExamplesConfig } from '../config/schema.ts'
import { learnLibraryExamples, type LibraryExamples } from '../examples/library-examples.ts'
import { parseExamplesText, parseExamplesTextSliced } from '../examples/usage-example.ts'
import type { ToolLibrary } from '../library/tool-library.ts'
import type { IndexedLibrary } from './indexed-library.ts'
import {
  EXAMPLES_FILE,
  IndexManifestSchema,
  MANIFEST_FILE,
  type ExamplesManifest,
  type IndexManifest,
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

export async function saveExamples(indexed: IndexedLibrary, dir: string): Promise<void> {
  const entry = indexed.manifest.examples
  if (entry === undefined || indexed.examples === undefined) return
  await writeFile(join(dir, entry.file), await indexed.examples.set.toJsonLinesSliced())
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
  let text: string
  try {
    text = await readFile(path, 'utf8')
  } catch (error) {
    throw corrupt('are missing', error)
  }
  let examples
  try {
    examples = await parseExamplesTextSliced(text, path)
  } catch (error) {
    throw corrupt(`can't be read (${(error as Error).message})`, error)
  }
  const set = await ExampleSet.ofSliced(examples, {
    cap: Math.max(entry.cap, examples.length, 1),
    version: entry.version,
  })
  if (set.size !== entry.count || (await set.contentHashSliced()) !== entry.contentHash) {
    throw corrupt('do not match the manifest (count or hash differs)')
  }
  const unknown = set.examples.flatMap((example) => example.tools).filter((id) => !library.has(id))
  if (unknown.length > 0) throw corrupt(`name tools the library does not have ("${unknown[0]}")`)
  return learnLibraryExamples(set, library, config)
}

/**
 * The usage examples stored in the index at `dir`, for a rebuild that keeps them (`toolsel
 * index` without `--examples`); undefined when there is no index or it has none. Unreadable
 * examples are an error: silently dropping them would lose data.
 */
export async function readStoredExamples(dir: string): Promise<ExampleSet | undefined> {
  let manifestText: string
  try {
    manifestText = await readFile(join(dir, MANIFEST_FILE), 'utf8')
  } catch {
    return undefined
  }
  const parsed = IndexManifestSchema.safeParse(JSON.parse(manifestText))
  const entry = parsed.success ? parsed.data.examples : undefined
  if (entry === undefined) return undefined
  const path = join(dir, entry.file)
  const examples = parseExamplesText(await readFile(path, 'utf8'), path)
  return ExampleSet.of(examples, {
    cap: Math.max(entry.cap, examples.length, 1),
    version: entry.version,
  })
}
