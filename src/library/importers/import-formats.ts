/**
 * The contract of the importers: the formats they read, their options and their result.
 * @module
 */
import type { Tool } from '../tool.ts'

/** Every tool file format the importers read. */
export type ImportFormat =
  | 'canonical'
  | 'functions'
  | 'openai'
  | 'anthropic'
  | 'mcp'
  | 'openapi'
  | 'postman'
  | 'toolbench'
  | 'beir-corpus'
  | 'gorilla'
  | 'craft'
  | 'taskbench'

/** What `--help` and UNKNOWN_FORMAT messages say about a format. */
export interface FormatInfo {
  /** One line on what the format is and where it comes from, for `--help` and error messages. */
  description: string
  /** The file shapes the format accepts, e.g. `JSON array`, `JSON Lines`, `CSV`. */
  fileKinds: readonly string[]
  /** How the importer builds tool ids, so users can predict them. */
  ids: string
}

/** What each format is; the order is the order shown in help and error messages. */
export const IMPORT_FORMATS: Readonly<Record<ImportFormat, FormatInfo>> = Object.freeze({
  canonical: {
    description: 'toolsel tools: {id, name, description?, parameters?, namespace?, tags?, source?}',
    fileKinds: ['JSON array', 'JSON {"tools": [...]}', 'JSON Lines'],
    ids: 'the id field',
  },
  functions: {
    description:
      'plain function declarations [{name, description, parameters}] (BFCL records {id, question, function: [...]}, Gemini {functionDeclarations: [...]})',
    fileKinds: [
      'JSON array',
      'JSON {"functions" | "functionDeclarations" | "tools": [...]}',
      'JSON Lines',
    ],
    ids: 'name, or namespace.name when a namespace is given',
  },
  openai: {
    description:
      'OpenAI tools: [{type: "function", function: {name, description, parameters}}] or the flat Responses API [{type: "function", name, ...}]',
    fileKinds: ['JSON array', 'JSON {"tools": [...]}', 'JSON Lines'],
    ids: 'name, or namespace.name when a namespace is given',
  },
  anthropic: {
    description: 'Anthropic tools: [{name, description, input_schema, input_examples?}]',
    fileKinds: ['JSON array', 'JSON {"tools": [...]}', 'JSON Lines'],
    ids: 'name, or namespace.name when a namespace is given',
  },
  mcp: {
    description:
      'MCP tools/list result {tools: [{name, inputSchema, ...}]} or its JSON-RPC response',
    fileKinds: ['JSON {"tools": [...]}', 'JSON {"jsonrpc", "result": {"tools": [...]}}'],
    ids: 'namespace.name; namespace from the option, else the file name without extension',
  },
  openapi: {
    description:
      'OpenAPI 3.x or Swagger 2.0 spec: one tool per operation (local $refs resolved, remote ones never fetched)',
    fileKinds: ['YAML', 'JSON'],
    ids: 'operationId, else method_path (get_pets_petId); namespace.id when a namespace is given',
  },
  postman: {
    description:
      'Postman collection v2.0/v2.1 {info, item: [...]}: one tool per request (folders nest)',
    fileKinds: ['JSON'],
    ids: 'folder.request in snake case (orders.list_orders); namespace.id when a namespace is given',
  },
  toolbench: {
    description: 'ToolBench query records {query_id, query, api_list, "relevant APIs"}: the APIs',
    fileKinds: ['JSON array', 'JSON Lines'],
    ids: 'tool_name::api_name (the same API in several records is merged)',
  },
  'beir-corpus': {
    description: 'BEIR/COLT corpus.jsonl {_id, title, text, metadata} of ToolBench G3 or ToolLens',
    fileKinds: ['JSON Lines', 'JSON array'],
    ids: 'tool_name::api_name parsed from text (duplicates merged, all _ids in source.corpusIds)',
  },
  gorilla: {
    description: 'Gorilla API database {domain, framework, api_name, api_call, api_arguments, ...}',
    fileKinds: ['JSON Lines', 'JSON array'],
    ids: '<namespace>:<0-based line>; namespace from the option, else the file name, else "gorilla"',
  },
  craft: {
    description: 'CRAFT toolset CSV (5_deduplicated_tool(s).csv) with tool_id and tool columns',
    fileKinds: ['CSV'],
    ids: 'the tool_id column',
  },
  taskbench: {
    description:
      'TaskBench tool_desc.json / graph_desc.json {nodes: [{id, desc, input-type, ...}]}',
    fileKinds: ['JSON {"nodes": [...]}'],
    ids: 'the node id',
  },
})

/** Most tools (and tool file records) one import takes by default (`ImportOptions.maxTools`). */
export const DEFAULT_MAX_TOOLS = 2_000_000

/** Every format name, in the order of `IMPORT_FORMATS`. */
export const IMPORT_FORMAT_NAMES = Object.keys(IMPORT_FORMATS) as ImportFormat[]

/** How to import; every field is optional. */
export interface ImportOptions {
  /** The format to read. Default: detected from the file name and the content (`detectFormat`). */
  format?: ImportFormat
  /**
   * The server or provider the tools belong to. openai and mcp prefix ids with it
   * (`namespace.name`), gorilla uses it as the id prefix, canonical/craft/taskbench set it on tools
   * that have none, toolbench and beir-corpus ignore it (their namespace is the ToolBench tool).
   * Default: none, except mcp and gorilla, which use the file name without extension.
   */
  namespace?: string
  /** The file name, used in messages, for format detection and as the default namespace. */
  fileName?: string
  /**
   * Text without a file name (an upload): the name to use as one, with the extension of what
   * the text looks like (`uploadFileName`: `<name>.yaml` for an OpenAPI YAML spec, `.csv` for a
   * CRAFT CSV, else `.json`). Ignored when `fileName` is given.
   */
  uploadName?: string
  /**
   * What the input is called in messages and each tool's `source.file`, when that is not the
   * file name (`toolsel index -`: `stdin`); detection and the default namespace still go by
   * `fileName` or `uploadName`. Default: the file name.
   */
  inputName?: string
  /** What to do when two records produce one id (see `OnDuplicate`). Default `error`. */
  onDuplicate?: OnDuplicate
  /**
   * A tool file (`importToolsFromFile`, each file of a directory) larger than this many bytes is
   * refused after reading that many, not read whole (a 20 GB file, `/dev/zero`). Default
   * `DEFAULT_MAX_TOOL_FILE_BYTES` (256 MiB).
   */
  maxFileBytes?: number
  /**
   * Most tools the import may produce, and most records the file may hold (several formats merge
   * records into fewer tools): past it, IMPORT_FAILED naming the limit. JSON Lines are refused at
   * the record past it without parsing the rest; a JSON document after its parse, before its
   * records are imported. Default `DEFAULT_MAX_TOOLS` (2,000,000; `library.maxTools`).
   */
  maxTools?: number
  /**
   * Read a tool file only when it is a regular file (links followed): a device or pipe is refused
   * unread (`toolsel bench`: a FIFO in a benchmark data directory hung the run). Default: a pipe
   * is read too (`toolsel index <(curl …)`).
   */
  regularOnly?: boolean
  /**
   * openai and anthropic: tool names toolsel wrote (`toolFormat`: `sms--send_sms`) are read back
   * as the ids they were written from (`decode`, the default; only when the file shows it is such
   * an export, see provider-names.ts) or kept as they are (`keep`).
   */
  providerNames?: ProviderNames
}

/**
 * What to do when two records produce one tool id:
 * - `error` (default): fail with DUPLICATE_TOOL_ID naming both records;
 * - `rename`: keep both; the later one becomes `<id>_2` (`_3`…), its name too; records that are
 *   identical to an earlier one (same name, description, parameters) are dropped instead;
 * - `first` / `last`: keep the first / the last definition, drop the others.
 * Every rename and drop is listed in the import result.
 */
export type OnDuplicate = 'error' | 'rename' | 'first' | 'last'

export const ON_DUPLICATE_CHOICES: readonly OnDuplicate[] = ['error', 'rename', 'first', 'last']

/**
 * What the openai and anthropic importers do with tool names toolsel wrote (`sms--send_sms`):
 * `decode` (default) reads them back as ids when the file shows it is toolsel's export
 * (provider-names.ts), `keep` keeps every name as it is.
 */
export type ProviderNames = 'decode' | 'keep'

export const PROVIDER_NAME_CHOICES: readonly ProviderNames[] = ['decode', 'keep']

/** A tool renamed or dropped because its id was taken (`onDuplicate`). */
export interface DuplicateResolution {
  /** The id the record produced. */
  id: string
  /** `renamed`: now `to`; `dropped`: a different definition was kept; `identical`: same as the one kept. */
  action: 'renamed' | 'dropped' | 'identical'
  /** The new id, for `renamed`. */
  to?: string
  /** The file and 0-based record of the renamed or dropped definition. */
  file: string
  record?: number
}

/** What schema normalisation changed in one tool's parameters (`normalizeToolSchema`). */
export interface SchemaChange {
  id: string
  /** One line a change, e.g. `properties.limit.type: "int" → "integer"`. */
  changes: string[]
}

/** A tool whose parameters are still not a valid JSON Schema after normalisation (ajv). */
export interface InvalidSchema {
  id: string
  /** ajv's messages, e.g. `/properties/a/required must be array`. */
  errors: string[]
}

/** Per-file summary of an import (one entry for a file, one per file for a directory). */
export interface ImportedFile {
  /** The file as given (directory imports: the directory joined with the file name). */
  file: string
  /** The format the file was read as. */
  format: ImportFormat
  /** How many tools the file produced. */
  tools: number
}

/** What an import produced. */
export interface ImportResult {
  /** The tools, in file order; ids are unique. */
  tools: Tool[]
  /** The format read. For a directory of mixed formats: the first file's (see `files`). */
  format: ImportFormat
  /** Things a user may want to know that did not stop the import (merges, skipped entries…). */
  warnings: string[]
  /**
   * The warnings that only count what `duplicates`, `schemaChanges` and `invalidSchemas` list
   * (a subset of `warnings`): a reader that prints those lists (`toolsel index`) skips them.
   */
  summarized: string[]
  /** What each file contributed. */
  files: ImportedFile[]
  /** Tools renamed or dropped for a taken id (`onDuplicate` other than `error`). */
  duplicates: DuplicateResolution[]
  /** Parameters rewritten into JSON Schema (`"dict"` → `"object"`…), per tool. */
  schemaChanges: SchemaChange[]
  /** Tools whose parameters ajv still rejects; they are imported and reported here. */
  invalidSchemas: InvalidSchema[]
}
