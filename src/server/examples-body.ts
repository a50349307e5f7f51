/**
 * The body of `POST /v1/libraries/:library/examples` (up to `server.bodyLimitBytes`, 32 MiB):
 * small bodies are checked as every JSON route checks them (`jsonRequest`, `jsonBody`); larger
 * ones are decoded, counted, parsed and checked on a worker thread, with the same answers; at
 * most `server.importWorkers` such threads at once, shared with uploads' imports (worker-slots.ts),
 * later bodies waiting in arrival order. A thread that answered is kept for the next body as an
 * upload's import worker is (kept-workers.ts): a fresh one per body took 1-2 s to start under
 * tsx. On the main thread each of those was
 * one event-loop turn: decoding 32 MB held it 0.2-0.9 s and JSON.parse with zod's check 0.3-0.6 s
 * (round 49, hard53, load 4-5). The checked examples come back packed in one buffer
 * (`PackedStrings`, examples-body-worker.ts) and are unpacked an example per step.
 * @module
 */
import type { Context, MiddlewareHandler, Next } from 'hono'
import { HTTPException } from 'hono/http-exception'
import type { z } from 'zod'
import { ToolselError, throwIfAborted } from '../errors.ts'
import { assertBodyText } from '../read-text-file.ts'
import { runStepsSliced, type Steps } from '../time-slicer.ts'
import { siblingModule } from '../worker-thread.ts'
import { KEPT_WORKER_IDLE_MS, readyWorker, runOnWorker, takeWorker } from '../kept-workers.ts'
import { workerSlot } from '../worker-slots.ts'
import { bodyBytes } from './body-bytes.ts'
import type { addExamplesSchema } from './add-examples-schema.ts'
import type { AppEnv } from './app-env.ts'
import {
  assertJsonContentType,
  cacheBodyText,
  countedJsonBody,
  invalidBody,
  jsonBody,
  notUtf8Body,
  tooManyValues,
} from './validate.ts'

type Schema = ReturnType<typeof addExamplesSchema>

/** Bodies of more bytes than this are checked on the worker thread (the query routes' limit). */
export const EXAMPLES_BODY_THREAD_ABOVE_BYTES = 4 * 1024 * 1024

export interface ExamplesBodyRequest {
  bytes: Uint8Array
  maxValues: number
  maxExamples: number
}

/** The checked examples' strings, moved back from the thread (examples-body-worker.ts). */
export interface PackedStrings {
  /** Each instruction, then its tools: latin1, or UTF-16 code units where `wide`. */
  bytes: Uint8Array
  /** Bytes of each string. */
  lengths: Int32Array
  wide: Uint8Array
  toolCounts: Int32Array
}

export type ExamplesBodyReply =
  | { packed: PackedStrings }
  | { tooManyValues: true }
  | { malformed: true }
  | { issues: z.core.$ZodIssue[] }

const ENTRY = siblingModule('examples-body-worker', import.meta.url)

/**
 * The worker's old-generation bound, MiB: the text (two bytes a character at most), the parsed
 * body and zod's copy of it, for bodies of up to `bytes` (the body limit: one limit for every
 * large body, so a kept thread serves them all).
 */
export function examplesHeapLimitMb(bytes: number): number {
  return Math.ceil(64 + (6 * bytes) / (1024 * 1024))
}

/** The resource limits of an examples body's thread (one kind for `takeWorker`, `readyWorker`). */
function workerLimits(limitMb: number) {
  return { maxOldGenerationSizeMb: limitMb, maxYoungGenerationSizeMb: 32 }
}

/**
 * Middleware: `jsonRequest(maxValues)` then `jsonBody(schema)`, with bodies over
 * EXAMPLES_BODY_THREAD_ABOVE_BYTES decoded, counted, parsed and checked on a worker thread.
 */
export function examplesBody(
  schema: Schema,
  maxValues: number,
  maxExamples: number,
  /** Worker threads at once, shared with uploads' imports (`server.importWorkers`). */
  workers: number,
  /** The largest body (`server.bodyLimitBytes`): sizes the threads' heap. */
  bodyLimitBytes: number,
  /** The longest a body's read may take (`server.requestReceiveTimeoutMs`). */
  receiveTimeoutMs: number,
): MiddlewareHandler<
  AppEnv,
  string,
  { in: { json: z.input<Schema> }; out: { json: z.output<Schema> } }
> {
  // The content type is checked once, below, before the body is read.
  const small = countedJsonBody(maxValues)
  const validate = jsonBody(schema)
  const limitMb = examplesHeapLimitMb(bodyLimitBytes)
  return async (c: Context<AppEnv>, next: Next) => {
    assertJsonContentType(c)
    // A body checked on a thread: the thread starts while the body comes (as an upload's import
    // worker does, round 51), not once it is read. A Content-Length over server.bodyLimitBytes
    // was refused (413) by the app's body limit before this runs.
    const announced = Number(c.req.header('content-length'))
    if (announced > EXAMPLES_BODY_THREAD_ABOVE_BYTES) {
      readyWorker(
        ENTRY,
        {},
        workerLimits(limitMb),
        workers,
        Math.max(receiveTimeoutMs, KEPT_WORKER_IDLE_MS),
      )
    }
    const bytes = await bodyBytes(c)
    if (bytes.length <= EXAMPLES_BODY_THREAD_ABOVE_BYTES) {
      cacheBodyText(c, bytes)
      return small(c, () => validate(c as never, next) as Promise<void>)
    }
    assertBodyText(bytes, notUtf8Body)
    const signal = c.get('abort').signal
    const free = await workerSlot(workers, signal)
    let reply: ExamplesBodyReply
    try {
      reply = await checkOnWorker({ bytes, maxValues, maxExamples }, signal, { limitMb, workers })
    } finally {
      free()
    }
    if ('tooManyValues' in reply) throw tooManyValues(maxValues)
    if ('malformed' in reply)
      throw new HTTPException(400, { message: 'Malformed JSON in request body' })
    if ('issues' in reply) throw invalidBody(reply.issues, schema)
    const examples = await runStepsSliced(unpackStrings(reply.packed), c.get('abort').signal)
    c.req.addValidatedData('json', { examples })
    await next()
  }
}

/** The examples of `packed`, a step per example. */
function* unpackStrings({
  bytes,
  lengths,
  wide,
  toolCounts,
}: PackedStrings): Steps<z.output<Schema>['examples']> {
  const buffer = Buffer.from(bytes.buffer, bytes.byteOffset, bytes.length)
  const examples: z.output<Schema>['examples'] = []
  let piece = 0
  let at = 0
  const next = () => {
    const end = at + lengths[piece]
    const text = buffer.toString(wide[piece] ? 'utf16le' : 'latin1', at, end)
    piece += 1
    at = end
    return text
  }
  for (const count of toolCounts) {
    const instruction = next()
    const tools = Array.from({ length: count }, next)
    examples.push({ instruction, tools })
    yield
  }
  return examples
}

/** What the worker posts: its reply, or (its bootstrap) a module that failed to load. */
type WorkerReply = ExamplesBodyReply | { error: { message: string } }

/**
 * The reply of a worker thread for `request` (its bytes are moved to it): one kept from an
 * earlier body, else a new one (kept-workers.ts); a thread that answered waits for the next body,
 * at most `workers` wait. An abort ends the thread and throws the signal's reason; a thread out of
 * memory is PAYLOAD_TOO_LARGE (413, as an upload's import worker), one that fails or exits
 * without a reply INTERNAL; none of those is kept.
 */
export function checkOnWorker(
  request: ExamplesBodyRequest,
  signal: AbortSignal,
  { limitMb, workers }: { limitMb: number; workers: number },
): Promise<ExamplesBodyReply> {
  throwIfAborted(signal)
  const entry = takeWorker<WorkerReply>(ENTRY, {}, workerLimits(limitMb))
  const internal = (message: string, cause?: unknown) =>
    new ToolselError('INTERNAL', `The examples body could not be checked: ${message}.`, { cause })
  return runOnWorker<WorkerReply, ExamplesBodyReply>(
    entry,
    () => entry.worker.postMessage(request, [request.bytes.buffer as ArrayBuffer]),
    {
      // The thread's bootstrap reports a module that failed to load; a thread that answered
      // waits for the next body.
      message: (reply) =>
        'error' in reply
          ? { error: internal(`its worker module did not load (${reply.error.message})`) }
          : { value: reply, keep: true },
      error: (error) =>
        error.code === 'ERR_WORKER_OUT_OF_MEMORY'
          ? new ToolselError(
              'PAYLOAD_TOO_LARGE',
              `The examples body needs more memory than its worker's heap limit (${limitMb} MiB) once parsed: send fewer examples at once; nothing was changed.`,
              { cause: error, details: { heapLimitMb: limitMb } },
            )
          : internal(`its worker thread failed (${error.message})`, error),
      exit: (code) => internal(`its worker thread exited (code ${code})`),
    },
    { signal, limit: workers },
  )
}
