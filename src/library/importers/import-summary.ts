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
  }
  /** The first IMPORT_SUMMARY_LIST_LIMIT entries of each list. */
  duplicates: DuplicateResolution[]
  schemaChanges: SchemaChange[]
  invalidSchemas: InvalidSchema[]
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
  }
  for (const entry of result.duplicates) counts[entry.action] += 1
  return {
    format: result.format,
    tools: result.tools.length,
    files: result.files.slice(0, limit),
    counts,
    duplicates: result.duplicates.slice(0, limit),
    schemaChanges: result.schemaChanges.slice(0, limit),
    invalidSchemas: result.invalidSchemas.slice(0, limit),
  }
}
