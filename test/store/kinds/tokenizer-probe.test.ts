/**
 * The BM25 tokenizer's probe (store/kinds/tokenizer-probe.ts): an index records what its
 * tokenizer made of a fixed text; a load whose tokenizer makes something else of it is refused
 * by name with the rebuild command, and an index saved before the probe loads (and counts as
 * built the same way: an upgrade rebuilds nothing by itself) until its next save records it.
 */
import { mkdtemp, readFile, writeFile } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { beforeEach, describe, expect, it } from 'vitest'
import { defaultConfig } from '../../../src/config/schema.ts'
import { ToolLibrary } from '../../../src/library/tool-library.ts'
import { tokenize, tokenizeText } from '../../../src/retrieve/bm25/tokenize.ts'
import {
  probeOf,
  tokenizerProbe,
  TOKENIZER_PROBE_TEXT,
} from '../../../src/store/kinds/tokenizer-probe.ts'
import {
  buildIndexedLibrary,
  buildsSameIndex,
  loadIndexedLibrary,
  saveIndexedLibrary,
  savedIndexProblem,
} from '../../../src/store/library-lifecycle.ts'
import { readManifest } from '../../../src/store/index-store.ts'
import { SAMPLE_TOOLS } from '../../helpers/sample-tools.ts'

const config = defaultConfig()
const source = { path: '/data/sample.json' }
let indexDir: string

beforeEach(async () => {
  indexDir = await mkdtemp(join(tmpdir(), 'toolsel-probe-'))
})

async function saveSample() {
  const library = new ToolLibrary('sample', SAMPLE_TOOLS)
  const indexed = await buildIndexedLibrary(library, config, { source })
  return { library, dir: await saveIndexedLibrary(indexDir, indexed) }
}

/** Rewrites the saved manifest's bm25 entry and build settings (the manifest is not in `files`). */
async function editProbe(dir: string, edit: (part: Record<string, unknown>) => void) {
  const path = join(dir, 'manifest.json')
  const manifest = JSON.parse(await readFile(path, 'utf8'))
  edit(manifest.retrievers.bm25)
  edit(manifest.build.parts.bm25)
  await writeFile(path, JSON.stringify(manifest, null, 2))
}

describe('BM25 tokenizer probe', () => {
  it('is recorded in the bm25 entry and build settings of a saved index', async () => {
    const { dir } = await saveSample()
    const manifest = await readManifest(dir)
    expect(tokenizerProbe()).toMatch(/^sha256:[0-9a-f]{16}$/)
    expect(manifest.retrievers.bm25.tokenizerProbe).toBe(tokenizerProbe())
    expect(manifest.build?.parts.bm25?.tokenizerProbe).toBe(tokenizerProbe())
  })

  it('refuses, by name and with the rebuild command, an index whose tokenizer made other terms', async () => {
    const { library, dir } = await saveSample()
    await editProbe(dir, (part) => (part.tokenizerProbe = 'sha256:0123456789abcdef'))
    const refused = loadIndexedLibrary(dir, config)
    await expect(refused).rejects.toMatchObject({
      code: 'INDEX_MISMATCH',
      details: { library: 'sample' },
    })
    const { message } = (await refused.catch((error: Error) => error)) as Error
    expect(message).toContain('Index "sample"')
    expect(message).toContain(`tokenizer probe sha256:0123456789abcdef vs ${tokenizerProbe()}`)
    expect(message).toContain('Rebuild it with: toolsel index /data/sample.json --name sample.')
    // Nor is it taken for the index a build of the same tools would make.
    expect(buildsSameIndex(await readManifest(dir), library, { source }, config)).toBe(false)
    expect(await savedIndexProblem(dir, config)).toContain('tokenizer probe')
  })

  it('loads an index saved before the probe, keeps it as built the same way, and records it on the next save', async () => {
    const { library, dir } = await saveSample()
    await editProbe(dir, (part) => delete part.tokenizerProbe)
    const old = await readManifest(dir)
    expect(old.retrievers.bm25.tokenizerProbe).toBeUndefined()
    const loaded = await loadIndexedLibrary(dir, config)
    expect(await loaded.retrievers.get('bm25')!.retrieve('send email', { k: 3 })).not.toEqual([])
    expect(buildsSameIndex(old, library, { source }, config)).toBe(true)
    expect(await savedIndexProblem(dir, config)).toBeUndefined()

    const rebuilt = await buildIndexedLibrary(library, config, { source, previousIndexDir: dir })
    const saved = await readManifest(await saveIndexedLibrary(indexDir, rebuilt))
    expect(saved.retrievers.bm25.tokenizerProbe).toBe(tokenizerProbe())
    expect(saved.build?.parts.bm25?.tokenizerProbe).toBe(tokenizerProbe())
  })

  it("is a function of the tokenizer's terms, and the probe text exercises each of its steps", () => {
    expect(probeOf(tokenizeText)).toBe(tokenizerProbe())
    expect(probeOf(tokenize)).toBe(tokenizerProbe())
    // One term different (another stemmer's "run"), one term more or fewer: another probe.
    const restem = (text: string) => tokenize(text).map((term) => (term === 'run' ? 'runn' : term))
    expect(probeOf(restem)).not.toBe(tokenizerProbe())
    expect(probeOf((text) => tokenize(text).slice(1))).not.toBe(tokenizerProbe())
    const terms = tokenize(TOKENIZER_PROBE_TEXT)
    // Stop words dropped, stems, identifier and punctuation splits, digits, diacritics, CJK
    // bigrams and unigrams, Korean, Thai words, apostrophes, the cut of long words.
    expect(terms).not.toContain('please')
    expect(terms).toEqual(
      expect.arrayContaining(['run', 'happi', 'get', 'weather', 'http', 'server', 'snake']),
    )
    expect(terms).toEqual(expect.arrayContaining(['v2', '404', 'x86', 'ünïcödé', 'straße']))
    expect(terms).toEqual(expect.arrayContaining(['天气', '天', '東京', '날씨', 'อากาศ']))
    expect(terms).toEqual(expect.arrayContaining(['oclock', 'x'.repeat(64)]))
  })
})
