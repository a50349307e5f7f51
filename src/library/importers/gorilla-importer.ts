/**
 * Gorilla APIBench API databases (`data/api/{huggingface,tensorflowhub,torchhub}_api.jsonl`):
 * one API per line. See shared/data/README.md section 3.
 * @module
 */
import { z } from 'zod'
import type { Tool } from '../tool.ts'
import { gorillaArgumentsSchema } from './gorilla-arguments-schema.ts'
import {
  importFailed,
  namespaceOrFileStem,
  sourceOf,
  type ImportContext,
} from './import-context.ts'
import { describeValue, nonEmptyString, parseRecord } from './parse-record.ts'

const ApiSchema = z.looseObject({
  domain: z.string().nullish(),
  framework: z.string().nullish(),
  functionality: z.union([z.string(), z.array(z.string())]).nullish(),
  api_name: nonEmptyString(),
  api_call: nonEmptyString(),
  api_arguments: z.unknown(),
  python_environment_requirements: z.unknown(),
  example_code: z.unknown(),
  performance: z.unknown(),
  description: z.string().nullish(),
})

/**
 * `api_name` spellings that name the variable of a model handle, not a model: TF Hub has 181
 * records named `model_id` (and `Model ID`, `module_name`) whose model is only in the api_call.
 */
const PLACEHOLDER_NAMES = new Set([
  'model_id',
  'model_name',
  'model_handle',
  'model_url',
  'module_id',
  'module_name',
  'module_handle',
  'module_url',
  'handle',
])

const normalizedName = (name: string) =>
  name
    .trim()
    .toLowerCase()
    .replace(/[^a-z0-9]+/g, '_')

/** The model path of a tfhub.dev handle in an api_call, without publisher and version. */
const TFHUB_HANDLE = /tfhub\.dev\/[^/'"\s]+\/([^'"\s)]+)/

/**
 * A tool's name: `api_name`, unless it is a placeholder and the api_call loads a tfhub.dev
 * handle; then the handle's model path in the spelling of the other TF Hub names
 * (`…/google/imagenet/inception_v3/classification/5` → `imagenet_inception_v3_classification`,
 * like `imagenet_mobilenet_v2_100_224_classification`). Other names are kept as they are.
 */
function gorillaToolName(apiName: string, apiCall: string): string {
  if (!PLACEHOLDER_NAMES.has(normalizedName(apiName))) return apiName
  const handle = TFHUB_HANDLE.exec(apiCall)
  if (handle === null) return apiName
  const segments = handle[1].split('/').filter((segment) => segment !== '')
  while (segments.length > 1 && /^\d+$/.test(segments[segments.length - 1])) segments.pop()
  const derived = segments.join('_')
  return derived === '' || PLACEHOLDER_NAMES.has(normalizedName(derived)) ? apiName : derived
}

/** Prefix of ids when there is neither a namespace option nor a file name. */
export const GORILLA_DEFAULT_NAMESPACE = 'gorilla'

/**
 * Imports an API database. The README makes the 0-based line number the API id; line numbers
 * repeat across the three databases, so the id is `<namespace>:<line>` with the namespace
 * option, else the file name without extension, else `gorilla`: `torchhub_api:0` is the first
 * line of `torchhub_api.jsonl`. `source.line` is the 1-based line, as everywhere.
 * `api_call` is kept in `source.apiCall` because Gorilla's own evaluation matches gold by it
 * (TF Hub: 696 records but only 80 distinct calls). Tags: domain and functionality. A placeholder
 * `api_name` (`model_id`) is replaced by the model of the api_call's tfhub.dev handle
 * (`gorillaToolName`); `source.apiName` keeps the original then.
 */
export function importGorilla(parsed: unknown, context: ImportContext): Tool[] {
  if (!Array.isArray(parsed)) {
    throw importFailed(context, {
      message: `expected JSON Lines (or a JSON array) of Gorilla API records, got ${describeValue(parsed)}`,
    })
  }
  const namespace = namespaceOrFileStem(context) ?? GORILLA_DEFAULT_NAMESPACE
  return parsed.map((item, record) => {
    const api = parseRecord(ApiSchema, item, context, record)
    const line = context.recordLines?.[record]
    const source = sourceOf(context, 'gorilla', record)
    const kept = {
      apiCall: api.api_call,
      domain: api.domain,
      framework: api.framework,
      functionality: api.functionality,
      apiArguments: api.api_arguments,
      pythonEnvironmentRequirements: api.python_environment_requirements,
      exampleCode: api.example_code,
      performance: api.performance,
    }
    for (const [key, value] of Object.entries(kept)) {
      if (value !== undefined && value !== null) source[key] = value
    }
    const name = gorillaToolName(api.api_name, api.api_call)
    if (name !== api.api_name) source.apiName = api.api_name
    const tags = [api.domain, ...[api.functionality ?? []].flat()].filter(
      (tag): tag is string => typeof tag === 'string' && tag.trim() !== '',
    )
    return {
      id: `${namespace}:${line === undefined ? record : line - 1}`,
      name,
      description: api.description ?? '',
      parameters: gorillaArgumentsSchema(api.api_arguments),
      namespace,
      tags: [...new Set(tags)],
      source,
    } satisfies Tool
  })
}
