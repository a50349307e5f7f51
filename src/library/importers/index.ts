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
} from './import-formats.ts'
export { detectFormat } from './detect-format.ts'
export { importToolsFromFile, importToolsFromText } from './import-tools.ts'
export { importToolsFromPath, TOOL_FILE_EXTENSIONS } from './import-tools-from-path.ts'
export { toolbenchApiId } from './toolbench-importer.ts'
export { GORILLA_DEFAULT_NAMESPACE } from './gorilla-importer.ts'
