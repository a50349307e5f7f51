/**
 * BEIR-style retrieval splits (`corpus.jsonl`, `queries.jsonl`, `qrels/<split>.tsv`), as COLT
 * publishes ToolLens and ToolBench G3 (data README sections 1.3 and 2). Gold = the query's qrels
 * corpus ids, mapped to tool ids through `source.corpusIds` (the importer merges corpus
 * documents that name the same API, so two corpus ids can become one tool).
 * @module
 */
import { dirname, join } from 'node:path'
import { stat } from 'node:fs/promises'
import { importToolsFromFile } from '../../library/importers/index.ts'
import type { BenchCase } from '../bench-case.ts'
import type { BenchSuite, SuiteLoadOptions, SuiteLoadResult } from './bench-suite.ts'
import { finishSplit, unmappableNote } from './finish-split.ts'
import { missingFiles, readDataText, readJsonRecords, unique } from './read-data-file.ts'

export interface BeirSuiteSpec {
  name: string
  description: string
  /** The BEIR folder under the data root. */
  dir: string
  /** The qrels split read from `qrels/<split>.tsv`. Default `test`. */
  split?: string
  /** The qrels split whose queries become usage examples under `--examples train`. */
  trainSplit?: string
}

/**
 * `--queries` may name the BEIR folder or its `queries.jsonl` (the folder is then its parent);
 * `--tools` replaces `corpus.jsonl`.
 */
export function createBeirSuite(spec: BeirSuiteSpec): BenchSuite {
  const split = spec.split ?? 'test'
  return {
    name: spec.name,
    description: spec.description,
    async load(options: SuiteLoadOptions): Promise<SuiteLoadResult> {
      const dir = options.queries
        ? await folderOf(options.queries)
        : join(options.dataDir, spec.dir)
      const corpusFile = options.tools ?? join(dir, 'corpus.jsonl')
      const queriesFile = join(dir, 'queries.jsonl')
      const qrelsFile = join(dir, 'qrels', `${split}.tsv`)
      const name = `${spec.name}/${split}`
      const missing = await missingFiles([corpusFile, queriesFile, qrelsFile])
      if (missing.length > 0) {
        const what = missing.includes(queriesFile) ? 'no queries available; ' : ''
        return {
          splits: [],
          skipped: [{ name, reason: `${what}not found: ${missing.join(', ')}` }],
        }
      }
      const tools = (
        await importToolsFromFile(corpusFile, {
          format: 'beir-corpus',
          maxFileBytes: options.maxFileBytes,
          maxTools: options.maxTools,
          regularOnly: true,
        })
      ).tools
      const toolOfCorpusId = new Map<string, string>()
      for (const tool of tools) {
        for (const corpusId of (tool.source?.corpusIds as string[] | undefined) ?? [tool.id]) {
          toolOfCorpusId.set(corpusId, tool.id)
        }
      }
      const texts = await queryTexts(queriesFile)
      const qrels = parseQrels(await readDataText(qrelsFile))
      const cases: BenchCase[] = []
      let noText = 0
      for (const [queryId, corpusIds] of qrels) {
        const instruction = texts.get(queryId)
        if (instruction === undefined) {
          noText += 1
          continue
        }
        // A corpus id without a tool stays as `corpus:<id>` so it counts as unmappable.
        const gold = unique(corpusIds.map((id) => toolOfCorpusId.get(id) ?? `corpus:${id}`))
        cases.push({ id: queryId, instruction, gold })
      }
      const ids = new Set(tools.map((tool) => tool.id))
      const { cases: kept, stats } = finishSplit({
        records: qrels.size,
        cases,
        dropped: noText,
        has: (id) => ids.has(id),
        unmappable: options.unmappable,
      })
      const notes = [`library: ${corpusFile} (${tools.length} tools from corpus documents)`]
      let training
      if (options.examples === 'train' && spec.trainSplit) {
        const trainFile = join(dir, 'qrels', `${spec.trainSplit}.tsv`)
        const trainQrels = parseQrels(await readDataText(trainFile))
        const examples = []
        for (const [queryId, corpusIds] of trainQrels) {
          const instruction = texts.get(queryId)
          const ids = unique(corpusIds.flatMap((id) => toolOfCorpusId.get(id) ?? []))
          if (instruction !== undefined && ids.length > 0 && !qrels.has(queryId))
            examples.push({ instruction, tools: ids })
        }
        const testTexts = new Set(
          kept.map((benchCase) => benchCase.instruction.trim().toLowerCase()),
        )
        const same = examples.filter((example) =>
          testTexts.has(example.instruction.trim().toLowerCase()),
        ).length
        training = {
          examples,
          source: `qrels/${spec.trainSplit}.tsv (${trainFile})`,
          notes: [
            `training examples: ${examples.length} ${spec.trainSplit} queries of ${trainQrels.size}; ${same} of them have the text of a test query (the published split has them)`,
          ],
        }
      }
      if (noText > 0)
        notes.push(`${noText} qrels queries have no text in queries.jsonl and are dropped`)
      const unmapped = unmappableNote(stats, options.unmappable)
      if (unmapped) notes.push(unmapped)
      return {
        splits: [
          {
            name,
            files: [queriesFile, qrelsFile, corpusFile],
            tools,
            cases: kept,
            stats,
            notes,
            ...(training && { training }),
          },
        ],
        skipped: [],
      }
    },
  }
}

async function folderOf(path: string): Promise<string> {
  try {
    return (await stat(path)).isDirectory() ? path : dirname(path)
  } catch {
    return dirname(path)
  }
}

async function queryTexts(file: string): Promise<Map<string, string>> {
  const texts = new Map<string, string>()
  for (const record of await readJsonRecords(file)) {
    const { _id: id, text } = (record ?? {}) as { _id?: unknown; text?: unknown }
    if ((typeof id === 'string' || typeof id === 'number') && typeof text === 'string') {
      texts.set(String(id), text)
    }
  }
  return texts
}

/** `query-id\tcorpus-id\tscore` with a header; rows with score ≤ 0 are not relevant. */
export function parseQrels(text: string): Map<string, string[]> {
  const qrels = new Map<string, string[]>()
  for (const line of text.split('\n')) {
    const [queryId, corpusId, score] = line.trim().split('\t')
    if (!queryId || !corpusId || queryId === 'query-id') continue
    if (score !== undefined && !(Number(score) > 0)) continue
    const list = qrels.get(queryId) ?? []
    list.push(corpusId)
    qrels.set(queryId, list)
  }
  return qrels
}
