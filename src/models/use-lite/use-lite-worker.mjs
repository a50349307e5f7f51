// A worker thread of UseLiteWorkerPool: loads use-lite once and embeds the batches it is sent.
// Plain JavaScript because worker threads start without the TypeScript loader; it loads the model
// as use-lite-embedding-model.ts does (use-lite-load.mjs).
import { parentPort } from 'node:worker_threads'
import { loadUseLite } from './use-lite-load.mjs'

const DIMENSIONS = 512

try {
  const model = await loadUseLite()
  parentPort.on('message', async ({ id, texts }) => {
    try {
      const rows = await model.embed(texts)
      if (rows.length !== texts.length) {
        throw new Error(`use-lite returned ${rows.length} vectors for ${texts.length} texts`)
      }
      // One flat buffer, transferred rather than copied.
      const flat = new Float32Array(rows.length * DIMENSIONS)
      rows.forEach((row, index) => flat.set(row, index * DIMENSIONS))
      parentPort.postMessage({ id, buffer: flat.buffer }, [flat.buffer])
    } catch (error) {
      parentPort.postMessage({ id, error: error instanceof Error ? error.message : String(error) })
    }
  })
  parentPort.postMessage({ ready: true })
} catch (error) {
  parentPort.postMessage({ loadError: error instanceof Error ? error.message : String(error) })
}
