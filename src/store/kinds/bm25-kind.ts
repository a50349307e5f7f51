/**
 * `bm25`: the lexical retriever every index has. Files: `bm25.bin` and, with usage examples,
 * `bm25-examples.bin` (see bm25-file.ts); indexes saved before the binary format hold wink's JSON
 * export (`bm25.json`, manifest `fileFormat` absent) and still load. The manifest entry records
 * the tokenizer version, the tokenizer's probes (its terms for a fixed text, tokenizer-probe.ts:
 * `tokenizerCoreProbe` always, `segmenterProbe` for ICU's word breaks only when the index holds
 * Chinese, Japanese, Korean, Thai… terms) and BM25 settings; a load with other settings, or whose
 * tokenizer gives other terms for what the index holds, is refused with the rebuild command. An
 * index saved before the probes (round 35) loads as before.
 * @module
 */
import { join } from 'node:path'
import type { Config } from '../../config/schema.ts'
import { ToolselError } from '../../errors.ts'
import {
  Bm25Retriever,
  type Bm25QueryOptions,
  type Bm25Settings,
} from '../../retrieve/bm25/bm25-retriever.ts'
import { TOKENIZER_VERSION } from '../../retrieve/bm25/tokenize.ts'
import { exampleExpansionsSliced } from '../../examples/example-expansion.ts'
import {
  BM25_EXAMPLES_FILE,
  BM25_FILE,
  Bm25ManifestSchema,
  manifestMismatch,
  rebuildHint,
  type IndexManifest,
} from '../manifest.ts'
import { readBm25File, writeBm25File } from './bm25-file.ts'
import { indexFileBound, readIndexFile } from '../index-file-read.ts'
import type { RetrieverKind } from './retriever-kind.ts'
import { holdsSegmentedTerms, tokenizerProbes } from './tokenizer-probe.ts'

export function bm25Settings(config: Config): Bm25Settings {
  const { k1, b, fieldWeights } = config.retrieve.bm25
  return { k1, b, fieldWeights: { ...fieldWeights } }
}

export function bm25QueryOptions(config: Config): Bm25QueryOptions {
  return {
    defaultMinScore: config.retrieve.bm25.tau,
    expandHeadVerbs: config.retrieve.bm25.expandHeadVerbs,
  }
}

export const BM25_KIND: RetrieverKind = {
  name: 'bm25',
  requires: [],
  settingsAddedLater: ['tokenizerCoreProbe', 'segmenterProbe'],

  buildSettings(_arg, config) {
    const { examplesPerTool, examplesMinPerTool } = config.retrieve.bm25
    return {
      tokenizerVersion: TOKENIZER_VERSION,
      tokenizerCoreProbe: tokenizerProbes().core,
      segmenterProbe: tokenizerProbes().segmented,
      ...bm25Settings(config),
      examplesPerTool,
      examplesMinPerTool,
    }
  },

  // ICU's word breaks are recorded only for an index they made terms of (see `build`).
  builtSettings(settings, entry) {
    if (Object.hasOwn(entry, 'segmenterProbe')) return settings
    const { segmenterProbe: _unused, ...rest } = settings
    return rest
  },

  async build({ library, config, signal, onProgress, examples, previous, bm25Postings }) {
    const settings = bm25Settings(config)
    const before = previous?.retrievers.get('bm25')
    const { examplesPerTool, examplesMinPerTool } = config.retrieve.bm25
    const expansions =
      examples && examples.size > 0
        ? await exampleExpansionsSliced(
            examples.examples,
            examplesPerTool,
            examplesMinPerTool,
            signal,
          )
        : undefined
    // The tool postings are kept and only the expansion index is made (the same postings a build
    // from the tools would give; tests compare the saved files) when they are at hand: the same
    // tools' retriever with the same settings (a rebuild for new usage examples), or postings an
    // upload's import worker built from these tools with these settings (the same function as
    // below). Nothing is read or tokenized here then.
    const reusable =
      before instanceof Bm25Retriever && sameSettings(before.settings, settings)
        ? before
        : bm25Postings !== undefined &&
            bm25Postings.postings.documents === library.size &&
            sameSettings(bm25Postings.settings, settings)
          ? Bm25Retriever.fromPostings(library.idList, bm25Postings.postings, settings)
          : undefined
    const kept = reusable && (await reusable.withExpansionsAsync(expansions, signal))
    // Yields to the event loop while it reads (a buffer-backed library parses each tool when its
    // turn comes, and keeps none) and tokenizes, so a server keeps answering during a build.
    const retriever = (
      kept ??
      (await Bm25Retriever.buildAsync(library.walk, settings, {
        ids: library.idList,
        signal,
        onProgress,
        expansions,
      }))
    ).withQueryOptions(bm25QueryOptions(config))
    const expanded = expansions !== undefined && expansions.size > 0
    // Terms of a no-space script (cut by this Node's ICU word breaks) in the tools or examples:
    // only then does a change of those word breaks refuse the index. The scan yields as the
    // build does (1M terms: 10-50 ms).
    const segmented =
      (await holdsSegmentedTerms(retriever.postings.termIndex.keys(), signal)) ||
      (retriever.expansionPostings !== undefined &&
        (await holdsSegmentedTerms(retriever.expansionPostings.termIndex.keys(), signal)))
    return {
      retriever,
      entry: {
        tokenizerVersion: TOKENIZER_VERSION,
        tokenizerCoreProbe: tokenizerProbes().core,
        ...(segmented && { segmenterProbe: tokenizerProbes().segmented }),
        ...settings,
        fileFormat: 'binary',
        file: BM25_FILE,
        ...(expanded && { examplesFile: BM25_EXAMPLES_FILE }),
      },
    }
  },

  async save(retriever, entry, dir) {
    if (!(retriever instanceof Bm25Retriever)) throw new Error('An index needs its BM25 retriever.')
    const { file, examplesFile, fileFormat } = Bm25ManifestSchema.parse(entry)
    if (fileFormat !== 'binary') throw new Error('BM25 indexes are saved in the binary format.')
    await writeBm25File(join(dir, file), retriever.postings)
    const expansion = retriever.expansionPostings
    if (examplesFile !== undefined && expansion !== undefined)
      await writeBm25File(join(dir, examplesFile), expansion)
  },

  async load({ dir, manifest, library, config }) {
    const entry = manifest.retrievers.bm25
    const rebuild = rebuildHint(manifest)
    checkBm25Settings(manifest, config, rebuild)
    const settings = bm25Settings(config)
    const expansionFile = entry.examplesFile
    let loaded: Bm25Retriever
    if (entry.fileFormat === 'binary') {
      const read = (file: string) =>
        readBm25File(join(dir, file), rebuild, indexFileBound(manifest, file))
      const index = await read(entry.file)
      // The expansion index from usage examples, when the library has examples.
      const expansion = expansionFile ? await read(expansionFile) : undefined
      if (index.documents !== library.size || (expansion && expansion.documents !== library.size)) {
        throw new ToolselError(
          'INDEX_CORRUPT',
          `Index "${manifest.library}" at ${dir}: the BM25 index holds ${index.documents} tools, the library ${library.size}. ${rebuild}`,
        )
      }
      loaded = Bm25Retriever.fromPostings(library.idList, index, settings, expansion)
    } else {
      // Saved before the binary format: wink's JSON export, read through wink.
      const read = async (file: string): Promise<string> => {
        const path = join(dir, file)
        const corrupt = (why: string, cause: unknown) =>
          new ToolselError('INDEX_CORRUPT', `The BM25 index file ${path} ${why}. ${rebuild}`, {
            cause,
            details: { file: path },
          })
        return (await readIndexFile(path, indexFileBound(manifest, file), corrupt)).toString()
      }
      const json = await read(entry.file)
      const expansionJson = expansionFile ? await read(expansionFile) : undefined
      loaded = Bm25Retriever.fromWinkJson(json, settings, expansionJson)
    }
    const bm25 = loaded.withQueryOptions(bm25QueryOptions(config))
    if (bm25.size !== library.size) {
      throw new ToolselError(
        'INDEX_CORRUPT',
        `Index "${manifest.library}" at ${dir}: the BM25 index holds ${bm25.size} tools, the library ${library.size}. ${rebuild}`,
      )
    }
    return bm25
  },
}

function sameSettings(a: Bm25Settings, b: Bm25Settings): boolean {
  const fields = new Set([...Object.keys(a.fieldWeights), ...Object.keys(b.fieldWeights)])
  return (
    a.k1 === b.k1 &&
    a.b === b.b &&
    [...fields].every(
      (field) =>
        a.fieldWeights[field as keyof Bm25Settings['fieldWeights']] ===
        b.fieldWeights[field as keyof Bm25Settings['fieldWeights']],
    )
  )
}

/**
 * Whether the index `manifest` describes was built with another tokenizer than this toolsel's
 * (version, or a recorded probe): `checkBm25Settings` refuses it whatever the config.
 */
export function builtWithOtherTokenizer(manifest: IndexManifest): boolean {
  const built = manifest.retrievers.bm25
  const probes = tokenizerProbes()
  return (
    built.tokenizerVersion !== TOKENIZER_VERSION ||
    (built.tokenizerCoreProbe !== undefined &&
      (built.tokenizerCoreProbe !== probes.core ||
        (built.segmenterProbe !== undefined && built.segmenterProbe !== probes.segmented)))
  )
}

/**
 * Refuses an index built with another tokenizer (version, or probe when recorded) or other BM25
 * settings than the config's.
 */
export function checkBm25Settings(manifest: IndexManifest, config: Config, rebuild: string): void {
  const built = manifest.retrievers.bm25
  const wanted = bm25Settings(config)
  if (built.tokenizerVersion !== TOKENIZER_VERSION) {
    throw manifestMismatch(
      manifest,
      `was built with tokenizer version ${built.tokenizerVersion}; this version of toolsel tokenizes with version ${TOKENIZER_VERSION}. ${rebuild}`,
    )
  }
  const probes = tokenizerProbes()
  const versions = `both tokenizer version ${TOKENIZER_VERSION}`
  if (built.tokenizerCoreProbe !== undefined) {
    if (built.tokenizerCoreProbe !== probes.core) {
      throw manifestMismatch(
        manifest,
        `was built with a tokenizer that analyses text differently from this toolsel's (tokenizer probe ${built.tokenizerCoreProbe} vs ${probes.core}, ${versions}): its terms would not match the queries'. ${rebuild}`,
      )
    }
    // Recorded only by an index holding Chinese, Japanese, Korean, Thai… terms: another Node's
    // ICU word breaks leave every other index loading.
    if (built.segmenterProbe !== undefined && built.segmenterProbe !== probes.segmented) {
      throw manifestMismatch(
        manifest,
        `holds Chinese, Japanese, Korean or Thai terms cut otherwise than this toolsel cuts them on Node ${process.version} (ICU ${process.versions.icu}; segmenter probe ${built.segmenterProbe} vs ${probes.segmented}): another ICU word dictionary (a Node upgrade) or another segmentation, and its terms would not match the queries'. ${rebuild}`,
      )
    }
  }
  const differences: string[] = []
  if (built.k1 !== wanted.k1) differences.push(`k1 ${built.k1} vs ${wanted.k1}`)
  if (built.b !== wanted.b) differences.push(`b ${built.b} vs ${wanted.b}`)
  for (const [field, weight] of Object.entries(wanted.fieldWeights)) {
    // Indexes from before usage examples have no `examples` weight: nothing of it to weigh.
    if (field === 'examples' && built.fieldWeights[field] === undefined && !manifest.examples)
      continue
    if (built.fieldWeights[field] !== weight)
      differences.push(`fieldWeights.${field} ${built.fieldWeights[field]} vs ${weight}`)
  }
  if (differences.length > 0) {
    throw manifestMismatch(
      manifest,
      `was built with different BM25 settings than the config asks for (index vs config: ${differences.join(', ')}). ${rebuild} Or set retrieve.bm25 back to the index's values.`,
    )
  }
}
