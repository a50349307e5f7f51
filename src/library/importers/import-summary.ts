/**
 * The part of an import result a user reads (the CLI prints it, `PUT /v1/libraries/{name}`
 * returns it): the format, what each file gave, and every rename, drop and schema rewrite, with
 * long lists cut to a bound so a 50k-tool import cannot produce a 50 MB response.
 * @module
 */
import type {
  DuplicateResolution,
  ImportedFile,
  ImportFormat,
  ImportResult,
  InvalidSchema,
  SchemaChange,
} from './import-formats.ts'
import { escapedName, unshowableTools } from '../name-characters.ts'

/** Entries listed per list; the counts are always complete. */
export const IMPORT_SUMMARY_LIST_LIMIT = 200

export interface ImportSummary {
  format: ImportFormat
  tools: number
  files: ImportedFile[]
  /** How many tools were renamed / dropped as different / dropped as identical copies. */
  counts: {
    renamed: number
    dropped: number
    identical: number
    schemaChanges: number
    invalidSchemas: number
    /** Entries of `suspiciousIds`: ids and names holding a control or bidi character. */
    suspiciousIds: number
  }
  /** The first IMPORT_SUMMARY_LIST_LIMIT entries of each list. */
  duplicates: DuplicateResolution[]
  schemaChanges: SchemaChange[]
  invalidSchemas: InvalidSchema[]
  /**
   * The tools whose id or name holds a control character, a bidi override or isolate, or a lone
   * surrogate (imported as they are, with a warning; `refusedNameCharacter`): one entry per such
   * field, the tool's id escaped (`escapedName`), so a client can act on them.
   */
  suspiciousIds: SuspiciousId[]
}

export interface SuspiciousId {
  /** The tool's id, escaped: `ns.rtl\u202etxt.exe` (cut at 64 characters, "…" after). */
  id: string
  /** Its position among the library's tools (0-based). */
  tool: number
  /** The field that holds the character. */
  field: 'id' | 'name'
  /** `U+202E`. */
  codePoint: string
  /** Where in the field, in UTF-16 code units. */
  index: number
}

export function summarizeImport(
  result: ImportResult,
  limit = IMPORT_SUMMARY_LIST_LIMIT,
): ImportSummary {
  const counts = {
    renamed: 0,
    dropped: 0,
    identical: 0,
    schemaChanges: result.schemaChanges.length,
    invalidSchemas: result.invalidSchemas.length,
    suspiciousIds: 0,
  }
  for (const entry of result.duplicates) counts[entry.action] += 1
  const suspiciousIds: SuspiciousId[] = []
  for (const { tool, position, fields } of unshowableTools(result.tools)) {
    counts.suspiciousIds += fields.length
    for (const { field, codePoint, index } of fields) {
      if (suspiciousIds.length < limit) {
        suspiciousIds.push({ id: escapedName(tool.id), tool: position, field, codePoint, index })
      }
    }
  }
  return {
    format: result.format,
    tools: result.tools.length,
    files: result.files.slice(0, limit),
    counts,
    duplicates: result.duplicates.slice(0, limit),
    schemaChanges: result.schemaChanges.slice(0, limit),
    invalidSchemas: result.invalidSchemas.slice(0, limit),
    suspiciousIds,
  }
}
