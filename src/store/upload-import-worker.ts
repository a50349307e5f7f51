/**
 * What an upload's import worker thread runs (started by `upload-import.ts`): the import of the
 * body (`importTools`: JSON.parse and the importer's per-record checks) and what a save makes of
 * every tool (the tools file's JSON lines, the content hash, the tools file's sha256, the
 * `tools.idx` bytes, each tool's content hash), with the very functions the in-process path runs, so the files come out
 * byte for byte the same. What goes back is three buffers over SharedArrayBuffers (shared, not
 * copied; see upload-import.ts for why not transferred) and a small summary: the main thread
 * adopts them without parsing or hashing a tool.
 * @module
 */
import { createHash } from 'node:crypto'
import { isMainThread, parentPort, workerData } from 'node:worker_threads'
import { errorMessage, ToolselError } from '../errors.ts'
import {
  importTools,
  summarizeImport,
  type ImportOptions,
  type ImportSummary,
} from '../library/importers/index.ts'
import { MAX_TOOL_LINE_BYTES } from '../library/tool.ts'
import { ToolLibrary } from '../library/tool-library.ts'
import { buildPostings, type Bm25Settings } from '../retrieve/bm25/bm25-postings.ts'
import { bm25FileBytes } from './kinds/bm25-file.ts'
import { toolsIndexFileBytes } from './tools-index-file.ts'
import { decodeBody } from '../read-text-file.ts'
import { shownName } from '../library/name-characters.ts'

/** `workerData.task` of an upload's import worker. */
export const UPLOAD_IMPORT_WORKER = 'toolsel-upload-import'

/** A library's tools as a saved index's manifest names them: their count and content hash. */
export interface SavedTools {
  count: number
  contentHash: string
}

/** One upload for the worker (a message). */
export interface UploadImportTask {
  name: string
  /** The body: UTF-8 bytes (decoded here, `uploadText`) or a string. */
  text: string | Uint8Array
  options: ImportOptions
  /** BM25 settings: the worker also builds the tools' BM25 postings with them. */
  bm25?: Bm25Settings
  /** No postings for these tools (count and content hash): see `UploadImportSettings`. */
  bm25Unless?: SavedTools
}

/** What the import of an upload makes: everything the save and the served library need. */
export interface PreparedUpload {
  /** The tools file's bytes (JSON lines, one tool per line). */
  toolLines: Buffer
  /** `tools.idx` for them (`toolsIndexFileBytes`). */
  toolsIndex: Buffer
  toolsFileHash: string
  contentHash: string
  /** Each tool's content hash in line order (`ToolLibrary.toolHashBytes`). */
  toolHashes: Buffer
  /**
   * With `bm25` settings, unless the tools are `bm25Unless`: the tools' BM25 postings (`buildPostings`, the build's own function) as
   * `bm25FileBytes`, so the main thread never reads a tool to index it.
   */
  bm25Postings?: Buffer
  warnings: string[]
  summary: ImportSummary
}

/** The error a worker sends back: a ToolselError's code, message and details, or any other's. */
export type WorkerError =
  | { code: ToolselError['code']; message: string; details: Record<string, unknown> }
  | { code?: undefined; message: string }

/**
 * An upload's bytes as text: UTF-8 as a request's `text()` decodes it (a byte-order mark first
 * dropped, as the importers drop it from a tool file), or INVALID_INPUT naming the first byte
 * that is not UTF-8 and its line (`assertUtf8`, the check of tool files read from disk), not
 * U+FFFD saved in its place; PAYLOAD_TOO_LARGE for more characters than one string holds.
 */
export function uploadText(bytes: Uint8Array): string {
  return decodeBody(
    bytes,
    (error) =>
      new ToolselError(
        'INVALID_INPUT',
        `The request body is not UTF-8 text at byte ${error.offset} (line ${error.line}): send the tool file as UTF-8. Nothing was imported.`,
        { cause: error, details: { byte: error.offset, line: error.line } },
      ),
  )
}

/** Imports `text` as the library `name` and makes its save's tool files (see the module comment). */
export async function prepareUpload(
  name: string,
  text: string,
  options: ImportOptions,
  bm25?: Bm25Settings,
  bm25Unless?: SavedTools,
): Promise<PreparedUpload> {
  const imported = await importTools(text, options)
  // Checks the name and that ids are unique, as the in-process path's ToolLibrary does.
  const library = new ToolLibrary(name, imported.tools)
  const lines = library.toJsonLines()
  assertToolLineBytes(library, lines)
  const toolLines = shared(lines)
  const toolsFileHash = createHash('sha256').update(toolLines).digest('hex')
  const toolHashes = library.toolHashBytes()
  const known =
    bm25Unless !== undefined &&
    bm25Unless.count === library.size &&
    bm25Unless.contentHash === library.contentHash
  return {
    toolLines,
    // The hashes go into tools.idx too: the library loaded from the saved index has them.
    toolsIndex: shared(toolsIndexFileBytes(library.ids, toolLines, toolsFileHash, toolHashes)),
    toolsFileHash,
    contentHash: library.contentHash,
    toolHashes: shared(toolHashes),
    ...(bm25 &&
      !known && { bm25Postings: shared(bm25FileBytes(buildPostings(library.tools, bm25))) }),
    warnings: imported.warnings,
    summary: summarizeImport(imported),
  }
}

/**
 * IMPORT_FAILED naming the first tool whose line in `lines` (one a tool, in order; a line's
 * newlines are escaped inside it) passes MAX_TOOL_LINE_BYTES.
 */
function assertToolLineBytes(library: ToolLibrary, lines: Buffer): void {
  let start = 0
  for (let position = 0; position < library.size; position += 1) {
    const end = lines.indexOf(10, start)
    const bytes = (end === -1 ? lines.length : end) - start
    if (bytes > MAX_TOOL_LINE_BYTES) {
      const id = library.idList.at(position)!
      throw new ToolselError(
        'IMPORT_FAILED',
        `Tool ${shownName(id)} is ${bytes.toLocaleString('en-US')} bytes as JSON, more than ${MAX_TOOL_LINE_BYTES.toLocaleString('en-US')}; shorten its descriptions or split it. Nothing was imported.`,
        { details: { id, bytes, maxBytes: MAX_TOOL_LINE_BYTES } },
      )
    }
    start = end + 1
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
  return { message: errorMessage(error) }
}

/** What the worker posts back for one task. */
export type WorkerAnswer = { prepared: PreparedUpload } | { error: WorkerError }

/**
 * One task's answer. The worker lives on after it (upload-import.ts keeps it for the next
 * upload: a fresh thread per upload loaded every module again and never ran optimised code,
 * ~2x the CPU of the same import on the main thread, bench/README round 49).
 */
async function answer(task: UploadImportTask): Promise<WorkerAnswer> {
  try {
    const { text } = task
    const prepared = await prepareUpload(
      task.name,
      typeof text === 'string' ? text : uploadText(text),
      task.options,
      task.bm25,
      task.bm25Unless,
    )
    return { prepared }
  } catch (error) {
    return { error: serialise(error) }
  }
}

/**
 * Started by upload-import.ts (`workerData.task` says so): the tasks come as messages, one at a
 * time (a message sent before this listener is there waits for it).
 */
const started = isMainThread ? undefined : (workerData as { task?: string } | undefined)
if (parentPort && started?.task === UPLOAD_IMPORT_WORKER) {
  const port = parentPort
  port.on('message', (task: UploadImportTask) => {
    void answer(task).then((message) => port.postMessage(message))
  })
}
