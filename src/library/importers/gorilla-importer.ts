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

/** Prefix of ids when there is neither a namespace option nor a file name. */
export const GORILLA_DEFAULT_NAMESPACE = 'gorilla'

/**
 * Imports an API database. The README makes the 0-based line number the API id; line numbers
 * repeat across the three databases, so the id is `<namespace>:<line>` with the namespace
 * option, else the file name without extension, else `gorilla`: `torchhub_api:0` is the first
 * line of `torchhub_api.jsonl`. `source.line` is the 1-based line, as everywhere.
 * `api_call` is kept in `source.apiCall` because Gorilla's own evaluation matches gold by it
 * (TF Hub: 696 records but only 80 distinct calls). Tags: domain and functionality.
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
    const tags = [api.domain, ...[api.functionality ?? []].flat()].filter(
      (tag): tag is string => typeof tag === 'string' && tag.trim() !== '',
    )
    return {
      id: `${namespace}:${line === undefined ? record : line - 1}`,
      name: api.api_name,
      description: api.description ?? '',
      parameters: gorillaArgumentsSchema(api.api_arguments),
      namespace,
      tags: [...new Set(tags)],
      source,
    } satisfies Tool
  })
}
