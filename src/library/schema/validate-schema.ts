/**
 * Checks a tool's `parameters` against the JSON Schema meta-schema with ajv: draft 2020-12 when
 * the schema says so in `$schema` (2019-09 too), otherwise draft-07, the dialect function-calling
 * APIs document. Unknown keywords (`example`, `x-…`) are allowed, as in JSON Schema itself.
 * Draft-07 names its definitions `definitions`; `$defs` (2019-09 on, what OpenAPI imports and
 * pydantic write) is unknown to its meta-schema, which would let anything through there, so a
 * draft-07 check reads a root `$defs` as `definitions`.
 * @module
 */
import { createRequire } from 'node:module'
import type { Ajv, ErrorObject } from 'ajv'
import type { Ajv2019 } from 'ajv/dist/2019.js'
import type { Ajv2020 } from 'ajv/dist/2020.js'
import type { JsonSchema } from '../tool.ts'

// ajv (CommonJS, about 100 files) is required on first use, not imported: every CLI command
// loads this module, and only one that imports a tool file checks a schema (bench/README.md,
// "CLI start cost", round 47).
const require = createRequire(import.meta.url)
const OPTIONS = { strict: false, validateFormats: false, allErrors: true } as const
// Created on first use: each compiles its meta-schema, which takes a noticeable moment.
let draft07: Ajv | undefined
let draft2019: Ajv2019 | undefined
let draft2020: Ajv2020 | undefined

/** ajv's messages for a schema that is not valid JSON Schema (empty: valid). At most 5. */
export function schemaErrors(schema: JsonSchema): string[] {
  const dialect = typeof schema.$schema === 'string' ? schema.$schema : ''
  let valid: boolean
  let errors: ErrorObject[] | null | undefined
  let renamedDefs = false
  if (dialect.includes('2020-12')) {
    draft2020 ??= new (require('ajv/dist/2020.js') as typeof import('ajv/dist/2020.js')).Ajv2020(
      OPTIONS,
    )
    valid = draft2020.validateSchema(schema) as boolean
    errors = draft2020.errors
  } else if (dialect.includes('2019-09')) {
    draft2019 ??= new (require('ajv/dist/2019.js') as typeof import('ajv/dist/2019.js')).Ajv2019(
      OPTIONS,
    )
    valid = draft2019.validateSchema(schema) as boolean
    errors = draft2019.errors
  } else {
    // draft-04/06 and unnamed dialects are checked as draft-07 (ajv has no other meta-schema loaded).
    const { $schema: _dialect, ...rest } = schema
    if (rest.$defs !== undefined && rest.definitions === undefined) {
      rest.definitions = rest.$defs
      delete rest.$defs
      renamedDefs = true
    }
    draft07 ??= new (require('ajv') as typeof import('ajv')).Ajv(OPTIONS)
    valid = draft07.validateSchema(rest) as boolean
    errors = draft07.errors
  }
  if (valid) return []
  return (errors ?? []).slice(0, 5).map((error) => {
    const path = renamedDefs
      ? error.instancePath.replace(/^\/definitions(?=\/|$)/, '/$defs')
      : error.instancePath
    return `${path || '/'} ${error.message ?? 'is invalid'}`
  })
}
