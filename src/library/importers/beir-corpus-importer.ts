/**
 * BEIR-format corpora (`corpus.jsonl`, `{_id, title, text, metadata}`), in particular COLT's
 * ToolBench-G3 and ToolLens corpora, whose `text` packs a whole ToolBench API into one line:
 * `category_name:…, tool_name:…, api_name:…, api_description:…, required_params: [...],
 * optional_params: [...], return_schema: …` (shared/data/README.md sections 1.3 and 2; the
 * ToolLens corpus uses exactly the same layout).
 * @module
 */
import { z } from 'zod'
import { EMPTY_PARAMETERS, type Tool } from '../tool.ts'
import { assertUniqueIds, duplicateToolId } from './assert-unique-ids.ts'
import {
  addWarning,
  assertTagRoom,
  importFailed,
  recordLabel,
  sourceOf,
  type ImportContext,
} from './import-context.ts'
import { describeValue, nonEmptyString, parseRecord } from './parse-record.ts'
import { toolbenchApiId } from './toolbench-importer.ts'
import {
  ToolbenchParameterSchema,
  toolbenchParameters,
  warnParameterProblems,
} from './toolbench-parameters.ts'
import { shownName } from '../name-characters.ts'

const DocumentSchema = z.looseObject({
  _id: z.union([nonEmptyString(), z.number().transform(String)]),
  title: z.string().nullish(),
  text: z.string(),
  metadata: z.unknown().optional(),
})

type CorpusDocument = z.output<typeof DocumentSchema>

/** The README's regex for the head of the text. */
const HEAD = /^category_name:(.*?), tool_name:(.*?), api_name:(.*?), api_description:/s
const TAIL = /^(.*?), required_params: (\[.*?\]), optional_params: (\[.*?\]), return_schema: (.*)$/s
const ParameterListSchema = z.array(ToolbenchParameterSchema)

/**
 * Imports a corpus. When the first document's text starts with `category_name:` it is read as
 * ToolBench APIs: id `tool_name::api_name`, so that it matches the toolbench importer. Name-
 * identified APIs must be merged (README 1.3: the G3 corpus has 4 names twice), so a repeated
 * name keeps its first description and gains the other `_id`; each merge is a warning.
 * Any other corpus becomes one tool per document with id `_id`. Either way every tool carries
 * `source.corpusIds`, the `_id`s it stands for, which is how qrels map onto tool ids.
 */
export function importBeirCorpus(parsed: unknown, context: ImportContext): Tool[] {
  if (!Array.isArray(parsed)) {
    throw importFailed(context, {
      message: `expected JSON Lines (or a JSON array) of corpus documents, got ${describeValue(parsed)}`,
    })
  }
  const documents = parsed.map((item, record) => parseRecord(DocumentSchema, item, context, record))
  if (!documents[0]?.text.startsWith('category_name:')) {
    const tools = documents.map((document, record) => plainDocumentTool(document, record, context))
    assertUniqueIds(tools, context)
    return tools
  }
  if (context.namespace !== undefined) {
    addWarning(
      context,
      undefined,
      'namespace option ignored: ToolBench APIs are namespaced by tool_name',
    )
  }
  const tools = new Map<string, Tool>()
  const recordOfId = new Map<string, number>()
  for (const [record, document] of documents.entries()) {
    const earlier = recordOfId.get(document._id)
    if (earlier !== undefined) throw duplicateToolId(context, document._id, earlier, record)
    recordOfId.set(document._id, record)
    const tool = toolbenchDocumentTool(document, record, context)
    const known = tools.get(tool.id)
    if (known) mergeDocument(known, tool, record, context)
    else tools.set(tool.id, tool)
  }
  return [...tools.values()]
}

/** Folds a document whose name was seen before into the first tool of that name. */
function mergeDocument(known: Tool, duplicate: Tool, record: number, context: ImportContext) {
  const corpusIds = known.source?.corpusIds as string[]
  const [corpusId] = duplicate.source?.corpusIds as string[]
  corpusIds.push(corpusId)
  const category = duplicate.tags?.[0]
  if (category !== undefined && !known.tags?.includes(category)) {
    assertTagRoom(context, record, known)
    known.tags?.push(category)
  }
  const first = recordLabel(context, Number(known.source?.record))
  addWarning(
    context,
    record,
    `_id ${shownName(corpusId)} repeats ${shownName(known.id)} of ${first}; merged into one tool, keeping the first description`,
  )
}

function toolbenchDocumentTool(document: CorpusDocument, record: number, context: ImportContext) {
  const head = HEAD.exec(document.text)
  const tail = head && TAIL.exec(document.text.slice(head[0].length))
  if (!head || !tail) {
    throw importFailed(context, {
      record,
      field: 'text',
      message: `expected "category_name:…, tool_name:…, api_name:…, api_description:…, required_params: […], optional_params: […], return_schema: …", got ${describeValue(document.text)}`,
    })
  }
  const [, category, toolName, apiName] = head
  const [, description, requiredText, optionalText, returnSchemaText] = tail
  const list = (text: string, field: string) =>
    parseRecord(
      ParameterListSchema,
      parseJsonField(text, field, record, context),
      context,
      record,
      field,
    )
  const parameters = toolbenchParameters(
    list(requiredText, 'text.required_params'),
    list(optionalText, 'text.optional_params'),
  )
  const id = toolbenchApiId(toolName, apiName)
  warnParameterProblems(context, record, id, parameters)
  const source = sourceOf(context, 'beir-corpus', record)
  source.corpusIds = [document._id]
  if (category !== '') source.category = category
  const returnSchema = parseReturnSchema(returnSchemaText)
  if (returnSchema !== '') source.returnSchema = returnSchema
  return {
    id,
    name: apiName,
    description,
    parameters: parameters.schema,
    namespace: toolName,
    tags: category === '' ? [] : [category],
    source,
  } satisfies Tool
}

function plainDocumentTool(document: CorpusDocument, record: number, context: ImportContext) {
  const source = sourceOf(context, 'beir-corpus', record)
  source.corpusIds = [document._id]
  const tool: Tool = {
    id: document._id,
    name: document.title || document._id,
    description: document.text,
    parameters: { ...EMPTY_PARAMETERS },
    source,
  }
  if (context.namespace !== undefined) tool.namespace = context.namespace
  return tool
}

function parseJsonField(text: string, field: string, record: number, context: ImportContext) {
  try {
    return JSON.parse(text) as unknown
  } catch (error) {
    throw importFailed(context, {
      record,
      field,
      message: `expected a JSON array of parameters, got ${describeValue(text)}`,
      cause: error,
    })
  }
}

/** The return schema is informational only, so text that is not JSON is kept as text. */
function parseReturnSchema(text: string): unknown {
  try {
    return JSON.parse(text) as unknown
  } catch {
    return text
  }
}
