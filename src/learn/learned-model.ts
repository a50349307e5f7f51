/**
 * The learned selector's artifact: a logistic model over the library-independent candidate
 * features, the count decision rule, and a data card saying what it was trained on. It is a small
 * JSON file; the default one ships in the package (`src/learn/default-model.json`), trained only
 * on the training splits under `../shared/data` (`toolsel train` reproduces it).
 * @module
 */
import { isAbsolute } from 'node:path'
import { z } from 'zod'
import { ToolselError } from '../errors.ts'
import { FEATURE_NAMES, featureNames } from './candidate-features.ts'
import { DENSE_FEATURE_NAMES } from './dense-features.ts'
import { COUNT_FEATURE_NAMES, MAX_COUNT } from './count-model.ts'
import { formatJson } from './format-json.ts'
import { fileProblem, readFileUpTo, readFileUpToSync } from '../read-text-file.ts'
import { assertTrustedPath } from '../trusted-path.ts'
import {
  EXAMPLE_DECISION_FEATURES,
  EXAMPLE_DENSE_FEATURES,
  EXAMPLE_SET_FEATURES,
} from '../examples/example-decision.ts'
import { DEFAULT_MODEL_PATH } from './default-model-path.ts'

export const MODEL_FORMAT = 'toolsel-learned-selector'
/**
 * 2: the candidate model may have boosted trees (`trees`) on top of the linear one. 3: the model
 * may have a dense-free `acceptance` model (round 18). A file is written with the lowest version
 * that holds what it has (`requiredFormatVersion`): without trees or acceptance as version 1, which
 * every version reads the same; a newer file is refused with a clear error by versions that do
 * not know its parts (instead of read without them, which would change its answers).
 */
export const MODEL_FORMAT_VERSION = 3

/** The lowest format version that holds `model`'s parts (see MODEL_FORMAT_VERSION). */
export function requiredFormatVersion(
  model: Pick<LearnedModel, 'trees' | 'acceptance' | 'examples'>,
): 1 | 2 | 3 {
  if (model.acceptance) return 3
  if (model.trees || model.examples?.trees || model.examples?.setTrees) return 2
  return 1
}

export { DEFAULT_MODEL_PATH } from './default-model-path.ts'

/** The encoder a learned dense map applies to: the process' static GloVe vectors (dense-encoder.ts). */
export const DENSE_MAP_BASE = 'static:glove-100d'

const SplitMetricsSchema = z.object({
  name: z.string(),
  queries: z.number().int(),
  exactMatch: z.number(),
})

const LogisticSchema = z.object({
  mean: z.array(z.number()),
  scale: z.array(z.number()),
  weights: z.array(z.number()),
  bias: z.number(),
})

const TreeSchema = z.object({
  split: z.array(z.number().int().min(-1)),
  threshold: z.array(z.number()),
  leaf: z.array(z.number()),
})

const EnsembleSchema = z.object({
  depth: z.number().int().min(1).max(8),
  trees: z.array(TreeSchema).max(2000),
})

const LearnedModelSchema = z.object({
  format: z.literal(MODEL_FORMAT),
  formatVersion: z.union([z.literal(1), z.literal(2), z.literal(MODEL_FORMAT_VERSION)]),
  features: z.array(z.string()),
  model: LogisticSchema,
  /** Boosted trees whose log-odds add to the linear model's (learn/boosted-trees.ts); version 2. */
  trees: EnsembleSchema.optional(),
  rule: z.object({
    threshold: z.number().min(0).max(1),
    floor: z.number().min(0).max(1),
    extra: z.number().int().min(0).max(8),
    stepFloor: z.number().min(0).max(1).optional(),
  }),
  /**
   * The learned dense space of the dense features (learn/dense-map.ts, `toolsel train
   * --learned-dense`): maps for request and tool vectors of the `base` encoder; absent: the dense
   * features (if any) are plain cosines of the base vectors.
   */
  denseMap: z
    .object({
      /** The encoder the maps apply to, by name: only `static:glove-100d` is applied. */
      base: z.string().max(300),
      /**
       * The base vectors by content (dense-space-probe.ts) when the map was trained; absent in
       * models trained before round 35 (applied as before).
       */
      baseProbe: z.string().max(100).optional(),
      /** The base vectors' dimension (100): the maps are size × size. */
      size: z.number().int().positive().max(1024),
      query: z.array(z.number()),
      tool: z.array(z.number()),
    })
    .refine(
      (map) => map.query.length === map.size * map.size && map.tool.length === map.size * map.size,
      { message: 'query and tool must each hold size × size values' },
    )
    .refine((map) => map.base !== DENSE_MAP_BASE || map.size === 100, {
      message: 'size must be 100, the dimension of the static:glove-100d vectors',
    })
    .optional(),
  /**
   * How the selector computes a one-clause plan's clause dense features: from the whole
   * instruction's vector (`instruction`; the clause is the instruction without its context), or
   * (absent, as every model before round 17) from the clause's own. The training rows keep the
   * clause's own vector (bench/one-clause-dev.ts compares both on the held-out folds).
   */
  oneClauseDense: z.literal('instruction').optional(),
  /**
   * Dense features without a `denseMap` (`toolsel train --dense`): the static GloVe vectors they
   * were computed over, by content (dense-space-probe.ts, as `denseMap.baseProbe`); the selector
   * leaves the dense features neutral over other vectors (dense-encoder.ts). Absent in models
   * trained before round 36 (the vectors at hand are used, as before) and beside a `denseMap`.
   */
  denseProbe: z.string().max(100).optional(),
  /**
   * A dense-free candidate model (logistic, over the first `weights.length` features, none of them
   * dense; `toolsel train --dense-free-acceptance`): whether a clause that got no tool gets its
   * most probable candidate by the rule's `stepFloor` is this model's probability's call, which
   * candidate that is stays the main model's. Absent (every model before round 18): the main
   * model's probability decides both.
   */
  acceptance: LogisticSchema.optional(),
  /** The learned count (count-model.ts); absent in models trained before it: the rule alone. */
  count: z
    .object({
      features: z.array(z.string()),
      atLeast: z
        .array(LogisticSchema)
        .min(1)
        .max(MAX_COUNT - 1),
      threshold: z.number().min(0).max(1),
      extendThreshold: z.number().min(0).max(1).optional(),
    })
    .optional(),
  /**
   * The example-aware decision (examples/example-decision.ts); absent in models trained without
   * it: a library's usage examples then act through the memory's set proposal and the expansion
   * index alone.
   */
  examples: z
    .object({
      features: z.array(z.string()),
      model: LogisticSchema,
      setFeatures: z.array(z.string()),
      setModel: LogisticSchema,
      /** Boosted trees on each model's log-odds (example-decision.ts); version 2. */
      trees: EnsembleSchema.optional(),
      setTrees: EnsembleSchema.optional(),
      /**
       * Usage examples a library needs before the decision is used: below it, on held-out
       * training queries, the decision lost to the memory's answer.
       */
      minExamples: z.number().int().min(0),
      /**
       * Held-out exact match, % per training source and example regime (`examples`: the
       * library's usage examples): the pipeline with the memory, and with the decision.
       */
      heldOut: z.array(
        z.object({
          name: z.string(),
          queries: z.number().int(),
          examples: z.number().int(),
          memory: z.number(),
          decision: z.number(),
        }),
      ),
    })
    .optional(),
  /** Candidates retrieved per list (whole instruction and each clause). */
  k: z.number().int().positive(),
  dataCard: z.object({
    trainedAt: z.string(),
    seed: z.number().int(),
    trainedOn: z.array(z.string()),
    notes: z.array(z.string()),
    rows: z.number().int(),
    heldOut: z.object({
      description: z.string(),
      splits: z.array(SplitMetricsSchema),
    }),
  }),
})

export type LearnedModel = z.infer<typeof LearnedModelSchema>

/**
 * A model as `toolsel train` writes it: the repository's prettier layout of its JSON (numbers
 * filled 100 columns wide, see format-json.ts), so a retrained model is byte for byte the
 * committed file when nothing changed. The text parses back to the same model
 * (`parseLearnedModel`).
 */
export function formatLearnedModel(model: LearnedModel): string {
  return formatJson(model)
}

/** Parses and checks a model file's text; `source` names it in errors. */
export function parseLearnedModel(text: string, source: string): LearnedModel {
  let json: unknown
  try {
    json = JSON.parse(text)
  } catch (error) {
    throw new ToolselError(
      'INVALID_INPUT',
      `Learned model ${source} is not JSON: ${(error as Error).message}`,
      {
        cause: error,
      },
    )
  }
  const parsed = LearnedModelSchema.safeParse(json)
  if (!parsed.success) {
    throw new ToolselError(
      'INVALID_INPUT',
      `Learned model ${source} is not a ${MODEL_FORMAT} v1 to v${MODEL_FORMAT_VERSION} file: ${parsed.error.issues[0]?.path.join('.')} ${parsed.error.issues[0]?.message}. Retrain it with \`toolsel train\`.`,
    )
  }
  const model = parsed.data
  const expected = featureNames(usesDenseFeatures(model))
  if (
    model.features.join(',') !== expected.join(',') ||
    model.model.weights.length !== expected.length
  ) {
    throw new ToolselError(
      'INVALID_INPUT',
      `Learned model ${source} was trained on features [${model.features.join(', ')}], this version computes [${featureNames(false).join(', ')}] (and with \`train --dense\` [${DENSE_FEATURE_NAMES.join(', ')}] after them). Retrain it with \`toolsel train\`.`,
    )
  }
  if (model.oneClauseDense !== undefined && !usesDenseFeatures(model)) {
    throw new ToolselError(
      'INVALID_INPUT',
      `Learned model ${source} sets oneClauseDense but has no dense features. Retrain it with \`toolsel train --learned-dense\`.`,
    )
  }
  const acceptance = model.acceptance
  if (acceptance !== undefined && model.formatVersion < 3) {
    throw new ToolselError(
      'INVALID_INPUT',
      `Learned model ${source} has an acceptance model in a version-${model.formatVersion} file (versions before 3 ignore it and answer differently). Retrain it with \`toolsel train --learned-dense --dense-free-acceptance\`.`,
    )
  }
  if (
    acceptance !== undefined &&
    (!usesDenseFeatures(model) ||
      acceptance.weights.length !== FEATURE_NAMES.length ||
      acceptance.mean.length !== FEATURE_NAMES.length ||
      acceptance.scale.length !== FEATURE_NAMES.length)
  ) {
    throw new ToolselError(
      'INVALID_INPUT',
      `Learned model ${source} has an acceptance model that is not over the ${FEATURE_NAMES.length} features without the dense ones, or no dense features. Retrain it with \`toolsel train --learned-dense --dense-free-acceptance\`.`,
    )
  }
  if (model.denseMap !== undefined && model.denseMap.base !== DENSE_MAP_BASE) {
    throw new ToolselError(
      'INVALID_INPUT',
      `Learned model ${source} has a dense map over ${JSON.stringify(model.denseMap.base.slice(0, 100))} vectors; this version applies dense maps to ${DENSE_MAP_BASE} vectors only. Retrain it with \`toolsel train --learned-dense\`.`,
    )
  }
  if (model.denseMap !== undefined && !usesDenseFeatures(model)) {
    throw new ToolselError(
      'INVALID_INPUT',
      `Learned model ${source} has a dense map but no dense features. Retrain it with \`toolsel train --learned-dense\`.`,
    )
  }
  checkTrees(
    model.trees,
    model.features.length,
    model.formatVersion,
    source,
    'candidate-model trees',
  )
  const count = model.count
  if (
    count !== undefined &&
    (count.features.join(',') !== COUNT_FEATURE_NAMES.join(',') ||
      count.atLeast.some((atLeast) => atLeast.weights.length !== COUNT_FEATURE_NAMES.length))
  ) {
    throw new ToolselError(
      'INVALID_INPUT',
      `Learned model ${source} has a count model over [${count.features.join(', ')}], this version computes [${COUNT_FEATURE_NAMES.join(', ')}]. Retrain it with \`toolsel train\`.`,
    )
  }
  const examples = model.examples
  // Without or with the libraries' own dense spaces (`toolsel train --example-maps`).
  const decisionFeatures = [
    EXAMPLE_DECISION_FEATURES,
    [...EXAMPLE_DECISION_FEATURES, ...EXAMPLE_DENSE_FEATURES],
  ]
  if (
    examples !== undefined &&
    (!decisionFeatures.some((names) => names.join(',') === examples.features.join(',')) ||
      examples.model.weights.length !== examples.features.length ||
      examples.setFeatures.join(',') !== EXAMPLE_SET_FEATURES.join(',') ||
      examples.setModel.weights.length !== EXAMPLE_SET_FEATURES.length)
  ) {
    throw new ToolselError(
      'INVALID_INPUT',
      `Learned model ${source} has an example-aware decision over [${examples.features.join(', ')}] and [${examples.setFeatures.join(', ')}], this version computes [${EXAMPLE_DECISION_FEATURES.join(', ')}] (optionally followed by [${EXAMPLE_DENSE_FEATURES.join(', ')}]) and [${EXAMPLE_SET_FEATURES.join(', ')}]. Retrain it with \`toolsel train\`.`,
    )
  }
  if (examples !== undefined) {
    const version = model.formatVersion
    checkTrees(examples.trees, examples.features.length, version, source, 'example-decision trees')
    checkTrees(examples.setTrees, EXAMPLE_SET_FEATURES.length, version, source, 'example-set trees')
  }
  return model
}

/**
 * Refuses boosted trees in a version-1 file, or a tree whose shape does not match its depth or
 * that splits on a feature index at or past `features`.
 */
function checkTrees(
  ensemble: z.infer<typeof EnsembleSchema> | undefined,
  features: number,
  formatVersion: number,
  source: string,
  what: string,
): void {
  if (ensemble === undefined) return
  const inner = (1 << ensemble.depth) - 1
  const bad = ensemble.trees.findIndex(
    (tree) =>
      tree.split.length !== inner ||
      tree.threshold.length !== inner ||
      tree.leaf.length !== inner + 1 ||
      tree.split.some((feature) => feature >= features),
  )
  if (bad >= 0 || formatVersion < 2) {
    throw new ToolselError(
      'INVALID_INPUT',
      `Learned model ${source} has ${formatVersion < 2 ? `${what} in a version-1 file` : `a malformed tree ${bad} in its ${what} (a tree of depth ${ensemble.depth} has ${inner} splits and thresholds, each a feature index below ${features}, and ${inner + 1} leaves)`}. Retrain it with \`toolsel train\`.`,
    )
  }
}

/** Whether the model was trained with the dense features (`toolsel train --dense`). */
export function usesDenseFeatures(model: Pick<LearnedModel, 'features'>): boolean {
  return model.features.includes(DENSE_FEATURE_NAMES[0])
}

/**
 * Largest learned model file read: 128 MiB. The largest model the format takes (2,000 trees of
 * depth 8 and a 1,024 × 1,024 dense map, each number at most 24 characters) is about 90 MB; the
 * shipped one is 0.6 MB. A larger file, or anything but a regular file (a FIFO, a device), is not
 * read.
 */
export const MAX_LEARNED_MODEL_BYTES = 128 * 1024 * 1024

export async function readLearnedModel(file: string): Promise<LearnedModel> {
  assertTrustedPath(file, 'Learned model', 'MODEL_LOAD_FAILED')
  let text: string
  try {
    text = await readFileUpTo(file, MAX_LEARNED_MODEL_BYTES, { regularOnly: true })
  } catch (error) {
    throw cannotReadModel(file, error)
  }
  return parseLearnedModel(text, file)
}

/**
 * Reads a model file synchronously (component factories are synchronous): a regular file of at
 * most MAX_LEARNED_MODEL_BYTES.
 */
export function readLearnedModelSync(file: string): LearnedModel {
  assertTrustedPath(file, 'Learned model', 'MODEL_LOAD_FAILED')
  let text: string
  try {
    text = readFileUpToSync(file, MAX_LEARNED_MODEL_BYTES)
  } catch (error) {
    throw cannotReadModel(file, error)
  }
  return parseLearnedModel(text, file)
}

/** INVALID_INPUT `Cannot read learned model "<file>": <why>`, for both readers. */
function cannotReadModel(file: string, error: unknown): ToolselError {
  return new ToolselError(
    'INVALID_INPUT',
    // A relative path is read from the current directory (a config file's own relative paths
    // were made relative to it when the file was read): the message says which directory.
    `Cannot read learned model "${file}"${isAbsolute(file) ? '' : ` (read from the current directory, ${process.cwd()})`}: ${fileProblem(error)}. Write one with \`toolsel train --out ${file}\`.`,
    { cause: error, details: { file } },
  )
}

let defaultModel: LearnedModel | undefined

/** The shipped default model (read once: `readShippedModel`). */
export function loadDefaultModel(): LearnedModel {
  defaultModel ??= readShippedModel(DEFAULT_MODEL_PATH)
  return defaultModel
}

/**
 * A model shipped in the package (`file`: DEFAULT_MODEL_PATH), under the rule of every trusted
 * load (`assertTrustedPath`): installed by root (`npm install -g`, a Docker image) or by this
 * user (a checkout) it is read as it is; another uid's package (installed by a deploy user, run
 * by a service user) is read with a warning; one any user can write (it, or a directory above
 * it, as a `chmod -R 777` install) is refused, MODEL_LOAD_FAILED: its trees decide every answer.
 */
export function readShippedModel(file: string): LearnedModel {
  assertTrustedPath(file, 'Shipped default model', 'MODEL_LOAD_FAILED')
  return parseLearnedModel(readFileUpToSync(file, MAX_LEARNED_MODEL_BYTES), file)
}
