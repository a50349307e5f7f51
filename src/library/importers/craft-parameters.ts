/**
 * A CRAFT tool's parameters as JSON Schema, from its Python signature and docstring.
 * @module
 */
import type { JsonSchema } from '../tool.ts'
import { docstringArguments } from './docstring-arguments.ts'
import type { PythonFunction } from './parse-python-functions.ts'
import { pythonLiteral } from './python-literal.ts'
import { pythonTypeSchema } from './python-type-schema.ts'

/**
 * One property per parameter, named as in the signature. The type comes from the annotation,
 * else the docstring's `name (type)`; the description from the docstring. A parameter without a
 * default is required; a literal default is kept. `*args` is an array; `**kwargs` opens the
 * schema to extra properties.
 */
export function craftParameters(definition: PythonFunction): JsonSchema {
  const documented = docstringArguments(definition.docstring ?? '')
  const properties = new Map<string, JsonSchema>()
  const required: string[] = []
  let open = false
  for (const parameter of definition.parameters) {
    if (parameter.variadic === 'keyword') {
      open = true
      continue
    }
    const documentation = documented.get(parameter.name)
    const schema: JsonSchema =
      parameter.variadic === 'positional'
        ? { type: 'array' }
        : { ...(pythonTypeSchema(parameter.annotation) ?? pythonTypeSchema(documentation?.type)) }
    if (documentation?.description) schema.description = documentation.description
    const defaultValue =
      parameter.defaultText === undefined ? undefined : pythonLiteral(parameter.defaultText)
    if (defaultValue !== undefined && defaultValue !== null) schema.default = defaultValue
    if (parameter.defaultText === undefined && parameter.variadic === undefined) {
      required.push(parameter.name)
    }
    properties.set(parameter.name, schema)
  }
  const schema: JsonSchema = { type: 'object', properties: Object.fromEntries(properties) }
  if (required.length > 0) schema.required = required
  if (open) schema.additionalProperties = true
  return schema
}
