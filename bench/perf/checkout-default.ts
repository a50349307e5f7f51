/**
 * A checkout's embedded default (rule planner → BM25 → learned selector) on a saved index, with
 * the checkout's own modules, so that two versions can be run side by side in one process
 * (`bench/select-ab.ts`, `bench/bm25-ab.ts`).
 * @module
 */
import { resolve } from 'node:path'

export interface CheckoutDefault {
  /** The checkout's `selectTools` with its default model (`explain` adds candidate features). */
  select(instruction: string, explain?: boolean): Promise<{ steps: unknown }>
  /** Its BM25 retriever's search, as the learned selector's retrieval calls it (k, min score 0). */
  search(query: string): unknown
}

/**
 * Loads `root`'s modules (a checkout with `src/`) and the index saved in `indexDir`. `model`: a
 * learned model file to select with instead of the checkout's default (read by its own code).
 */
export async function loadCheckoutDefault(
  root: string,
  indexDir: string,
  model?: string,
): Promise<CheckoutDefault> {
  const source = resolve(root, 'src')
  const { defaultConfig } = await import(`${source}/config/schema.ts`)
  const { loadDefaultModel, readLearnedModelSync } = await import(
    `${source}/learn/learned-model.ts`
  )
  const { selectTools } = await import(`${source}/pipeline.ts`)
  const { RulePlanner } = await import(`${source}/plan/rule-planner.ts`)
  const { LearnedSelector } = await import(`${source}/select/learned-selector.ts`)
  const { loadIndexedLibrary } = await import(`${source}/store/index-store.ts`)
  const config = defaultConfig()
  const indexed = await loadIndexedLibrary(indexDir, config)
  const retriever = indexed.retrievers.get('bm25')
  const options = {
    library: indexed.library,
    planner: new RulePlanner(),
    retriever,
    selector: new LearnedSelector(model ? readLearnedModelSync(model) : loadDefaultModel()),
    k: config.retrieve.k,
  }
  return {
    select: (instruction, explain = false) => selectTools(instruction, { ...options, explain }),
    search: (query) => retriever.search(query, config.retrieve.k, 0),
  }
}
