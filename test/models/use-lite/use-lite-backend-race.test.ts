/**
 * use-lite's load waits for TensorFlow.js's WebAssembly backend before it reads the weights. It
 * used not to (@energetic-ai/embeddings' initModel starts both at once), and a load under CPU load
 * failed now and then with "Backend 'wasm' has not yet been initialized" (round 38). Here the
 * window is made certain: test/fixtures/slow-wasm-start.mjs delays every WebAssembly.instantiate
 * (calling thread and worker threads) well past the weights' read.
 */
import { execFile } from 'node:child_process'
import { createHash } from 'node:crypto'
import { fileURLToPath } from 'node:url'
import { describe, expect, it } from 'vitest'
import { UseLiteEmbeddingModel } from '../../../src/models/use-lite/use-lite-embedding-model.ts'

const ROOT = fileURLToPath(new URL('../../../', import.meta.url))

/** More texts than one pass (16), so that a model with a worker thread embeds them there. */
const TEXTS = Array.from(
  { length: 20 },
  (_, index) => `tool ${index}: sends a message to a channel`,
)

interface ChildResult {
  out: { fingerprint?: string; vectors?: string; code?: string; message?: string }
  stderr: string
}

function loadInChild(env: Record<string, string>): Promise<ChildResult> {
  const args = ['--import', 'tsx', '--import', './test/fixtures/slow-wasm-start.mjs']
  return new Promise((resolve, reject) =>
    execFile(
      process.execPath,
      [...args, 'test/fixtures/use-lite-load-child.ts', JSON.stringify(TEXTS)],
      { cwd: ROOT, timeout: 90_000, env: { ...process.env, ...env } },
      (error, stdout, stderr) =>
        error
          ? reject(new Error(`${error.message}\n${stderr}`))
          : resolve({ out: JSON.parse(stdout), stderr }),
    ),
  )
}

async function expected(): Promise<{ fingerprint: string; vectors: string }> {
  const model = await UseLiteEmbeddingModel.load()
  const hash = createHash('sha256')
  for (const vector of await model.embed(TEXTS, { kind: 'document' })) {
    hash.update(new Uint8Array(vector.buffer))
  }
  return { fingerprint: model.fingerprint, vectors: hash.digest('hex') }
}

describe('use-lite waits for its WebAssembly backend', () => {
  it('loads (calling thread and worker) when the backend starts long after the weights are read', async () => {
    const { out, stderr } = await loadInChild({ TOOLSEL_TEST_WASM_DELAY_MS: '1500' })
    // Was: {code: 'MODEL_LOAD_FAILED', message: "… Backend 'wasm' has not yet been initialized …"}.
    expect(out).toEqual(await expected())
    expect(stderr).toContain('slow-wasm-start: main instantiate 1')
    expect(stderr).toContain('slow-wasm-start: worker instantiate 1')
  }, 120_000)

  it('starts the backend once more when its first start fails', async () => {
    const { out, stderr } = await loadInChild({
      TOOLSEL_TEST_WASM_DELAY_MS: '300',
      TOOLSEL_TEST_WASM_FAIL_FIRST: '1',
    })
    expect(out).toEqual(await expected())
    expect(stderr).toContain('slow-wasm-start: main instantiate 2')
    expect(stderr).toContain('slow-wasm-start: worker instantiate 2')
  }, 120_000)
})
