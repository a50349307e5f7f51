/**
 * use-lite's load `require`s @energetic-ai/core instead of importing it: an ESM import of the
 * 1.7 MB CommonJS file has Node's cjs-module-lexer scan it all for named exports first, about
 * 0.7 s of a load at load ~16 (round 39, bench/README.md). test/fixtures/no-esm-tf-core.mjs
 * refuses such an import in the child and its worker thread; the load must not need one.
 */
import { execFile } from 'node:child_process'
import { createHash } from 'node:crypto'
import { fileURLToPath } from 'node:url'
import { describe, expect, it } from 'vitest'
import { UseLiteEmbeddingModel } from '../../../src/models/use-lite/use-lite-embedding-model.ts'

const ROOT = fileURLToPath(new URL('../../../', import.meta.url))

/** More texts than one pass (16), so that the child's model embeds them on its worker thread. */
const TEXTS = Array.from({ length: 20 }, (_, index) => `tool ${index}: books a meeting room`)

function loadInChild(): Promise<{ fingerprint?: string; vectors?: string; message?: string }> {
  const args = ['--import', 'tsx', '--import', './test/fixtures/no-esm-tf-core.mjs']
  return new Promise((resolve, reject) =>
    execFile(
      process.execPath,
      [...args, 'test/fixtures/use-lite-load-child.ts', JSON.stringify(TEXTS)],
      { cwd: ROOT, timeout: 90_000 },
      (error, stdout, stderr) =>
        error ? reject(new Error(`${error.message}\n${stderr}`)) : resolve(JSON.parse(stdout)),
    ),
  )
}

describe('use-lite load', () => {
  it('loads TensorFlow.js without an ESM import of it (calling thread and worker)', async () => {
    const model = await UseLiteEmbeddingModel.load()
    const hash = createHash('sha256')
    for (const vector of await model.embed(TEXTS, { kind: 'document' })) {
      hash.update(new Uint8Array(vector.buffer))
    }
    // Was: {code: 'MODEL_LOAD_FAILED', message: "… no-esm-tf-core: @energetic-ai/core imported as
    // ESM by file:///…/src/models/use-lite/use-lite-load.mjs …"}.
    expect(await loadInChild()).toEqual({
      fingerprint: model.fingerprint,
      vectors: hash.digest('hex'),
    })
  }, 120_000)
})
