/**
 * The contract of the importers: the formats they read, their options and their result.
 * @module
 */
import type { Tool } from '../tool.ts'

/** Every tool file format the importers read. */
export type ImportFormat =
  'canonical' | 'openai' | 'mcp' | 'toolbench' | 'beir-corpus' | 'gorilla' | 'craft' | 'taskbench'

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
  openai: {
    description: 'OpenAI tools: [{type: "function", function: {name, description, parameters}}]',
    fileKinds: ['JSON array', 'JSON {"tools": [...]}', 'JSON Lines'],
    ids: 'name, or namespace.name when a namespace is given',
  },
  mcp: {
    description:
      'MCP tools/list result {tools: [{name, inputSchema, ...}]} or its JSON-RPC response',
    fileKinds: ['JSON {"tools": [...]}', 'JSON {"jsonrpc", "result": {"tools": [...]}}'],
    ids: 'namespace.name; namespace from the option, else the file name without extension',
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
  /** What each file contributed. */
  files: ImportedFile[]
}
