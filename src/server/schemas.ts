/**
 * Request and response schemas of the HTTP API. The routes validate with them and
 * `/openapi.json` is generated from them, so the documentation can't drift from the code.
 * @module
 */
import { z } from 'zod'
import type { Config } from '../config/schema.ts'
import { ERROR_CODES } from '../errors.ts'
import {
  IMPORT_FORMAT_NAMES,
  ON_DUPLICATE_CHOICES,
  PROVIDER_NAME_CHOICES,
  type ImportFormat,
  type OnDuplicate,
  type ProviderNames,
} from '../library/importers/index.ts'
import { addExamplesSchema } from './add-examples-schema.ts'
import { ToolIdSchema } from '../library/tool-id-limit.ts'
import { PROVIDER_TOOL_NAME, TOOL_FORMATS } from '../library/provider-tools.ts'
import { TOOL_HINTS } from '../library/tool-hints.ts'
import { LIBRARY_NAME_PATTERN, LIBRARY_NAME_RULE } from '../library/tool-library.ts'
import { FirstSyncCountsSchema, UpstreamStateSchema } from '../mcp/gateway/upstream-state.ts'
import { pipelineOptionFields, retrieverPartsField } from '../service/request-fields.ts'

export { MAX_EXAMPLES_PER_REQUEST } from './add-examples-schema.ts'

const LIBRARY_NAME = z
  .string()
  .regex(LIBRARY_NAME_PATTERN, `a library name is ${LIBRARY_NAME_RULE}`)

const TOOL_ID = ToolIdSchema
/** Most gold tools per reward request (ToolBench G3 queries have at most 10). */
const MAX_GOLD_TOOLS = 100
/** Most completions per reward request: a GRPO batch for one prompt is typically 8-64. */
export const MAX_COMPLETIONS = 1024
/** Longest completion scored, in characters (a plan after a long thinking block fits). */
export const MAX_COMPLETION_CHARS = 32_000
/**
 * Most characters of all completions of one reward request: bounds the CPU of one request
 * (parsing, scoring and answering 4 M characters is a fraction of a second).
 */
export const MAX_COMPLETIONS_TOTAL_CHARS = 4_000_000
const COMPLETIONS = z
  .array(z.string().max(MAX_COMPLETION_CHARS))
  .min(1)
  .max(MAX_COMPLETIONS)
  .refine(
    (completions) =>
      completions.reduce((sum, completion) => sum + completion.length, 0) <=
      MAX_COMPLETIONS_TOTAL_CHARS,
    {
      error: `the completions hold more than ${MAX_COMPLETIONS_TOTAL_CHARS} characters in all; send the batch in several requests`,
    },
  )

const TOOL_FORMAT = z
  .enum(TOOL_FORMATS)
  .optional()
  .describe(
    'The shape of the returned tools: toolsel (default: {id, name, description, parameters, namespace}, with an MCP tool\'s boolean behaviour hints as annotations in /v1/select-tools where its server declared some, and tags and source from the tool routes); openai (Chat Completions: {type: "function", function: {name, description, parameters}}); openai-responses (Responses API: {type: "function", name, description, parameters, strict: false}); anthropic (Messages: {name, description, input_schema}). In a provider format each tool is named by its id written as the provider allows (^[a-zA-Z0-9_-]{1,64}$: "." is "--", "-" is "-_", other characters "-" and their hex code, e.g. sms.send_sms is sms--send_sms) and the answer adds toolIds: provider name → tool id. Needs the schemas (includeSchemas true).',
  )

/** A `/v1/select-tools` body as its schema parses it (`createRequestSchemas(…).selectTools`). */
export type SelectToolsBody = z.output<ReturnType<typeof createRequestSchemas>['selectTools']>

/**
 * The common `/v1/select-tools` body checked without zod: a JSON object with `instruction` and
 * any of `library`, `k`, `includeSchemas` and `explain`, each valid. Returns what the schema's
 * parse returns for it (the same values and keys, in the same order), or undefined for every
 * other body (another field, a wrong type, a value out of range), which then goes through the
 * schema and gets its answer and error messages. On a busy server zod's parse of a select body
 * walks a few dozen schema objects whose cache lines other requests have evicted; this reads the
 * body alone. test/server/select-body-fast.test.ts checks it against the schema.
 */
export function selectToolsFastPath(
  config: Config,
): (body: unknown) => SelectToolsBody | undefined {
  const { maxInstructionChars, maxK } = config.server
  return (body) => {
    if (typeof body !== 'object' || body === null || Array.isArray(body)) return undefined
    const fields = body as Record<string, unknown>
    let count = 0
    for (const key in fields) {
      if (
        key !== 'instruction' &&
        key !== 'library' &&
        key !== 'k' &&
        key !== 'includeSchemas' &&
        key !== 'explain'
      )
        return undefined
      count += 1
    }
    if (Object.getPrototypeOf(fields) !== Object.prototype) return undefined
    const { instruction, library, k, includeSchemas, explain } = fields
    if (typeof instruction !== 'string') return undefined
    const trimmed = instruction.trim()
    if (trimmed.length < 1 || trimmed.length > maxInstructionChars) return undefined
    let seen = 1
    const parsed: Record<string, unknown> = { instruction: trimmed }
    if ('library' in fields) {
      if (typeof library !== 'string' || !LIBRARY_NAME_PATTERN.test(library)) return undefined
      parsed.library = library
      seen += 1
    }
    if ('k' in fields) {
      if (typeof k !== 'number' || !Number.isSafeInteger(k) || k < 1 || k > maxK) return undefined
      parsed.k = k
      seen += 1
    }
    if ('includeSchemas' in fields) {
      if (typeof includeSchemas !== 'boolean') return undefined
      seen += 1
    }
    parsed.includeSchemas = includeSchemas ?? true
    if ('explain' in fields) {
      if (typeof explain !== 'boolean') return undefined
      parsed.explain = explain
      seen += 1
    }
    // Every key counted was one of the five (own or not): all of them must be own and checked.
    return seen === count ? (parsed as SelectToolsBody) : undefined
  }
}

export function createRequestSchemas(config: Config) {
  const { maxInstructionChars, maxK } = config.server
  const options = pipelineOptionFields(config)
  return {
    selectTools: z
      .object({
        instruction: z
          .string()
          .trim()
          .min(1)
          .max(maxInstructionChars)
          .describe('What the agent has to do.'),
        library: LIBRARY_NAME.optional().describe(
          "Library to select from. Default: the service default (for an API key limited to libraries without it: the key's first library).",
        ),
        ...options,
        includeSchemas: z
          .boolean()
          .default(true)
          .describe("Include each selected tool's parameter schema. Default true."),
        explain: z
          .boolean()
          .optional()
          .describe(
            'Add steps[].candidates[].features: what the selector judged each candidate by (the learned selector: its probability and features). Default false.',
          ),
        toolFormat: TOOL_FORMAT,
      })
      .strict(),
    searchTools: z
      .object({
        query: z
          .string()
          .trim()
          .min(1)
          .max(maxInstructionChars)
          .describe('What the tool should do.'),
        library: LIBRARY_NAME.optional(),
        k: options.k,
        retriever: options.retriever,
      })
      .strict(),
    batchTools: z
      .object({
        ids: z
          .array(TOOL_ID)
          .min(1)
          .max(maxK * 10)
          .describe('Tool ids to load; a repeated id is answered once.'),
        toolFormat: TOOL_FORMAT,
      })
      .strict(),
    rewardsPlanner: z
      .object({
        library: LIBRARY_NAME.optional().describe(
          "Library whose retriever scores the plans. Default: the service default (for an API key limited to libraries without it: the key's first library).",
        ),
        instruction: z
          .string()
          .trim()
          .min(1)
          .max(maxInstructionChars)
          .describe(
            'The instruction the completions plan for (an empty plan means this one step).',
          ),
        gold: z
          .array(TOOL_ID)
          .min(1)
          .max(MAX_GOLD_TOOLS)
          .describe('Gold tool ids of the instruction, tool ids of the library.'),
        completions: COMPLETIONS.describe(
          'Planner model answers to score, each read as the LLM planner reads it.',
        ),
        k: options.k,
        tau: options.tau.describe(
          `Retrieval score threshold a step's candidates must pass. Default: the retriever's own (${config.retrieve.bm25.tau} for BM25).`,
        ),
        retriever: options.retriever,
        formatPenalty: z
          .number()
          .min(0)
          .max(10)
          .optional()
          .describe('Reward of an answer with no list of steps is minus this. Default 1.'),
      })
      .strict(),
    rewardsSelector: z
      .object({
        gold: TOOL_ID.nullable().describe(
          "The step's gold tool id, or null when its gold tool is not among the candidates (the answer is then none).",
        ),
        candidates: z
          .array(TOOL_ID)
          .max(maxK)
          .optional()
          .describe(
            'The candidate ids the selector was shown; answers outside them are marked invalid.',
          ),
        completions: COMPLETIONS.describe('Selector model answers to score.'),
      })
      .strict(),
    libraryParam: z.object({ library: LIBRARY_NAME }),
    toolQuery: z.object({ toolFormat: TOOL_FORMAT }).strict(),
    addExamples: addExamplesSchema(config.library.maxExamples),
    feedback: z
      .object({
        instruction: z
          .string()
          .trim()
          .min(1)
          .max(maxInstructionChars)
          .describe('The instruction the agent worked on.'),
        library: LIBRARY_NAME.optional().describe(
          'Library the tools are from. Default: the service default.',
        ),
        used: z
          .array(TOOL_ID)
          .min(1)
          .max(64)
          .describe('Ids of the tools the agent really called for it (1-64).'),
      })
      .strict(),
    putLibraryQuery: z
      .object({
        format: z
          .enum(IMPORT_FORMAT_NAMES as [ImportFormat, ...ImportFormat[]])
          .optional()
          .describe('Format of the body. Default: detected.'),
        namespace: z
          .string()
          .min(1)
          .max(100)
          .optional()
          .describe(
            'Namespace: tool ids become namespace.name (MCP bodies default to the library name).',
          ),
        onDuplicate: z
          .enum(ON_DUPLICATE_CHOICES as [OnDuplicate, ...OnDuplicate[]])
          .optional()
          .describe(
            'Two records with one id: error (default), rename (the later one becomes <id>_2; identical copies are dropped), first or last (keep one). The response lists each case.',
          ),
        providerNames: z
          .enum(PROVIDER_NAME_CHOICES as [ProviderNames, ...ProviderNames[]])
          .optional()
          .describe(
            'openai and anthropic bodies: tool names toolsel wrote in a toolFormat answer (sms--send_sms) are read back as the tool ids they were written from: decode (default; only when the body shows it is such an answer: its toolIds fit every name, or every name reads back and one holds a separator as toolsel writes it, "--", "-_" or "-3a-3a"), or keep (names as they are).',
          ),
        retriever: retrieverPartsField(config)
          .optional()
          .describe(
            `Retriever parts to build, a comma list; the first is the library's default: bm25; dense (+ dense vectors of the configured embedder: embeds every tool, 20-60 ms a tool with use-lite on one core, unchanged tools reuse the previous vectors); dense:<embedder> (dense:use-lite, dense:static:glove-100d) side by side; hybrid (+ dense + fusion) or hybrid:<part>+<part>; regex. Default ${config.retrieve.build}.`,
          ),
        examples: z
          .enum(['keep', 'drop'])
          .optional()
          .describe(
            "The library's usage examples: keep (default; tool ids the new tools lack are removed from them, examples left without a tool are dropped) or drop.",
          ),
        rebuild: z
          .enum(['true', 'false'])
          .optional()
          .describe(
            'true: build and save even when the saved index already holds this upload (the same tools, format, retriever parts, build settings and examples). Default false: such an upload changes nothing and answers unchanged: true; a change of a build setting (retrieve.bm25 k1/b/fieldWeights, retrieve.dense embedder/text/index/HNSW m) rebuilds by itself.',
          ),
      })
      .strict(),
  }
}

export type RequestSchemas = ReturnType<typeof createRequestSchemas>

/**
 * The behaviour hints of a tool imported from MCP (src/library/tool-hints.ts): the four boolean
 * ToolAnnotations, as the tool's server declared them; no text.
 */
export const ToolHintsSchema = z
  .object(
    Object.fromEntries(TOOL_HINTS.map((hint) => [hint, z.boolean().optional()])) as Record<
      (typeof TOOL_HINTS)[number],
      z.ZodOptional<z.ZodBoolean>
    >,
  )
  .describe(
    `MCP tools only, when their server declared some: its behaviour hints (MCP ToolAnnotations: ${TOOL_HINTS.join(', ')}), as that server claims them. Hints, not checked by toolsel: don't trust them further than you trust the tool's server. Its title and other keys are not passed on.`,
  )

const ToolSchema = z.object({
  id: z.string(),
  name: z.string(),
  description: z.string(),
  parameters: z.record(z.string(), z.unknown()).optional(),
  namespace: z.string().optional(),
  annotations: ToolHintsSchema.optional().describe(
    `With the parameters only (includeSchemas): the hints an MCP tool's server declared about it (${TOOL_HINTS.join(', ')}), unchecked claims of that server; absent when it declared none.`,
  ),
})

const PARAMETERS = z.record(z.string(), z.unknown())
const PROVIDER_TOOL_NAME_SCHEMA = z.string().regex(PROVIDER_TOOL_NAME)

/** The tools in each `toolFormat` (src/library/provider-tools.ts): toolsel's own is `ToolSchema`. */
const PROVIDER_TOOL_SCHEMAS = {
  openai: z.object({
    type: z.literal('function'),
    function: z.object({
      name: PROVIDER_TOOL_NAME_SCHEMA,
      description: z.string(),
      parameters: PARAMETERS,
    }),
  }),
  'openai-responses': z.object({
    type: z.literal('function'),
    name: PROVIDER_TOOL_NAME_SCHEMA,
    description: z.string(),
    parameters: PARAMETERS,
    strict: z.literal(false),
  }),
  anthropic: z.object({
    name: PROVIDER_TOOL_NAME_SCHEMA,
    description: z.string(),
    input_schema: PARAMETERS,
  }),
}

const TOOL_IDS = z
  .record(z.string(), z.string())
  .describe(
    "With a toolFormat other than toolsel: provider tool name → tool id, for each returned tool (map a model's tool call back to the id).",
  )

/** The tools of an answer: toolsel's shape (`tool`) or a provider's (`toolFormat`). */
function toolsIn<T extends z.ZodType>(tool: T) {
  return z.union([
    z.array(tool),
    z.array(PROVIDER_TOOL_SCHEMAS.openai),
    z.array(PROVIDER_TOOL_SCHEMAS['openai-responses']),
    z.array(PROVIDER_TOOL_SCHEMAS.anthropic),
  ])
}

/** A tool as `GET …/tools/:id` and `POST …/tools/batch` serve it: with its tags and provenance. */
// Served as kept: an MCP tool's annotations are in its source, whole (not `annotations`).
const ServedToolSchema = ToolSchema.omit({ annotations: true }).extend({
  parameters: z.record(z.string(), z.unknown()),
  tags: z.array(z.string()).optional(),
  source: z
    .object({
      format: z.string(),
      file: z.string().optional(),
      record: z.number().optional(),
      line: z.number().optional(),
    })
    .catchall(z.unknown())
    .optional()
    .describe(
      "Where the tool was imported from: the importer format, the file's base name, the record (0-based) and, for JSON Lines and CSV, the line; some formats keep more (category, url…).",
    ),
})

const ComponentRegistrySchema = z.object({
  default: z.string(),
  ids: z.array(z.string()).describe('Ids usable as they are, e.g. rule, top1, bm25.'),
  prefixes: z
    .array(z.string())
    .describe('Prefixes that take an argument, e.g. llm: (llm:openai:<model>).'),
})

const UsageSchema = z.object({ inputTokens: z.number(), outputTokens: z.number() })

/**
 * What `/readyz` reports, ready (200) or starting (503). With API keys configured: nothing
 * without a key, and for a key only what it may use.
 */
export const READINESS_REPORT = z.object({
  libraries: z
    .array(z.string())
    .optional()
    .describe(
      'Loaded libraries. With API keys configured: absent without a key; a key limited to libraries sees those.',
    ),
  failedIndexes: z
    .array(z.object({ name: z.string(), error: z.string() }))
    .optional()
    .describe(
      'Saved indexes skipped at start-up, or committed later by another process, that failed to load, with their error, naming no path of the host: <file> for the tool file it was built from, <library.indexDir>/<name> for its directory (the previous version of one stays served; it is tried again on a backoff, server.indexRetryLimit times (10 by default, about 6 minutes), and a try, a later commit or a restart that loads it removes it; with --workers N the failures of every worker, the same from each). With API keys configured: absent without a key.',
    ),
  upstreams: z
    .array(UpstreamStateSchema)
    .optional()
    .describe(
      "Gateway mode: each upstream server's status. With API keys configured: absent without a key; a key limited to servers or tags sees those.",
    ),
  degraded: z
    .array(
      z.object({
        stage: z.enum(['planner', 'selector']),
        component: z.string(),
        fallback: z.string().optional(),
        code: z.string(),
        status: z.number().int().optional(),
        message: z.string(),
        since: z.string(),
        lastFailure: z.string(),
        failures: z.number().int(),
      }),
    )
    .optional()
    .describe(
      "Model-backed planners and selectors (`openai:`, `onnx:`) whose latest use failed and fell back, e.g. an endpoint that refuses the API key (`status` 401) or is unreachable (`code` UPSTREAM_UNAVAILABLE, no `status`): the fallback answers meanwhile, so the service stays ready; `since` and `failures` count from when it last worked, and a use without a fallback removes it; an `openai:` model of a fallback list whose endpoint failed (UPSTREAM_UNAVAILABLE, 401/403) is removed too once the `openai:` model it stood in for answers again (it is asked no more), while one whose model failed (404, an unusable answer) stays until it works, `lastFailure` saying how old its failure is. The start-up check of an `openai:` endpoint adds those it finds unreachable or not listing the model (`failures` 1, the check's message), also a configured fallback that is such a model (no `fallback`: nothing stands in for it; it is removed once it answers). Present only when some is. With --workers N, every worker's selections (the same list from each). With API keys configured: absent without a key; only the admin key reads each `message`; a read key, limited or not, gets it replaced by a note (it may quote another caller's request).",
    ),
  firstSync: FirstSyncCountsSchema.optional().describe(
    'Gateway mode: where the first sync stands, over the upstreams the caller may see, as `upstreams` lists them (the counts the 503 message gives): e.g. 120 done, 16 connecting, 364 waiting of 500; once every first attempt is over, done equals upstreams. With API keys configured: absent without a key or for a key that may not use the gateway library (their 503 message gives no counts either); a key limited to servers or tags counts those.',
  ),
})

/** A library as `GET /v1/libraries/:library` describes it; a PUT's answer adds what the import did. */
const LIBRARY_INFO = z.object({
  name: z.string(),
  toolCount: z.number(),
  contentHash: z.string(),
  createdAt: z.string(),
  retrievers: z.array(z.string()),
  defaultRetriever: z.string(),
  persisted: z.boolean(),
  isDefault: z.boolean(),
  examples: z.object({ count: z.number(), version: z.number(), cap: z.number() }),
})

export const RESPONSE_SCHEMAS = {
  /** A selected tool in toolsel's shape (the default `toolFormat`). */
  selectedTool: ToolSchema,
  servedTool: ServedToolSchema,
  providerTools: PROVIDER_TOOL_SCHEMAS,
  selectTools: z.object({
    tools: toolsIn(ToolSchema),
    toolIds: TOOL_IDS.optional(),
    steps: z.array(
      z.object({
        text: z.string(),
        candidates: z.array(
          z.object({
            id: z.string(),
            name: z.string(),
            score: z.number(),
            features: z.record(z.string(), z.number()).optional(),
          }),
        ),
        selected: z.string().nullable(),
        whole: z.boolean().optional(),
      }),
    ),
    timings: z.object({
      planMs: z.number(),
      retrieveMs: z.number(),
      rerankMs: z.number(),
      selectMs: z.number(),
      totalMs: z.number(),
    }),
    components: z.object({
      library: z.string(),
      planner: z.string(),
      retriever: z.string(),
      reranker: z.string(),
      selector: z.string(),
      fallbacks: z
        .array(
          z
            .object({
              stage: z.enum(['planner', 'selector']),
              from: z.string(),
              to: z.string(),
              code: z.string(),
              message: z.string(),
              status: z.number().int().optional(),
              raw: z.string().optional(),
            })
            .describe('A planner or selector call that failed, and what stood in for it.'),
        )
        .describe(
          "Each planner or selector call that failed and what stood in for it (`from`, `to`): the error's `code` and `message`, the model endpoint's HTTP `status` when it answered (401/403: the API key was refused), and `raw`, the model's output that could not be used, or the endpoint's answer when the call itself failed (an HTTP error, a body that is no chat completion; the API key in it as ***), planner and selector alike. Counted by /metrics toolsel_model_fallbacks_total; /readyz `degraded` lists the components whose latest use fell back.",
        ),
    }),
    usage: UsageSchema,
    examples: z
      .object({
        similarity: z.number(),
        applied: z.boolean(),
        decided: z.literal(true).optional(),
      })
      .optional()
      .describe(
        "Present when the library has usage examples: the closest example's similarity (0-1) and whether the nearest examples' tool set was taken as the answer; `decided` when the example-aware decision chose the answer among the selector's set, the nearest examples' set and the best-scored tools of both.",
      ),
    warnings: z
      .array(z.string())
      .optional()
      .describe(
        'Present when the answer left some schemas out: it holds at most 8 MiB of tools with their schemas (the first selected tool always). Past that a tool comes without parameters (toolFormat toolsel) or not at all (a provider format); the warning names those tools: fetch each one with GET /v1/libraries/{library}/tools/{id}.',
      ),
  }),
  searchTools: z.object({
    library: z.string(),
    retriever: z.string(),
    results: z.array(
      z.object({ id: z.string(), name: z.string(), description: z.string(), score: z.number() }),
    ),
  }),
  rewardsPlanner: z.object({
    library: z.string(),
    retriever: z.string(),
    k: z.number(),
    rewards: z.array(
      z.object({
        reward: z.number(),
        precision: z.number(),
        recall: z.number(),
        f1: z.number(),
        format: z.enum(['ok', 'unparsable']),
        steps: z.array(z.string()),
        claims: z.array(z.object({ id: z.string(), rank: z.number() }).nullable()),
      }),
    ),
  }),
  rewardsSelector: z.object({
    rewards: z.array(
      z.object({
        reward: z.union([z.literal(0), z.literal(1)]),
        answer: z.string(),
        valid: z.boolean(),
      }),
    ),
  }),
  tool: z.object({
    tool: z.union([
      ServedToolSchema,
      PROVIDER_TOOL_SCHEMAS.openai,
      PROVIDER_TOOL_SCHEMAS['openai-responses'],
      PROVIDER_TOOL_SCHEMAS.anthropic,
    ]),
    toolIds: TOOL_IDS.optional(),
  }),
  tools: z.object({ tools: toolsIn(ServedToolSchema), toolIds: TOOL_IDS.optional() }),
  library: LIBRARY_INFO,
  addExamples: z.object({
    library: z.string(),
    added: z.number().describe('New examples added.'),
    duplicates: z.number().describe('Examples the library already had (skipped).'),
    evicted: z.number().describe('Oldest examples dropped to stay within library.maxExamples.'),
    examples: z.number().describe('Examples the library holds now.'),
    version: z.number().describe("The examples' version (+1 on every change)."),
  }),
  snapshot: z.object({
    name: z
      .string()
      .describe(
        'Its directory name under library.snapshotDir: toolsel snapshot restore <snapshotDir>/<name>.',
      ),
    format: z.literal('toolsel-snapshot'),
    version: z.number(),
    createdAt: z.string(),
    libraries: z.array(
      z.object({
        name: z.string(),
        tools: z.number(),
        contentHash: z.string(),
        indexCreatedAt: z.string(),
        retrievers: z.array(z.string()),
        examples: z.number(),
      }),
    ),
  }),
  components: z.object({
    planners: ComponentRegistrySchema,
    retrievers: ComponentRegistrySchema,
    rerankers: ComponentRegistrySchema,
    selectors: ComponentRegistrySchema,
  }),
  putLibrary: LIBRARY_INFO.extend({
    examples: LIBRARY_INFO.shape.examples.describe(
      "The library's usage examples after the PUT (examples=keep or drop).",
    ),
    unchanged: z
      .boolean()
      .describe(
        "true when the saved index already held this upload (the same tools, format, retriever parts and examples): nothing was built or written, createdAt is the index's (rebuild=true builds anyway).",
      ),
    warnings: z
      .array(z.string())
      .describe(
        'What did not stop the import, and what the build left out: a rebuild that does not make all the retriever parts of the index it replaces says so (`Library "x" lost the retriever parts …`, naming them and the `?retriever=` list that builds them again). At most 20 warnings of each kind (the same words but for names, numbers, record and operation; 20 kinds, later ones counted as "other") are listed; when some are left out, a last line says how many and `warningCounts` counts them.',
      ),
    warningCounts: z
      .object({
        total: z.number().describe('How many warnings the import gave.'),
        kinds: z.array(
          z.object({
            kind: z.string().describe('The warning with names as "…" and numbers as N.'),
            count: z.number(),
            listed: z.number().describe('How many of them `warnings` lists.'),
          }),
        ),
      })
      .optional()
      .describe("Present when `warnings` left some out: the total and each kind's count."),
    import: z
      .object({
        format: z.string(),
        tools: z.number(),
        files: z.array(z.object({ file: z.string(), format: z.string(), tools: z.number() })),
        counts: z.object({
          renamed: z.number(),
          dropped: z.number(),
          identical: z.number(),
          schemaChanges: z.number(),
          invalidSchemas: z.number(),
          suspiciousIds: z
            .number()
            .describe('Ids and names holding a control or bidi character (all of them).'),
        }),
        duplicates: z.array(
          z.object({
            id: z.string(),
            action: z.enum(['renamed', 'dropped', 'identical']),
            to: z.string().optional(),
            file: z.string(),
            record: z.number().optional(),
          }),
        ),
        schemaChanges: z.array(z.object({ id: z.string(), changes: z.array(z.string()) })),
        invalidSchemas: z.array(z.object({ id: z.string(), errors: z.array(z.string()) })),
        suspiciousIds: z
          .array(
            z.object({
              id: z
                .string()
                .describe(
                  'The tool\'s id escaped as JSON string text (`ns.rtl\\u202etxt.exe`: control, bidi and zero-width characters as \\u escapes, never raw), cut at 64 characters with "…" after.',
                ),
              tool: z.number().describe("The tool's position in the library (0-based)."),
              field: z.enum(['id', 'name']).describe('The field that holds the character.'),
              codePoint: z.string().describe('The first such character, as `U+202E`.'),
              index: z.number().describe('Where it is in the field, in UTF-16 code units.'),
            }),
          )
          .describe(
            'Tools whose id or name holds a control character, a bidi embedding, override or isolate, or a lone surrogate: imported as they are (a warning says so), listed here so a client can rename them at the source. One entry per such field.',
          ),
      })
      .describe(
        'What the import did: renamed/dropped duplicates, parameters rewritten into JSON Schema, and ids or names that could display as another tool (lists cut at 200 entries; counts complete).',
      ),
  }),
  readyz: z.object({ status: z.literal('ready'), ...READINESS_REPORT.shape }),
  /** `/readyz` 503: the error and the report so far (libraries loaded yet, upstream states). */
  readyzStarting: z.object({
    error: z
      .object({ code: z.literal('NOT_READY'), message: z.string() })
      .describe('What the service is still waiting for.'),
    status: z.literal('starting'),
    ...READINESS_REPORT.shape,
  }),
  error: z.object({
    error: z.object({
      code: z.enum(Object.keys(ERROR_CODES) as [keyof typeof ERROR_CODES]),
      message: z.string(),
    }),
  }),
}
