/** `toolsel train-data`: write SFT/GRPO training records in toolsel's own prompt format. */
import { basename, extname, join } from 'node:path'
import { parseComponentId } from '../component-id.ts'
import { createComponents } from '../components.ts'
import { ToolselError } from '../errors.ts'
import { createLanguageModel } from '../models/create-language-model.ts'
import type { LanguageModel } from '../models/language-model.ts'
import { indexTools, readLibraryReferenceTools } from '../store/library-lifecycle.ts'
import { resolveRetrieval } from '../service/resolve-request.ts'
import { assertLibraryName } from '../library/tool-library.ts'
import { makeDirectory, writeFilesAtomically } from '../write-file-atomically.ts'
import { terminalLine } from '../terminal-text.ts'
import {
  buildTrainData,
  TRAIN_DATA_KINDS,
  type TrainData,
  type TrainDataCounts,
  type TrainDataKind,
} from '../train/build-train-data.ts'
import { createDataCard, promptFingerprints, renderDataCard } from '../train/data-card.ts'
import { MAX_TRAIN_EXAMPLES } from '../train/splits/examples-file.ts'
import { loadExamplesFile, loadTrainSplit } from '../train/splits/index.ts'
import {
  commandConfig,
  numberFlag,
  parseCommand,
  printConfig,
  type CommandIO,
  maxExamplesFlag,
  maxFileBytesFlag,
} from './cli-options.ts'
import { createProgress, progressOutput } from './progress.ts'
import { HELP as TRAIN_DATA_HELP, OPTIONS } from './train-data-help.ts'

export { HELP as TRAIN_DATA_HELP, OPTIONS } from './train-data-help.ts'

export async function trainDataCommand(argv: string[], io: CommandIO): Promise<number> {
  const { values, positionals } = parseCommand(argv, OPTIONS, 'train-data')
  if (values.help) return (io.stdout(`${TRAIN_DATA_HELP}\n`), 0)
  const [kindArgument, extra] = positionals
  if (!TRAIN_DATA_KINDS.includes(kindArgument as TrainDataKind)) {
    throw invalid(
      `the first argument must be one of ${TRAIN_DATA_KINDS.join(', ')}, got ${kindArgument === undefined ? 'nothing' : `"${kindArgument}"`}`,
    )
  }
  if (extra !== undefined) throw invalid(`unexpected argument "${extra}"`)
  const kind = kindArgument as TrainDataKind
  if ((values.suite === undefined) === (values.examples === undefined)) {
    throw invalid('give either --suite <name> or --examples <file> --library <ref>')
  }
  if (values.examples !== undefined && values.library === undefined) {
    throw invalid(
      '--examples needs --library <ref> (the library its tool ids name: a saved library, index directory or tool file)',
    )
  }
  if (values['max-examples'] !== undefined && values.examples === undefined) {
    throw invalid('--max-examples bounds an --examples file; it does not go with --suite')
  }
  if ((values.split ?? 'train') !== 'train') {
    throw invalid(
      `--split must be train: training records are never written from a test split (got "${values.split}")`,
    )
  }
  const { config, logger } = await commandConfig(
    values,
    {
      'bench.dataDir': values.data,
      'library.indexDir': values['index-dir'],
      'retrieve.k': numberFlag(values.k, 'k'),
      'retrieve.bm25.tau': numberFlag(values.tau, 'tau'),
      'plan.maxSteps': numberFlag(values['max-steps'], 'max-steps'),
      'library.maxFileBytes': maxFileBytesFlag(values['max-file-bytes']),
    },
    io,
  )
  if (values['print-config']) return printConfig(config, io)
  const validFraction = numberFlag(values['valid-fraction'], 'valid-fraction') ?? 0.05
  if (!(validFraction >= 0 && validFraction < 1)) {
    throw invalid(`--valid-fraction must be in [0, 1), got "${values['valid-fraction']}"`)
  }
  const seed = integer(values.seed, 'seed', 0) ?? 0
  const limit = integer(values.limit, 'limit', 1)
  const concurrency = integer(values.concurrency, 'concurrency', 1) ?? 8
  const maxExamples = maxExamplesFlag(values['max-examples'])

  const split = values.suite
    ? await loadTrainSplit(values.suite, config.bench.dataDir)
    : await loadExamplesFile(
        values.examples!,
        {
          reference: values.library!,
          tools: await readLibraryReferenceTools(values.library!, config.library.indexDir, {
            maxFileBytes: config.library.maxFileBytes,
            maxTools: config.library.maxTools,
          }),
        },
        { maxExamples: maxExamples ?? MAX_TRAIN_EXAMPLES },
      )
  const source = values.suite ?? basename(values.library!, extname(values.library!))
  const libraryName = values['library-name'] ?? source.replace(/[^a-zA-Z0-9._-]/g, '-')
  assertLibraryName(libraryName)
  // Made before the records (a teacher run takes hours), not when they are written.
  const dir = values.out ?? join(config.bench.outDir, 'train-data', `${kind}-${source}`)
  await makeDirectory(dir, 'training data')
  const indexed = await indexTools(libraryName, split.tools, config)
  const { retriever } = resolveRetrieval({}, indexed, { config })
  // The configured reranker (identity by default) orders selector candidates, as in serving.
  const components = createComponents(config, logger)
  const reranker = components.reranker()
  await components.ready()
  const teacher = values.teacher ? await createTeacher(values.teacher, config, logger) : undefined

  const progress = createProgress(`train-data ${kind}`, progressOutput(io))
  const data = await buildTrainData({
    kind,
    split,
    indexed,
    retriever,
    reranker,
    config,
    libraryName,
    teacher,
    validFraction,
    seed,
    limit,
    concurrency,
    onProgress: (done, total) => progress.update(done, total),
  })
  const outputs =
    kind === 'planner'
      ? ['planner']
      : kind === 'selector'
        ? ['selector']
        : ['grpo-planner', 'grpo-selector']
  const files: Record<string, number> = {}
  for (const name of outputs) {
    for (const part of ['train', 'valid']) {
      const file = `${name}.${part}.jsonl`
      files[file] = data.files.get(file)?.length ?? 0
    }
  }
  progress.done(`${data.counts.examples} examples`)
  const records = Object.values(files).reduce((sum, count) => sum + count, 0)
  // Was: exit 0 and "Training data written" over an empty set (a teacher that never answered,
  // every plan rejected), replacing the previous set.
  if (records === 0) throw noRecords(data, config.retrieve, dir)
  const teacherFailures = teacherFailed(data.counts)
  if (teacherFailures.failed > 0) {
    io.stderr(
      `Warning: ${teacherFailures.failed} of ${teacherFailures.asked} teacher calls failed (first: ${firstError(data)}); the data card counts them.\n`,
    )
  }
  const fingerprints = promptFingerprints(config.plan.maxSteps)
  const card = createDataCard({
    kind,
    source: {
      name: split.name,
      files: split.files,
      records: split.records,
      examples: split.examples.length,
      notes: split.notes,
    },
    excluded: split.exclusions,
    library: {
      name: libraryName,
      tools: indexed.library.size,
      contentHash: indexed.library.contentHash,
    },
    retrieval: {
      retriever: retriever.name,
      reranker: reranker.name,
      k: config.retrieve.k,
      tau: config.retrieve.bm25.tau,
    },
    prompts: {
      maxSteps: config.plan.maxSteps,
      plannerSha256: fingerprints.planner,
      selectorSha256: fingerprints.selector,
    },
    teacher: values.teacher ?? null,
    split: { seed, validFraction },
    counts: data.counts,
    files,
  })

  await writeFilesAtomically(
    [
      ...Object.keys(files).map(
        (file) =>
          [
            join(dir, file),
            (data.files.get(file) ?? []).map((record) => `${JSON.stringify(record)}\n`).join(''),
          ] as const,
      ),
      [join(dir, 'data-card.json'), `${JSON.stringify(card, null, 2)}\n`],
      [join(dir, 'data-card.md'), renderDataCard(card)],
    ],
    'training data',
    {
      onSwept: (removed) =>
        io.stderr(
          `Removed ${terminalLine(removed)}: left half-written by a process that is gone\n`,
        ),
    },
  )
  io.stdout(renderDataCard(card))
  io.stderr(`Training data written to ${dir}\n`)
  return 0
}

/** Teacher calls made (synonymy checks and plans) and how many of them failed. */
function teacherFailed(counts: TrainDataCounts): { asked: number; failed: number } {
  const synonym = counts.synonymFilter
  const plans = counts.plans
  const failed = (synonym?.failed ?? 0) + plans.teacherFailed
  const asked =
    (synonym?.pairsAsked ?? 0) +
    (plans.source === 'teacher' ? plans.checked + plans.teacherUnparsable + plans.teacherFailed : 0)
  return { asked, failed }
}

/** The first failed teacher call's message, without its final period. */
function firstError(data: TrainData): string {
  return (data.teacherError ?? 'unknown').replace(/\.$/, '')
}

/** Why a run made no record at all, and what to change. */
function noRecords(
  data: TrainData,
  retrieve: { k: number; bm25: { tau: number } },
  dir: string,
): ToolselError {
  const { counts } = data
  const kept = `Nothing was written (the files already in ${dir}, if any, are kept).`
  const { asked, failed } = teacherFailed(counts)
  if (failed > 0 && failed === asked) {
    return new ToolselError(
      'MODEL_CALL_FAILED',
      `No training records: ${failed} of ${asked} teacher calls failed (first: ${firstError(data)}). Check that the teacher answers: models.openai.baseUrl or TOOLSEL_OPENAI_BASE_URL, and the model name. ${kept}`,
    )
  }
  const { lexicalFilter, plans } = counts
  const why =
    lexicalFilter.examplesIn > 0 && lexicalFilter.examplesDropped === lexicalFilter.examplesIn
      ? 'the lexical filter dropped every example (no gold tool shares a content word with its instruction)'
      : plans.checked > 0 && plans.rejected === plans.checked
        ? `all ${plans.checked} target plans were rejected: some step of each claims no gold tool within k = ${retrieve.k} at tau = ${retrieve.bm25.tau} (on a small library BM25 scores stay under the default tau of 3: export and serve with a lower --tau, docs/training.md, section 3)`
        : `no example left a record (${lexicalFilter.examplesDropped} of ${lexicalFilter.examplesIn} dropped by the lexical filter, ${plans.rejected} of ${plans.checked} target plans rejected, ${counts.selectorSteps.noCandidates} selector steps without a candidate)`
  const teacherNote =
    failed > 0 ? ` ${failed} of ${asked} teacher calls failed (first: ${firstError(data)}).` : ''
  return new ToolselError('INVALID_INPUT', `No training records: ${why}.${teacherNote} ${kept}`)
}

/** `llm:openai:<model>` (or `openai:<model>`, `llm:onnx:<dir>`) → the language model. */
async function createTeacher(
  id: string,
  config: Awaited<ReturnType<typeof commandConfig>>['config'],
  logger: Awaited<ReturnType<typeof commandConfig>>['logger'],
): Promise<LanguageModel> {
  const { backend, argument } = parseComponentId(id)
  const modelId = backend === 'llm' ? argument : id
  const { onnx, openai } = config.models
  return createLanguageModel(modelId, {
    onnx,
    openai: { ...openai, apiKey: openai.apiKey || undefined },
    logger,
  })
}

function invalid(message: string): ToolselError {
  return new ToolselError('INVALID_INPUT', `${message}. See: toolsel train-data --help`)
}

function integer(value: string | undefined, flag: string, min: number): number | undefined {
  const number = numberFlag(value, flag)
  if (number === undefined) return undefined
  if (!Number.isInteger(number) || number < min) {
    throw invalid(`--${flag} expects an integer >= ${min}, got "${value}"`)
  }
  return number
}
