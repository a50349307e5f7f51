/**
 * The text a tool is embedded as. Embedding models read natural language, so identifiers are
 * split into words (`get_weatherForecast` → `get weather Forecast`) and parameters are listed
 * with their descriptions.
 * @module
 */
import { localTarget } from '../../library/schema/local-ref.ts'
import type { JsonSchema, Tool } from '../../library/tool.ts'

/** Parameters listed at most; long schemas would push the description out of the model's window. */
const MAX_PARAMETERS = 12

/**
 * `namespace / name words: description` then `Parameters: name (description), …`. Models truncate
 * at their own token limit (128-512 tokens), so the most telling parts come first.
 */
export function toolEmbeddingText(tool: Tool): string {
  const name = splitIdentifier(tool.name)
  const head = tool.namespace ? `${splitIdentifier(tool.namespace)} / ${name}` : name
  const description = tool.description.replace(/\s+/g, ' ').trim()
  const lines = [description === '' ? head : `${head}: ${description}`]
  const parameters = describeParameters(tool.parameters)
  if (parameters !== '') lines.push(`Parameters: ${parameters}`)
  return lines.join('\n')
}

/** Splits snake_case, kebab-case, dotted and camelCase identifiers into space-separated words. */
export function splitIdentifier(identifier: string): string {
  return identifier
    .replace(/([\p{Ll}\p{N}])(\p{Lu})/gu, '$1 $2')
    .replace(/(\p{Lu})(\p{Lu}\p{Ll})/gu, '$1 $2')
    .replace(/[_\-.:/]+/g, ' ')
    .replace(/\s+/g, ' ')
    .trim()
}

function describeParameters(schema: JsonSchema): string {
  const properties = schema.properties
  if (properties === null || typeof properties !== 'object') return ''
  return Object.entries(properties as Record<string, unknown>)
    .slice(0, MAX_PARAMETERS)
    .map(([name, value]) => {
      const description = parameterDescription(value, schema)
      const words = splitIdentifier(name)
      return typeof description === 'string' && description.trim() !== ''
        ? `${words} (${description.replace(/\s+/g, ' ').trim()})`
        : words
    })
    .join(', ')
}

/**
 * A parameter's own description, else, for a local `$ref` (`#/$defs/Pet`: an OpenAPI import that
 * keeps shared schemas as definitions, pydantic), that of the schema it points at.
 */
function parameterDescription(value: unknown, root: JsonSchema): unknown {
  if (value === null || typeof value !== 'object') return undefined
  const { description, $ref } = value as { description?: unknown; $ref?: unknown }
  if (typeof description === 'string' && description.trim() !== '') return description
  if (typeof $ref !== 'string') return description
  const target = localTarget(root, $ref)
  return target !== null && typeof target === 'object'
    ? (target as { description?: unknown }).description
    : undefined
}
