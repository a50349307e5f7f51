/**
 * A library upload's import off the event loop. At the body limit (32 MiB, ~90k tools) parsing
 * and importing the body is ~1.4 s of synchronous work and making the tools file and its index
 * another ~1.5 s: on the main thread that froze every request of the process. Here a worker
 * thread (`upload-import-worker.ts`) does all of it and hands back the tools file's bytes and
 * its `tools.idx` in SharedArrayBuffers, every tool's content hash and, with `bm25` settings,
 * the tools' BM25 postings (as `bm25.bin` bytes, read back in slices: the index build then reads
 * no tool on the event loop; a 7.9 MB tool was ~100 ms of it, bench/README round 25); the main thread serves a
 * buffer-backed library over them (`ToolLibrary.fromLineIndex`: nothing parsed or hashed, not
 * even for `toolHashes`; the line index checked in slices)
 * and the save writes them as they are. Shared, not transferred: V8 counts a transferred
 * ArrayBuffer's bytes as the receiving isolate's external memory, and 33 MB arriving at once
 * made it collect for "external memory pressure" right there (scavenges and a mark-compact of
 * 15-56 ms in one piece on the event loop: bench/README round 16); a SharedArrayBuffer's bytes
 * are not counted per isolate. They are freed as any buffer, once the library that reads them is
 * collected (V8 just doesn't hurry for them).
 *
 * Bounded: at most `server.importWorkers` workers at once, shared with large usage-example bodies
 * (worker-slots.ts; later ones wait, in arrival order),
 * each with a heap limit sized from `server.bodyLimitBytes`. A worker that answered waits
 * `IMPORT_WORKER_IDLE_MS` for the next upload (unref'd; kept-workers.ts), then ends: a fresh one per upload loaded
 * every module again and never ran optimised code, ~2x the CPU of the same `prepareUpload` on
 * the main thread from the second upload on (bench/README round 49); one that crashed, ran out
 * of memory or was aborted is ended at once. The caller's signal (the request's
 * timeout, its client gone) terminates the worker. A worker that runs out of memory rejects
 * with PAYLOAD_TOO_LARGE (HTTP 413, naming the heap limit: what one upload may expand into; the
 * largest real spec, Microsoft Graph's 20 MB, peaked at 839 MB of the process's RSS under the
 * default 768 MiB heap, bench/README round 27), one that dies with INTERNAL (500); an import
 * error is the importer's own (IMPORT_FAILED…, 4xx), as in the process. Nothing is written here: a failed import leaves nothing behind.
 * @module
 */
import { ToolselError, throwIfAborted } from '../errors.ts'
import type { ImportOptions, ImportSummary } from '../library/importers/index.ts'
import { ToolLibrary } from '../library/tool-library.ts'
import type { Bm25Postings, Bm25Settings } from '../retrieve/bm25/bm25-postings.ts'
import { bm25PostingsOfBytes } from './kinds/bm25-file.ts'
import { toolLineIndexOfBytes, type PreparedToolsIndex } from './tools-index-file.ts'
import { siblingModule } from '../worker-thread.ts'
import type { Config } from '../config/schema.ts'
import {
  idleWorkerThreads,
  KEPT_WORKER_IDLE_MS,
  readyWorker,
  runOnWorker,
  takeWorker,
} from '../kept-workers.ts'
import { workerSlot } from '../worker-slots.ts'
import {
  UPLOAD_IMPORT_WORKER,
  type PreparedUpload,
  type SavedTools,
  type UploadImportTask,
  type WorkerAnswer,
  type WorkerError,
} from './upload-import-worker.ts'

/** The worker's module: this directory's, as the TypeScript source (under tsx) or dist/'s .js. */
const WORKER_MODULE = siblingModule('upload-import-worker', import.meta.url)

/** Heap (old generation) per worker, in MiB per MiB of the body limit: see bench/README round 14. */
export const IMPORT_HEAP_PER_BODY_MIB = 24
/** The least heap a worker gets, in MiB. */
const MIN_HEAP_MB = 256

export interface UploadImportSettings {
  /** Workers at once (`server.importWorkers`). */
  workers: number
  /** Heap limit of a worker in MiB (`importHeapLimitMb(server.bodyLimitBytes)`). */
  heapLimitMb: number
  /** BM25 settings: the worker also builds the tools' BM25 postings (see `ImportedUpload.bm25`). */
  bm25?: Bm25Settings
  /**
   * Tools whose postings are not wanted (the saved index's, when an upload of the same tools
   * would keep it): the worker makes none when the upload's tools are these.
   */
  bm25Unless?: SavedTools
  signal?: AbortSignal
  /** How long a worker done with an upload waits for the next (default IMPORT_WORKER_IDLE_MS). */
  idleMs?: number
}

/** A worker's heap limit for bodies of up to `bodyLimitBytes`. */
export function importHeapLimitMb(bodyLimitBytes: number): number {
  return Math.max(MIN_HEAP_MB, Math.ceil((bodyLimitBytes / 2 ** 20) * IMPORT_HEAP_PER_BODY_MIB))
}

/** An upload imported in a worker, adopted: the library to index and what its save writes. */
export interface ImportedUpload {
  library: ToolLibrary
  toolsIndex: PreparedToolsIndex
  format: ImportSummary['format']
  warnings: string[]
  summary: ImportSummary
  /**
   * The tools' BM25 postings, built in the worker with `settings` (when asked for, and the tools
   * are not `bm25Unless`).
   */
  bm25?: { settings: Bm25Settings; postings: Bm25Postings }
}

/**
 * Imports `text` (any format; UTF-8 bytes are decoded in the worker, and moved there: `text` is
 * empty afterwards) as the library `name` in a worker thread; see the module comment.
 */
export async function importUploadInWorker(
  name: string,
  text: string | Uint8Array,
  options: ImportOptions,
  settings: UploadImportSettings,
): Promise<ImportedUpload> {
  const free = await workerSlot(settings.workers, settings.signal)
  try {
    const prepared = await runWorker(name, text, options, settings)
    const { toolLines, toolsIndex, toolsFileHash, contentHash } = prepared
    const lineIndex = await toolLineIndexOfBytes(
      toolsIndex,
      toolLines,
      toolsFileHash,
      settings.signal,
    )
    const bm25 =
      settings.bm25 && prepared.bm25Postings
        ? {
            settings: settings.bm25,
            postings: await bm25PostingsOfBytes(prepared.bm25Postings, settings.signal),
          }
        : undefined
    return {
      library: ToolLibrary.fromLineIndex(
        name,
        toolLines,
        lineIndex,
        contentHash,
        prepared.toolHashes,
      ),
      toolsIndex: { toolLines, toolsFileHash, bytes: toolsIndex },
      format: prepared.summary.format,
      warnings: prepared.warnings,
      summary: prepared.summary,
      ...(bm25 && { bm25 }),
    }
  } finally {
    free()
  }
}

/**
 * Starts an import worker for an upload of `bytes` whose body is about to be read, when its import
 * will run in one (at least `server.importWorkerMinChars`; `readyWorker`): an upload after 10 s
 * of none (`IMPORT_WORKER_IDLE_MS`: most of them) waited for a fresh thread's start once its body
 * was read. It waits `server.requestReceiveTimeoutMs` at most, the longest a body's read may take.
 */
export function readyImportWorker(server: Config['server'], bytes: number): void {
  if (!(bytes >= server.importWorkerMinChars)) return
  readyWorker(
    WORKER_MODULE,
    { task: UPLOAD_IMPORT_WORKER },
    { maxOldGenerationSizeMb: importHeapLimitMb(server.bodyLimitBytes) },
    server.importWorkers,
    Math.max(server.requestReceiveTimeoutMs, IMPORT_WORKER_IDLE_MS),
  )
}

/** How long an import worker waits for the next upload before it is ended, in ms. */
export const IMPORT_WORKER_IDLE_MS = KEPT_WORKER_IDLE_MS

/** The thread ids of the import workers waiting for an upload, the last done last. */
export function idleImportWorkers(): number[] {
  return idleWorkerThreads(WORKER_MODULE)
}

function runWorker(
  name: string,
  text: string | Uint8Array,
  options: ImportOptions,
  settings: UploadImportSettings,
): Promise<PreparedUpload> {
  const { signal, heapLimitMb } = settings
  throwIfAborted(signal)
  if (typeof text !== 'string' && text.byteLength !== text.buffer.byteLength) text = text.slice()
  const task: UploadImportTask = {
    name,
    text,
    options,
    ...(settings.bm25 && { bm25: settings.bm25 }),
    ...(settings.bm25Unless && { bm25Unless: settings.bm25Unless }),
  }
  const entry = takeWorker<WorkerAnswer>(
    WORKER_MODULE,
    { task: UPLOAD_IMPORT_WORKER },
    { maxOldGenerationSizeMb: heapLimitMb },
  )
  return runOnWorker(
    entry,
    // Bytes move to the worker (a 33 MB body copied would cost the event loop; a view of a
    // larger buffer is copied first: only whole ArrayBuffers move).
    () =>
      entry.worker.postMessage(task, typeof text === 'string' ? [] : [text.buffer as ArrayBuffer]),
    {
      message: (message) => ({
        ...('prepared' in message
          ? { value: adopted(message.prepared) }
          : { error: workerError(name, message.error) }),
        // An importer's own error leaves the worker sound; any other ends it.
        keep: 'prepared' in message || message.error.code !== undefined,
      }),
      error: (error) =>
        error.code === 'ERR_WORKER_OUT_OF_MEMORY'
          ? new ToolselError(
              'PAYLOAD_TOO_LARGE',
              `The import of library "${name}" needs more memory than its worker's heap limit (${heapLimitMb} MiB, sized from server.bodyLimitBytes): the upload expands too much once imported (an OpenAPI spec of many operations: import fewer at once); nothing was changed.`,
              { cause: error, details: { library: name, heapLimitMb } },
            )
          : new ToolselError(
              'INTERNAL',
              `The import worker of library "${name}" failed: ${error.message}; nothing was changed.`,
              { cause: error, details: { library: name } },
            ),
      exit: (code) =>
        new ToolselError(
          'INTERNAL',
          `The import worker of library "${name}" exited (code ${code}) before it answered; nothing was changed.`,
          { details: { library: name } },
        ),
    },
    { signal, limit: settings.workers, idleMs: settings.idleMs ?? IMPORT_WORKER_IDLE_MS },
  )
}

/**
 * The worker's buffers arrive as Uint8Arrays over its SharedArrayBuffers (shared, not copied):
 * Buffers over the same memory.
 */
function adopted(prepared: PreparedUpload): PreparedUpload {
  const buffer = (bytes: Uint8Array) => Buffer.from(bytes.buffer, bytes.byteOffset, bytes.length)
  return {
    ...prepared,
    toolLines: buffer(prepared.toolLines),
    toolsIndex: buffer(prepared.toolsIndex),
    toolHashes: buffer(prepared.toolHashes),
    ...(prepared.bm25Postings && { bm25Postings: buffer(prepared.bm25Postings) }),
  }
}

function workerError(name: string, error: WorkerError | undefined): ToolselError {
  if (error?.code !== undefined)
    return new ToolselError(error.code, error.message, { details: error.details })
  return new ToolselError(
    'INTERNAL',
    `The import worker of library "${name}" failed: ${error?.message ?? 'no answer'}; nothing was changed.`,
    { details: { library: name } },
  )
}
