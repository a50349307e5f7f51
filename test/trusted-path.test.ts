/**
 * State read from disk and trusted (an index directory, the config file, a learned model, an ONNX
 * model directory) that another local user could have changed (src/trusted-path.ts): refused when
 * any user can write it or a directory above it (a sticky one, as /tmp, excepted), a warning once
 * when another uid owns it or its group can write it. Real files, real modes (mkdtemp gives 0700
 * under the sticky /tmp); the test of another owner chowns, so it runs as root only (skipped
 * otherwise).
 */
import { chmod, chown, copyFile, mkdir, mkdtemp, rm, writeFile } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { fileURLToPath } from 'node:url'
import { afterEach, beforeEach, describe, expect, it } from 'vitest'
import { loadConfig } from '../src/config/load-config.ts'
import { defaultConfig } from '../src/config/schema.ts'
import {
  DEFAULT_MODEL_PATH,
  readLearnedModelSync,
  readShippedModel,
} from '../src/learn/learned-model.ts'
import { ToolLibrary } from '../src/library/tool-library.ts'
import { loadTokenCounter } from '../src/mcp/tokens/load-token-counter.ts'
import { createMemoryLogger } from '../src/log.ts'
import { checkModelTextFiles } from '../src/models/model-text-files.ts'
import { indexDirWarnings } from '../src/store/index-dir-claims.ts'
import { readManifest } from '../src/store/index-store.ts'
import {
  buildIndexedLibrary,
  DEMO_LIBRARY_DIR,
  DEMO_LIBRARY_NAME,
  indexTools,
  loadIndexedLibrary,
  loadLibraryReference,
  readIndexTools,
  saveIndexedLibrary,
} from '../src/store/library-lifecycle.ts'
import { ExampleSet } from '../src/examples/example-set.ts'
import { importToolsFromPath } from '../src/library/importers/index.ts'
import { SAMPLE_TOOLS } from './helpers/sample-tools.ts'

const config = defaultConfig()
const TOKENIZER_FIXTURE = fileURLToPath(
  new URL('./fixtures/models/tiny-qwen3-planner', import.meta.url),
)
const isRoot = process.getuid?.() === 0
const hasUids = process.getuid !== undefined

let root: string
const warnings: string[] = []
const report = indexDirWarnings.report
beforeEach(async () => {
  root = await mkdtemp(join(tmpdir(), 'toolsel-trust-'))
  warnings.length = 0
  indexDirWarnings.report = (message) => void warnings.push(message)
})
afterEach(async () => {
  indexDirWarnings.report = report
  await rm(root, { recursive: true, force: true })
})

async function savedIndex(indexDir: string): Promise<string> {
  const indexed = await buildIndexedLibrary(new ToolLibrary('trust', SAMPLE_TOOLS), config)
  return saveIndexedLibrary(indexDir, indexed)
}

describe.skipIf(!hasUids)('an index directory', () => {
  it('is loaded as saved (mkdtemp 0700 under the sticky /tmp): no warning', async () => {
    const dir = await savedIndex(join(root, 'indexes'))
    const loaded = await loadIndexedLibrary(dir, config)
    expect(loaded.library.size).toBe(SAMPLE_TOOLS.length)
    expect(warnings).toEqual([])
  })

  it('is refused when any user can write a file in it, it, or a directory above it', async () => {
    const indexDir = join(root, 'indexes')
    const dir = await savedIndex(indexDir)
    const tools = join(dir, (await readManifest(dir)).toolsFile)
    for (const [path, mode] of [
      [tools, 0o666],
      [dir, 0o777],
      [indexDir, 0o757],
    ] as const) {
      await chmod(path, mode)
      // Before round 44 all three loaded: another user's tools would have been served.
      const error = await loadIndexedLibrary(dir, config).then(
        () => undefined,
        (caught: unknown) => caught,
      )
      expect(error).toMatchObject({ code: 'INDEX_CORRUPT' })
      expect((error as Error).message).toBe(
        `Index directory ${dir} is not read: ${path}: any user can write it (mode ${mode.toString(8)}): chmod o-w ${path}. Another local user could have changed what it holds.`,
      )
      await expect(readIndexTools(dir)).rejects.toMatchObject({ code: 'INDEX_CORRUPT' })
      await chmod(path, path === tools ? 0o644 : 0o755)
    }
    await expect(loadIndexedLibrary(dir, config)).resolves.toBeDefined()
  })

  it('is refused for the saved demo too, whose rebuild would read it (its examples, its vectors)', async () => {
    const indexDir = join(root, 'indexes')
    const demoConfig = { ...config, library: { ...config.library, indexDir } }
    // A saved demo of the demo's files, one tool short and with no fingerprint (as another user
    // could write it): a load imports the files and rebuilds it with its examples.
    const { tools } = await importToolsFromPath(DEMO_LIBRARY_DIR)
    const planted = await indexTools(DEMO_LIBRARY_NAME, tools.slice(1), demoConfig, {
      source: { path: DEMO_LIBRARY_DIR, format: 'mcp' },
      examples: ExampleSet.of([{ instruction: 'a planted example', tools: [tools[1]!.id] }]),
    })
    const dir = await saveIndexedLibrary(indexDir, planted)
    await chmod(dir, 0o777)
    // Before: rebuilt with the planted example and served (3fc484a refused only a load as saved).
    await expect(
      loadLibraryReference(DEMO_LIBRARY_NAME, demoConfig, createMemoryLogger()),
    ).rejects.toMatchObject({
      code: 'INDEX_CORRUPT',
      message: expect.stringContaining(`${dir}: any user can write it (mode 777)`),
    })
  })

  it('is loaded under a sticky directory anyone can write (as /tmp)', async () => {
    const shared = join(root, 'shared')
    await mkdir(shared)
    await chmod(shared, 0o1777)
    const dir = await savedIndex(join(shared, 'indexes'))
    await expect(loadIndexedLibrary(dir, config)).resolves.toBeDefined()
    expect(warnings).toEqual([])
  })

  it('is loaded with one warning when its group can write it (umask 002)', async () => {
    const dir = await savedIndex(join(root, 'indexes'))
    await chmod(dir, 0o775)
    await loadIndexedLibrary(dir, config)
    await loadIndexedLibrary(dir, config)
    expect(warnings).toHaveLength(1)
    expect(warnings[0]).toMatch(
      new RegExp(
        `^Index directory ${dir} is read, though another local user may be able to change it: ${dir}: its group \\(gid \\d+\\) can write it \\(mode 775\\): chmod g-w ${dir} if other users are in that group\\.$`,
      ),
    )
  })

  it.skipIf(!isRoot)('is loaded with a warning when another uid owns a file of it', async () => {
    const dir = await savedIndex(join(root, 'indexes'))
    const manifest = join(dir, 'manifest.json')
    await chown(manifest, 4321, 4321)
    await loadIndexedLibrary(dir, config)
    expect(warnings).toEqual([
      `Index directory ${dir} is read, though another local user may be able to change it: ${manifest}: it belongs to uid 4321, not this process's (0) or root: that user can change it (chown 0 ${manifest} if they should not).`,
    ])
  })
})

describe.skipIf(!hasUids)('the config file, a learned model, a model directory', () => {
  it('config: refused (INVALID_CONFIG) when any user can write it', async () => {
    const file = join(root, 'toolsel.json')
    await writeFile(file, '{"server": {"port": 9123}}')
    expect((await loadConfig({ file })).server.port).toBe(9123)
    await chmod(file, 0o646)
    await expect(loadConfig({ file })).rejects.toMatchObject({
      code: 'INVALID_CONFIG',
      message: `Config file ${file} is not read: ${file}: any user can write it (mode 646): chmod o-w ${file}. Another local user could have changed what it holds.`,
    })
  })

  it('learned model: refused (MODEL_LOAD_FAILED) when a directory above it is writable by all', async () => {
    const dir = join(root, 'models')
    await mkdir(dir)
    const file = join(dir, 'model.json')
    await copyFile(DEFAULT_MODEL_PATH, file)
    expect(readLearnedModelSync(file).format).toBeDefined()
    await chmod(dir, 0o777)
    expect(() => readLearnedModelSync(file)).toThrow(
      expect.objectContaining({
        code: 'MODEL_LOAD_FAILED',
        message: expect.stringContaining(`${dir}: any user can write it (mode 777)`),
      }),
    )
  })

  it('shipped default model: refused when any user can write its package, read with a warning when another uid owns it', async () => {
    // Laid out as an install: <package>/dist/learn/default-model.json.
    const dir = join(root, 'node_modules', 'toolsel', 'dist', 'learn')
    await mkdir(dir, { recursive: true })
    const file = join(dir, 'default-model.json')
    await copyFile(DEFAULT_MODEL_PATH, file)
    expect(readShippedModel(file).format).toBeDefined()
    expect(warnings).toEqual([])
    // Before round 45 the shipped model was read whatever its modes.
    await chmod(join(root, 'node_modules'), 0o777)
    expect(() => readShippedModel(file)).toThrow(
      expect.objectContaining({
        code: 'MODEL_LOAD_FAILED',
        message: expect.stringContaining(
          `Shipped default model ${file} is not read: ${join(root, 'node_modules')}: any user can write it (mode 777)`,
        ),
      }),
    )
    await chmod(join(root, 'node_modules'), 0o755)
    if (!isRoot) return
    await chown(file, 4321, 4321)
    expect(readShippedModel(file).format).toBeDefined()
    expect(warnings).toEqual([
      expect.stringContaining(`${file}: it belongs to uid 4321, not this process's (0) or root`),
    ])
  })

  it('model directory: refused (MODEL_LOAD_FAILED) when any user can write a file in it', async () => {
    const dir = join(root, 'onnx-model')
    await mkdir(join(dir, 'onnx'), { recursive: true })
    await writeFile(join(dir, 'config.json'), '{}')
    await writeFile(join(dir, 'onnx', 'model.onnx'), 'weights')
    await checkModelTextFiles(dir)
    await chmod(join(dir, 'onnx', 'model.onnx'), 0o666)
    await expect(checkModelTextFiles(dir)).rejects.toMatchObject({
      code: 'MODEL_LOAD_FAILED',
      message: expect.stringContaining(`${join(dir, 'onnx', 'model.onnx')}: any user can write it`),
    })
  })

  it('tokenizer directory (mcp.tokenizerDir): not used, with a warning, when any user can write it', async () => {
    const dir = join(root, 'tokenizer')
    await mkdir(dir)
    // A real tokenizer (the tiny Qwen3 fixture's): before round 44 it was loaded and used.
    for (const name of ['tokenizer.json', 'tokenizer_config.json'])
      await copyFile(join(TOKENIZER_FIXTURE, name), join(dir, name))
    await chmod(dir, 0o777)
    const logger = createMemoryLogger()
    const counter = await loadTokenCounter({ tokenizerDir: dir, logger })
    await counter.close?.()
    expect(counter.name).not.toBe(`tokenizer:${dir}`)
    expect(logger.lines.join('\n')).toContain(
      `Token counting: the tokenizer in ${dir} could not be loaded (Tokenizer directory ${dir} is not read: ${dir}: any user can write it (mode 777): chmod o-w ${dir}.`,
    )
  })
})
