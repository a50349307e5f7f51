/**
 * Starting a worker thread on one of toolsel's own modules, the same way from the TypeScript
 * source (tsx, vitest) and from the built package (dist/): used by the upload import
 * (`store/upload-import.ts`) and the usage-example memory build (`examples/memory-build-thread.ts`).
 * @module
 */
import { existsSync } from 'node:fs'
import { createRequire } from 'node:module'
import { pathToFileURL } from 'node:url'
import { Worker, type ResourceLimits, type TransferListItem } from 'node:worker_threads'

/**
 * The module `name` (no extension) next to `base` (the caller's `import.meta.url`): the
 * TypeScript source when the caller runs from src/, the compiled `.js` from dist/.
 */
export function siblingModule(name: string, base: string): URL {
  return new URL(`./${name}${base.endsWith('.ts') ? '.ts' : '.js'}`, base)
}

/**
 * The thread's bootstrap (plain JavaScript, run with `eval`): for a TypeScript module it
 * registers tsx's loader first (a worker does not inherit one registered from code), then
 * imports the module, which does its work on import. A module that fails to load is reported
 * as a message `{error: {message}}` before the thread exits.
 */
const BOOTSTRAP = `
const { workerData, parentPort } = require('node:worker_threads')
;(async () => {
  if (workerData.loader) (await import(workerData.loader)).register()
  await import(workerData.module)
})().catch((error) => parentPort.postMessage({ error: { message: String((error && error.stack) || error) } }))
`

export interface WorkerThreadOptions {
  /** Handed to the thread as `workerData`, with `module` and (under tsx) `loader` added. */
  workerData: Record<string, unknown>
  resourceLimits?: ResourceLimits
  /** Buffers moved to the thread with `workerData`. */
  transferList?: TransferListItem[]
}

/**
 * A worker thread running `module` (see `siblingModule`). None of the parent's command-line
 * flags are passed on (a `--import tsx` there is registered by the bootstrap instead).
 */
export function startWorkerThread(module: URL, options: WorkerThreadOptions): Worker {
  const loader = module.pathname.endsWith('.ts') ? tsxLoader() : undefined
  return new Worker(BOOTSTRAP, {
    eval: true,
    workerData: { ...options.workerData, module: module.href, ...(loader && { loader }) },
    ...(options.transferList && { transferList: options.transferList }),
    execArgv: [],
    ...(options.resourceLimits && { resourceLimits: options.resourceLimits }),
  })
}

/**
 * tsx's loader API (its ES module build: the CommonJS one can't register from an eval worker) as
 * a file URL, for the thread of a TypeScript source.
 */
function tsxLoader(): string {
  const api = createRequire(import.meta.url).resolve('tsx/esm/api')
  const esm = api.replace(/\.cjs$/, '.mjs')
  return pathToFileURL(existsSync(esm) ? esm : api).href
}
