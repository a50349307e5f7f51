/**
 * Tool importers: one file per format, detection, and the import functions.
 * @module
 */
export {
  IMPORT_FORMATS,
  IMPORT_FORMAT_NAMES,
  type FormatInfo,
  type ImportedFile,
  type ImportFormat,
  type ImportOptions,
  type ImportResult,
  type DuplicateResolution,
  type InvalidSchema,
  type OnDuplicate,
  type SchemaChange,
  ON_DUPLICATE_CHOICES,
  PROVIDER_NAME_CHOICES,
  type ProviderNames,
} from './import-formats.ts'
export { detectFormat } from './detect-format.ts'
export { importTools, importToolsFromFile, importToolsFromText } from './import-tools.ts'
export { importToolsFromPath, TOOL_FILE_EXTENSIONS } from './import-tools-from-path.ts'
export { toolbenchApiId } from './toolbench-importer.ts'
export { GORILLA_DEFAULT_NAMESPACE } from './gorilla-importer.ts'
export { summarizeImport, IMPORT_SUMMARY_LIST_LIMIT, type ImportSummary } from './import-summary.ts'
