/**
 * ToolBench suites (G1, G2, G3): one split per query file, in three library modes (closed: each
 * query's own `api_list`; union: every `api_list` of the file; corpus: an explicit tool file such
 * as COLT's 1,419-API G3 corpus). Gold = the record's de-duplicated `relevant APIs`, id `tool::api`.
 * @module
 */
import { basename, extname, join } from 'node:path'
import { ToolselError } from '../../errors.ts'
import { importToolsFromFile, importToolsFromText } from '../../library/importers/index.ts'
import type { Tool } from '../../library/tool.ts'
import type { BenchCase } from '../bench-case.ts'
import type {
  BenchSplit,
  BenchSuite,
  LibraryMode,
  SuiteLoadOptions,
  SuiteLoadResult,
} from './bench-suite.ts'
import { finishSplit, unmappableNote } from './finish-split.ts'
import { missingFiles, readJsonRecords } from './read-data-file.ts'
import { createToolbenchCorpusMap } from './toolbench-corpus.ts'
import { parseToolbenchQueries } from './toolbench-queries.ts'
import { normalizeQueryText } from '../../train/train-split.ts'
import { loadToolplannerTraining, type ToolplannerTraining } from './toolplanner-training.ts'

export interface ToolbenchPart {
  /** The split's part name, e.g. `G1_instruction`. */
  name: string
  /** Path under the data root. */
  file: string
}

export interface ToolbenchGroup {
  name: string
  description: string
  parts: ToolbenchPart[]
  /** The default corpus of `--library-mode corpus`, under the data root. */
  corpus?: string
  /**
   * The training split used by `--examples train` (paths under the data root): ToolPlanner's
   * coarse-instruction API and Tool files, minus every query whose id or text is in one of the
   * `exclude` test files (and in the evaluated query files).
   */
  training?: { api: string; tool: string; exclude: string[] }
}

export function createToolbenchSuite(group: ToolbenchGroup): BenchSuite {
  return {
    name: group.name,
    description: group.description,
    async load(options: SuiteLoadOptions): Promise<SuiteLoadResult> {
      const parts = options.queries
        ? [{ name: basename(options.queries, extname(options.queries)), file: options.queries }]
        : group.parts.map((part) => ({ ...part, file: join(options.dataDir, part.file) }))
      const corpusFile = corpusPath(group, options)
      const skipped = []
      let corpus: Tool[] | undefined
      if (corpusFile !== undefined) {
        const [missing] = await missingFiles([corpusFile])
        if (missing !== undefined) {
          const reason = `corpus not found: ${missing}`
          return {
            splits: [],
            skipped: parts.map((part) => ({ name: `${group.name}/${part.name}`, reason })),
          }
        }
        corpus = (
          await importToolsFromFile(corpusFile, {
            maxFileBytes: options.maxFileBytes,
            maxTools: options.maxTools,
            regularOnly: true,
          })
        ).tools
      }
      const training =
        options.examples === 'train' && group.training
          ? await loadTraining(group.training, options.dataDir, parts)
          : undefined
      const splits: BenchSplit[] = []
      for (const part of parts) {
        const name = `${group.name}/${part.name}`
        const [missing] = await missingFiles([part.file])
        if (missing !== undefined) skipped.push({ name, reason: `not found: ${missing}` })
        else {
          const split = await loadPart(name, part.file, { ...options, corpus, corpusFile })
          if (training) split.training = mapTraining(training, split.tools)
          splits.push(split)
        }
      }
      return { splits, skipped }
    },
  }
}

interface LoadedTraining {
  data: ToolplannerTraining
  files: string[]
}

/** The training split minus every query id and text of the test files (and the evaluated parts). */
async function loadTraining(
  spec: NonNullable<ToolbenchGroup['training']>,
  dataDir: string,
  parts: readonly ToolbenchPart[],
): Promise<LoadedTraining> {
  const api = join(dataDir, spec.api)
  const tool = join(dataDir, spec.tool)
  const missing = await missingFiles([api, tool])
  if (missing.length > 0) {
    throw new ToolselError(
      'INVALID_INPUT',
      `--examples train needs the training files, which are missing: ${missing.join(', ')}.`,
    )
  }
  const ids = new Set<string>()
  const texts = new Set<string>()
  const testFiles = [
    ...spec.exclude.map((file) => join(dataDir, file)),
    ...parts.map((part) => part.file),
  ]
  for (const file of new Set(testFiles)) {
    if ((await missingFiles([file])).length > 0) continue
    for (const query of parseToolbenchQueries(await readJsonRecords(file), file)) {
      ids.add(query.id)
      texts.add(normalizeQueryText(query.query))
    }
  }
  return { data: await loadToolplannerTraining({ api, tool }, { ids, texts }), files: [api, tool] }
}

/** Training examples over a split's tools: gold pairs mapped by standardized name; unmapped tools dropped. */
function mapTraining(training: LoadedTraining, tools: readonly Tool[]): BenchSplit['training'] {
  const map = createToolbenchCorpusMap(tools)
  const ids = new Set(tools.map((tool) => tool.id))
  let partial = 0
  const examples = training.data.examples.flatMap((example) => {
    const mapped = [
      ...new Set(
        example.pairs.map(([tool, api]) => map.resolve(tool, api)).filter((id) => ids.has(id)),
      ),
    ]
    if (mapped.length > 0 && mapped.length < example.pairs.length) partial += 1
    return mapped.length === 0 ? [] : [{ instruction: example.instruction, tools: mapped }]
  })
  const { records, excluded, unusable } = training.data
  return {
    examples,
    source: `ToolPlanner coarse_instruction train (${training.files.join(', ')})`,
    notes: [
      `training examples: ${records} records, ${excluded} left out as test queries (id or text), ${unusable} unusable, ${examples.length} with a tool of this library (${partial} of them only partly)`,
    ],
  }
}

function corpusPath(group: ToolbenchGroup, options: SuiteLoadOptions): string | undefined {
  if (options.libraryMode !== 'corpus') {
    if (options.tools === undefined) return undefined
    throw new ToolselError(
      'INVALID_INPUT',
      `--tools gives a ToolBench suite its corpus; use it with --library-mode corpus (got ${options.libraryMode}), or --library to swap the library.`,
    )
  }
  const file = options.tools ?? (group.corpus && join(options.dataDir, group.corpus))
  if (file === undefined) {
    throw new ToolselError(
      'INVALID_INPUT',
      `Suite ${group.name} has no default corpus; give one with --tools <file> for --library-mode corpus.`,
    )
  }
  return file
}

async function loadPart(
  name: string,
  file: string,
  options: SuiteLoadOptions & { corpus?: Tool[]; corpusFile?: string },
): Promise<BenchSplit> {
  const queries = parseToolbenchQueries(await readJsonRecords(file), file)
  const mode: LibraryMode = options.libraryMode
  const tools =
    options.corpus ??
    (
      await importToolsFromFile(file, {
        format: 'toolbench',
        maxFileBytes: options.maxFileBytes,
        maxTools: options.maxTools,
        regularOnly: true,
      })
    ).tools
  const corpusMap = options.corpus ? createToolbenchCorpusMap(options.corpus) : undefined
  const cases: BenchCase[] = queries.map((query) => {
    const gold = query.goldPairs.map(([tool, api]) =>
      corpusMap ? corpusMap.resolve(tool, api) : `${tool}::${api}`,
    )
    const benchCase: BenchCase = { id: query.id, instruction: query.query, gold }
    if (mode === 'closed') {
      // Imported record by record, so each query sees its own api_list exactly as written.
      const text = JSON.stringify([query.record])
      benchCase.library = importToolsFromText(text, { format: 'toolbench', fileName: file }).tools
    }
    return benchCase
  })
  const ids = new Set(tools.map((tool) => tool.id))
  const { cases: kept, stats } = finishSplit({
    records: queries.length,
    cases,
    has: (id, benchCase) =>
      benchCase.library ? benchCase.library.some((tool) => tool.id === id) : ids.has(id),
    unmappable: options.unmappable,
  })
  const notes = [libraryNote(mode, tools.length, cases, options.corpusFile)]
  if (corpusMap && corpusMap.byStandardizedName > 0) {
    notes.push(
      `${corpusMap.byStandardizedName} gold pairs matched the corpus only by standardized name`,
    )
  }
  const unmapped = unmappableNote(stats, options.unmappable)
  if (unmapped) notes.push(unmapped)
  return {
    name,
    files: options.corpusFile ? [file, options.corpusFile] : [file],
    tools,
    cases: kept,
    stats,
    notes,
  }
}

function libraryNote(
  mode: LibraryMode,
  size: number,
  cases: BenchCase[],
  corpusFile?: string,
): string {
  if (mode === 'corpus') return `library: corpus ${corpusFile} (${size} tools)`
  if (mode === 'union') return `library: union of the file's api_lists (${size} APIs)`
  const mean =
    cases.reduce((sum, item) => sum + (item.library?.length ?? 0), 0) / Math.max(1, cases.length)
  return `library: closed, each query's own api_list (mean ${mean.toFixed(1)} APIs; union ${size})`
}
