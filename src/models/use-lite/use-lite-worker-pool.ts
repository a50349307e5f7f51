/**
 * Runs use-lite on several worker threads. A use-lite forward pass is single-threaded WebAssembly
 * (TensorFlow.js reports no multithread support under Node), so one process embeds on one core;
 * a pool of workers, each with its own copy of the model (about 110 MB resident), embeds an index
 * build's batches on several cores at once and leaves the main thread free to answer requests.
 * @module
 */
import { Worker } from 'node:worker_threads'
import { ToolselError, throwIfAborted } from '../../errors.ts'
import { normalizeL2 } from '../embedding-model.ts'

const WORKER_FILE = new URL('./use-lite-worker.mjs', import.meta.url)

/** Idle workers are stopped after this long (ms), so a server gives their memory back after a build. */
const IDLE_MS = 30_000

type WorkerReply =
  | { ready: true }
  | { loadError: string }
  | { id: number; buffer: ArrayBuffer }
  | { id: number; error: string }

export class UseLiteWorkerPool {
  /** Worker threads the pool runs. */
  readonly size: number
  readonly #dimensions: number
  #workers: Promise<Worker[]> | undefined
  #nextId = 0
  #busy = 0
  #idleTimer: NodeJS.Timeout | undefined

  constructor(size: number, dimensions: number) {
    this.size = size
    this.#dimensions = dimensions
  }

  /**
   * Embeds `batches` (each at most one forward pass), spread over the workers; vectors come back
   * in input order, unit length. The workers start on the first call (about 0.3 s each, in
   * parallel). Checks `signal` before each batch.
   */
  async embed(batches: readonly string[][], signal?: AbortSignal): Promise<Float32Array[][]> {
    clearTimeout(this.#idleTimer)
    const workers = await this.#start()
    const results: Float32Array[][] = new Array(batches.length)
    let next = 0
    const drain = async (worker: Worker) => {
      while (next < batches.length) {
        throwIfAborted(signal)
        const position = next++
        results[position] = await this.#run(worker, batches[position])
      }
    }
    // Idle workers must not keep a finished CLI process alive, busy ones must (concurrent calls
    // share the workers, hence the count).
    if (this.#busy++ === 0) for (const worker of workers) worker.ref()
    try {
      await Promise.all(workers.map(drain))
    } finally {
      if (--this.#busy === 0) {
        for (const worker of workers) worker.unref()
        this.#idleTimer = setTimeout(() => void this.close(), IDLE_MS).unref()
      }
    }
    return results
  }

  /** Stops the workers; the next `embed` starts new ones. */
  async close(): Promise<void> {
    clearTimeout(this.#idleTimer)
    const workers = this.#workers
    this.#workers = undefined
    if (workers) await Promise.all((await workers).map((worker) => worker.terminate()))
  }

  #start(): Promise<Worker[]> {
    this.#workers ??= Promise.all(Array.from({ length: this.size }, () => startWorker())).catch(
      (error: unknown) => {
        this.#workers = undefined
        throw error
      },
    )
    return this.#workers
  }

  #run(worker: Worker, texts: string[]): Promise<Float32Array[]> {
    const id = this.#nextId++
    return new Promise((resolve, reject) => {
      const settle = () => {
        worker.off('message', onMessage)
        worker.off('error', onError)
        worker.off('exit', onExit)
      }
      const onMessage = (reply: WorkerReply) => {
        if (!('id' in reply) || reply.id !== id) return
        settle()
        if ('error' in reply) {
          reject(
            new ToolselError(
              'MODEL_CALL_FAILED',
              `Embedding with use-lite failed: ${reply.error}`,
              {
                details: { texts: texts.length },
              },
            ),
          )
          return
        }
        const flat = new Float32Array(reply.buffer)
        resolve(
          texts.map((_, row) =>
            normalizeL2(flat.slice(row * this.#dimensions, (row + 1) * this.#dimensions)),
          ),
        )
      }
      const onError = (error: Error) => {
        settle()
        reject(
          new ToolselError('MODEL_CALL_FAILED', 'A use-lite worker thread failed.', {
            cause: error,
          }),
        )
      }
      const onExit = (code: number) => onError(new Error(`the worker exited with code ${code}`))
      worker.on('message', onMessage)
      worker.on('error', onError)
      worker.on('exit', onExit)
      worker.postMessage({ id, texts })
    })
  }
}

function startWorker(): Promise<Worker> {
  return new Promise((resolve, reject) => {
    const worker = new Worker(WORKER_FILE)
    const fail = (reason: string, cause?: unknown) => {
      void worker.terminate()
      reject(
        new ToolselError(
          'MODEL_LOAD_FAILED',
          `A use-lite worker thread could not load the model: ${reason}`,
          { cause },
        ),
      )
    }
    worker.once('error', (error) => fail(error.message, error))
    worker.once('message', (reply: WorkerReply) => {
      if ('loadError' in reply) fail(reply.loadError)
      else resolve(worker)
    })
  })
}
