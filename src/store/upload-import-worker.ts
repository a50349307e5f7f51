/**
 * What an upload's import worker thread runs (started by `upload-import.ts`): the import of the
 * body (`importTools`: JSON.parse and the importer's per-record checks) and what a save makes of
 * every tool (the tools file's JSON lines, the content hash, the tools file's sha256, the
 * `tools.idx` bytes), with the very functions the in-process path runs, so the files come out
 * byte for byte the same. What goes back is two buffers over SharedArrayBuffers (shared, not
 * copied; see upload-import.ts for why not transferred) and a small summary: the main thread
 * adopts them without parsing or hashing a tool.
 * @module
 */
import { createHash } from 'node:crypto'
import { isMainThread, parentPort, workerData } from 'node:worker_threads'
import { ToolselError } from '../errors.ts'
import {
  importTools,
  summarizeImport,
  type ImportOptions,
  type ImportSummary,
} from '../library/importers/index.ts'
import { ToolLibrary } from '../library/tool-library.ts'
import { toolsIndexFileBytes } from './tools-index-file.ts'

/** What the worker is given (its `workerData`). */
export interface UploadImportTask {
  task: 'toolsel-upload-import'
  name: string
  /** The body: UTF-8 bytes (decoded here as a request's `text()` would) or a string. */
  text: string | Uint8Array
  options: ImportOptions
}

/** What the import of an upload makes: everything the save and the served library need. */
export interface PreparedUpload {
  /** The tools file's bytes (JSON lines, one tool per line). */
  toolLines: Buffer
  /** `tools.idx` for them (`toolsIndexFileBytes`). */
  toolsIndex: Buffer
  toolsFileHash: string
  contentHash: string
  warnings: string[]
  summary: ImportSummary
}

/** The error a worker sends back: a ToolselError's code, message and details, or any other's. */
export type WorkerError =
  | { code: ToolselError['code']; message: string; details: Record<string, unknown> }
  | { code?: undefined; message: string }

/** Imports `text` as the library `name` and makes its save's tool files (see the module comment). */
export async function prepareUpload(
  name: string,
  text: string,
  options: ImportOptions,
): Promise<PreparedUpload> {
  const imported = await importTools(text, options)
  // Checks the name and that ids are unique, as the in-process path's ToolLibrary does.
  const library = new ToolLibrary(name, imported.tools)
  const toolLines = shared(library.toJsonLines())
  const toolsFileHash = createHash('sha256').update(toolLines).digest('hex')
  return {
    toolLines,
    toolsIndex: shared(toolsIndexFileBytes(library.ids, toolLines, toolsFileHash)),
    toolsFileHash,
    contentHash: library.contentHash,
    warnings: imported.warnings,
    summary: summarizeImport(imported),
  }
}

/** A copy of `bytes` in a SharedArrayBuffer of its own (the main thread gets the same memory). */
function shared(bytes: Buffer): Buffer {
  const copy = Buffer.from(new SharedArrayBuffer(bytes.length))
  bytes.copy(copy)
  return copy
}

function serialise(error: unknown): WorkerError {
  if (error instanceof ToolselError)
    return { code: error.code, message: error.message, details: error.details }
  return { message: error instanceof Error ? error.message : String(error) }
}

const task = isMainThread ? undefined : (workerData as UploadImportTask | undefined)
if (parentPort && task?.task === 'toolsel-upload-import') {
  const port = parentPort
  try {
    const { text } = task
    const prepared = await prepareUpload(
      task.name,
      typeof text === 'string' ? text : new TextDecoder().decode(text),
      task.options,
    )
    port.postMessage({ prepared })
  } catch (error) {
    port.postMessage({ error: serialise(error) })
  }
}
