/** wink-bm25-text-search as the reference the BM25 index is checked against. */
import type { Tool } from '../../src/library/tool.ts'
import { toolToBm25Document } from '../../src/retrieve/bm25/bm25-document.ts'
import {
  createBm25Engine,
  type Bm25Postings,
  type Bm25Settings,
  type WinkBm25Engine,
} from '../../src/retrieve/bm25/bm25-postings.ts'

/** wink's own consolidated index of `tools` (padded to its 3-document minimum, as toolsel was). */
export function winkIndex(tools: readonly Tool[], settings: Bm25Settings): WinkBm25Engine {
  const engine = createBm25Engine(settings)
  for (const tool of tools) engine.addDoc(toolToBm25Document(tool), tool.id)
  for (let padding = tools.length; padding < 3; padding += 1) {
    engine.addDoc(
      { name: '', description: '', parameters: '', namespace: '' },
      `\u0000pad${padding}`,
    )
  }
  engine.consolidate(6)
  return engine
}

/** Every (term, tool id) → weight of postings, whatever their document order. */
export function weightTable(postings: Bm25Postings, ids: readonly string[]): Map<string, number> {
  const table = new Map<string, number>()
  for (const [term, id] of postings.termIndex) {
    for (let at = postings.offsets[id]; at < postings.offsets[id + 1]; at += 1)
      table.set(`${term}\t${ids[postings.docs[at]]}`, postings.weights[at])
  }
  return table
}
