/**
 * TaskBench tool graphs (`tool_desc.json`, also `graph_desc.json`, whose `links` are ignored):
 * `{nodes: [{id, desc, "input-type": [...], "output-type": [...]}]}` (the huggingface and
 * multimedia domains), or `{nodes: [{id, desc, parameters: [{name, type, desc}]}]}` (the
 * dailylifeapis domain's APIs). See shared/data/README.md section 5.
 * @module
 */
import { z } from 'zod'
import type { JsonSchema, Tool } from '../tool.ts'
import { sourceOf, type ImportContext } from './import-context.ts'
import { nonEmptyString, parseRecord } from './parse-record.ts'

const NodeSchema = z.looseObject({
  id: nonEmptyString(),
  desc: z.string().nullish(),
  'input-type': z.array(z.string()).default([]),
  'output-type': z.array(z.string()).default([]),
  parameters: z
    .array(
      z.looseObject({
        name: nonEmptyString(),
        type: z.string().nullish(),
        desc: z.string().nullish(),
      }),
    )
    .optional(),
})

type ParameterList = NonNullable<z.infer<typeof NodeSchema>['parameters']>

/** JSON Schema types a dailylifeapis parameter type names; any other type is passed as text. */
const JSON_TYPES: Readonly<Record<string, string>> = {
  string: 'string',
  str: 'string',
  text: 'string',
  number: 'number',
  float: 'number',
  integer: 'integer',
  int: 'integer',
  boolean: 'boolean',
  bool: 'boolean',
  array: 'array',
  list: 'array',
  object: 'object',
  dict: 'object',
}

const DocumentSchema = z.looseObject({ nodes: z.array(z.unknown()) })

/** How each TaskBench data type is passed: a file name, text, or a `<node-j>` output reference. */
const TYPE_DESCRIPTIONS: Readonly<Record<string, string>> = {
  text: 'The input text.',
  url: 'The input URL.',
  image: 'The input image: a file name or URL.',
  audio: 'The input audio: a file name or URL.',
  video: 'The input video: a file name or URL.',
}

/**
 * Imports the nodes. id = name = node id, because TaskBench's gold `task` strings are node ids.
 * Parameters: a node's own `parameters` list when it has one (each a required property with its
 * type and description); otherwise one required string property per input type, named after the
 * type; a type that occurs twice (Question Answering takes two texts) is numbered `text_1`,
 * `text_2`. Types are lower-cased (multimedia has one `Image`). Tags are `input:<type>` and
 * `output:<type>`, since a bare `image` tag could not tell what the tool takes from what it makes.
 */
export function importTaskbench(parsed: unknown, context: ImportContext): Tool[] {
  const { nodes } = parseRecord(DocumentSchema, parsed, context, undefined)
  return nodes.map((item, record) => {
    const node = parseRecord(NodeSchema, item, context, record)
    const inputs = node['input-type'].map((type) => type.toLowerCase())
    const outputs = node['output-type'].map((type) => type.toLowerCase())
    const source = sourceOf(context, 'taskbench', record)
    source.inputTypes = node['input-type']
    source.outputTypes = node['output-type']
    const tool: Tool = {
      id: node.id,
      name: node.id,
      description: node.desc ?? '',
      parameters: node.parameters ? listedParameters(node.parameters) : inputParameters(inputs),
      tags: [
        ...new Set([
          ...inputs.map((type) => `input:${type}`),
          ...outputs.map((type) => `output:${type}`),
        ]),
      ],
      source,
    }
    if (context.namespace !== undefined) tool.namespace = context.namespace
    return tool
  })
}

function inputParameters(types: readonly string[]): JsonSchema {
  const properties = new Map<string, JsonSchema>()
  const seen = new Map<string, number>()
  for (const type of types) {
    const occurrence = (seen.get(type) ?? 0) + 1
    seen.set(type, occurrence)
    const repeated = types.filter((other) => other === type).length > 1
    const description = Object.hasOwn(TYPE_DESCRIPTIONS, type)
      ? TYPE_DESCRIPTIONS[type]
      : `The input ${type}.`
    properties.set(repeated ? `${type}_${occurrence}` : type, { type: 'string', description })
  }
  const schema: JsonSchema = { type: 'object', properties: Object.fromEntries(properties) }
  if (properties.size > 0) schema.required = [...properties.keys()]
  return schema
}

/** A dailylifeapis node's `[{name, type, desc}]` as JSON Schema; a repeated name keeps the first. */
function listedParameters(list: ParameterList): JsonSchema {
  const properties = new Map<string, JsonSchema>()
  for (const parameter of list) {
    if (properties.has(parameter.name)) continue
    const type = JSON_TYPES[(parameter.type ?? '').trim().toLowerCase()] ?? 'string'
    const property: JsonSchema = { type }
    if (parameter.desc) property.description = parameter.desc
    properties.set(parameter.name, property)
  }
  const schema: JsonSchema = { type: 'object', properties: Object.fromEntries(properties) }
  if (properties.size > 0) schema.required = [...properties.keys()]
  return schema
}
