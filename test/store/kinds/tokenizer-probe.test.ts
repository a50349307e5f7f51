/**
 * The BM25 tokenizer's probes (store/kinds/tokenizer-probe.ts): an index records what its
 * tokenizer made of a fixed text; a load whose tokenizer makes something else of it is refused
 * by name with the rebuild command, and an index saved before the probe loads (and counts as
 * built the same way: an upgrade rebuilds nothing by itself) until its next save records it.
 * ICU's word breaks (no-space scripts) are checked only for an index holding such terms: a Node
 * upgrade with another word dictionary (a child process with test/fixtures/other-icu-word-breaks.mjs)
 * leaves an English index loading and refuses a Thai one.
 */
import { execFile } from 'node:child_process'
import { mkdtemp, readFile, writeFile } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { beforeEach, describe, expect, it } from 'vitest'
import { defaultConfig } from '../../../src/config/schema.ts'
import { ToolLibrary } from '../../../src/library/tool-library.ts'
import { tokenize, tokenizeText } from '../../../src/retrieve/bm25/tokenize.ts'
import {
  holdsSegmentedTerms,
  probeOf,
  probesOf,
  tokenizerProbes,
  TOKENIZER_PROBE_TEXT,
  CORE_PROBE_TEXT,
  SEGMENTED_PROBE_TEXT,
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
import { ROOT } from '../../helpers/start-serve.ts'

const tokenizerProbe = () => tokenizerProbes().core

const config = defaultConfig()
const source = { path: '/data/sample.json' }
let indexDir: string

beforeEach(async () => {
  indexDir = await mkdtemp(join(tmpdir(), 'toolsel-probe-'))
})

/** The sample tools and one described in Thai ("weather forecast, Bangkok"). */
const THAI_TOOLS = [
  ...SAMPLE_TOOLS,
  {
    ...SAMPLE_TOOLS[0]!,
    id: 'weather.thai_forecast',
    name: 'thai_forecast',
    description: 'พยากรณ์อากาศ กรุงเทพมหานคร',
  },
]

async function saveSample(tools = SAMPLE_TOOLS) {
  const library = new ToolLibrary('sample', tools)
  const indexed = await buildIndexedLibrary(library, config, { source })
  return { library, dir: await saveIndexedLibrary(indexDir, indexed) }
}

/**
 * Loads the index at `dir` in a Node process whose ICU breaks Thai words otherwise (another
 * Node's word dictionary, test/fixtures/other-icu-word-breaks.mjs): `ok`, or the refusal.
 */
function loadUnderOtherIcu(dir: string): Promise<{ ok?: true; code?: string; message?: string }> {
  const script = `
    import { defaultConfig } from './src/config/schema.ts'
    import { loadIndexedLibrary } from './src/store/library-lifecycle.ts'
    try {
      await loadIndexedLibrary(process.argv[1], defaultConfig())
      console.log(JSON.stringify({ ok: true }))
    } catch (error) {
      console.log(JSON.stringify({ code: error.code, message: error.message }))
    }`
  const args = ['--import', 'tsx', '--import', './test/fixtures/other-icu-word-breaks.mjs']
  return new Promise((resolve, reject) =>
    execFile(
      process.execPath,
      [...args, '--input-type=module', '-e', script, dir],
      { cwd: ROOT, timeout: 60_000 },
      (error, stdout, stderr) =>
        error ? reject(new Error(`${error.message}\n${stderr}`)) : resolve(JSON.parse(stdout)),
    ),
  )
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
    expect(manifest.retrievers.bm25.tokenizerCoreProbe).toBe(tokenizerProbe())
    expect(manifest.build?.parts.bm25?.tokenizerCoreProbe).toBe(tokenizerProbe())
  })

  it('refuses, by name and with the rebuild command, an index whose tokenizer made other terms', async () => {
    const { library, dir } = await saveSample()
    await editProbe(dir, (part) => (part.tokenizerCoreProbe = 'sha256:0123456789abcdef'))
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
    await editProbe(dir, (part) => delete part.tokenizerCoreProbe)
    const old = await readManifest(dir)
    expect(old.retrievers.bm25.tokenizerCoreProbe).toBeUndefined()
    const loaded = await loadIndexedLibrary(dir, config)
    expect(await loaded.retrievers.get('bm25')!.retrieve('send email', { k: 3 })).not.toEqual([])
    expect(buildsSameIndex(old, library, { source }, config)).toBe(true)
    expect(await savedIndexProblem(dir, config)).toBeUndefined()

    const rebuilt = await buildIndexedLibrary(library, config, { source, previousIndexDir: dir })
    const saved = await readManifest(await saveIndexedLibrary(indexDir, rebuilt))
    expect(saved.retrievers.bm25.tokenizerCoreProbe).toBe(tokenizerProbe())
    expect(saved.build?.parts.bm25?.tokenizerCoreProbe).toBe(tokenizerProbe())
  })

  it("is a function of the tokenizer's terms, and the probe text exercises each of its steps", () => {
    expect(probeOf(tokenizeText, CORE_PROBE_TEXT)).toBe(tokenizerProbes().core)
    expect(probeOf(tokenizeText, SEGMENTED_PROBE_TEXT)).toBe(tokenizerProbes().segmented)
    expect(probesOf(tokenize)).toEqual(tokenizerProbes())
    // One term different (another stemmer's "run"), one term more or fewer: another probe.
    const restem = (text: string) => tokenize(text).map((term) => (term === 'run' ? 'runn' : term))
    expect(probesOf(restem).core).not.toBe(tokenizerProbe())
    expect(probesOf(restem).segmented).toBe(tokenizerProbes().segmented)
    expect(probesOf((text) => tokenize(text).slice(1)).core).not.toBe(tokenizerProbe())
    // Other word breaks for Thai (another ICU): only the segmented probe changes.
    const rebreak = (text: string) =>
      tokenize(text).flatMap((term) => (/\p{Script=Thai}/u.test(term) ? [...term] : [term]))
    expect(probesOf(rebreak).core).toBe(tokenizerProbe())
    expect(probesOf(rebreak).segmented).not.toBe(tokenizerProbes().segmented)
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

  it('leaves an English index loading under another ICU; refuses a Thai one by name with the rebuild command', async () => {
    const english = await saveSample()
    const englishManifest = await readManifest(english.dir)
    expect(englishManifest.retrievers.bm25.segmenterProbe).toBeUndefined()
    expect(englishManifest.build?.parts.bm25?.segmenterProbe).toBeUndefined()
    expect(await loadUnderOtherIcu(english.dir)).toEqual({ ok: true })

    const thai = await saveSample(THAI_TOOLS)
    const thaiManifest = await readManifest(thai.dir)
    expect(thaiManifest.retrievers.bm25.segmenterProbe).toBe(tokenizerProbes().segmented)
    expect(thaiManifest.build?.parts.bm25?.segmenterProbe).toBe(tokenizerProbes().segmented)
    // This Node loads it, and takes it for what a build of the same tools makes.
    expect(await savedIndexProblem(thai.dir, config)).toBeUndefined()
    expect(buildsSameIndex(thaiManifest, thai.library, { source }, config)).toBe(true)
    const refused = await loadUnderOtherIcu(thai.dir)
    expect(refused.code).toBe('INDEX_MISMATCH')
    expect(refused.message).toContain('Index "sample"')
    expect(refused.message).toContain(`segmenter probe ${tokenizerProbes().segmented} vs sha256:`)
    expect(refused.message).toContain('another ICU word dictionary (a Node upgrade)')
    expect(refused.message).toContain(`on Node ${process.version} (ICU ${process.versions.icu};`)
    expect(refused.message).toContain(
      'Rebuild it with: toolsel index /data/sample.json --name sample.',
    )
    // Two child Nodes (tsx), each bounded by loadUnderOtherIcu's 60 s: not the default 30 s.
  }, 120_000)

  it("refuses an index whose ICU word breaks differ from this Node's, and takes it for another build", async () => {
    const { library, dir } = await saveSample(THAI_TOOLS)
    await editProbe(dir, (part) => (part.segmenterProbe = 'sha256:0123456789abcdef'))
    const refused = loadIndexedLibrary(dir, config)
    await expect(refused).rejects.toMatchObject({ code: 'INDEX_MISMATCH' })
    expect(buildsSameIndex(await readManifest(dir), library, { source }, config)).toBe(false)
    // An English index's build settings hold no segmenter probe: the same build whatever it is.
    const english = await saveSample()
    expect(
      buildsSameIndex(await readManifest(english.dir), english.library, { source }, config),
    ).toBe(true)
  })

  it('refuses an English and a Thai index alike when the script-independent probe differs', async () => {
    for (const tools of [SAMPLE_TOOLS, THAI_TOOLS]) {
      const { library, dir } = await saveSample(tools)
      await editProbe(dir, (part) => (part.tokenizerCoreProbe = 'sha256:0123456789abcdef'))
      const refused = loadIndexedLibrary(dir, config)
      await expect(refused).rejects.toMatchObject({ code: 'INDEX_MISMATCH' })
      const { message } = (await refused.catch((error: Error) => error)) as Error
      expect(message).toContain(`tokenizer probe sha256:0123456789abcdef vs ${tokenizerProbe()}`)
      expect(buildsSameIndex(await readManifest(dir), library, { source }, config)).toBe(false)
    }
  })
})

describe('holdsSegmentedTerms (the scan that decides whether an index records segmenterProbe)', () => {
  it('finds a term of a no-space script among a million others, yielding to the event loop', async () => {
    const terms = Array.from({ length: 1_000_000 }, (_, at) => `term${at.toString(36)}`)
    terms.push('привет', 'σήμερα', 'πρόγνωση')
    let ticks = 0
    const tick = () => {
      ticks++
      if (ticks < 1000) setImmediate(tick)
    }
    setImmediate(tick)
    // Was: one synchronous scan (20-50 ms for 1M terms); the event loop ran nothing meanwhile.
    expect(await holdsSegmentedTerms(terms, undefined, 0)).toBe(false)
    expect(ticks).toBeGreaterThan(10)
    terms.push('กรุงเทพ')
    expect(await holdsSegmentedTerms(terms, undefined, 0)).toBe(true)
    expect(await holdsSegmentedTerms(['東京', 'weather'])).toBe(true)
    expect(await holdsSegmentedTerms(['abc', '𠀋'])).toBe(true)
    const aborted = new AbortController()
    aborted.abort()
    await expect(holdsSegmentedTerms(terms, aborted.signal, 0)).rejects.toMatchObject({
      code: 'ABORTED',
    })
  })
})
