/**
 * Learned query-term weights for bench/pool-recall-dev.ts (round 24, #10; measured, not shipped):
 * a logistic model predicting, for each indexed term of a request, P(the term is in some gold
 * tool's BM25 document) (term necessity, Zhao & Callan 2010) from features that do not name the
 * library. `--term-model-out` writes one as JSON for the service screen (a patch outside the
 * repository: BM25 multiplied each term's contribution by p^alpha over its mean in the query).
 * @module
 */
import type { WordVectors } from '../src/models/static/word-vectors.ts'
import { splitIdentifiers, tokenize, tokenizeQuery } from '../src/retrieve/bm25/tokenize.ts'

export const TERM_FEATURES = 113

/** What the term model reads of a library. */
export interface TermLibraryView {
  size: number
  df(term: string): number | undefined
  inName(term: string): boolean
}

/**
 * Each indexed term of `text` (distinct, in query order) with its count and features: the surface
 * word's unit GloVe vector (zeros when unknown or `noVectors`), then whether it is known,
 * idf / log(n + 1), df share and its square root, whether some tool's name holds it, relative
 * position, capitalised (not first word), has a digit, length / 10, count in the text,
 * 1 / terms, idf rank in the text, idf / the text's largest idf.
 */
export function termFeatures(
  text: string,
  library: TermLibraryView,
  vectors: WordVectors,
  noVectors = false,
): { term: string; count: number; x: Float64Array }[] {
  const surface = new Map<string, { word: string; position: number; cap: boolean }>()
  const words = splitIdentifiers(text).match(/[\p{L}\p{N}]+/gu) ?? []
  words.forEach((word, at) => {
    for (const term of tokenize(word))
      if (!surface.has(term))
        surface.set(term, {
          word: word.toLowerCase(),
          position: words.length > 1 ? at / (words.length - 1) : 0,
          cap: at > 0 && /^\p{Lu}/u.test(word),
        })
  })
  const counts = new Map<string, number>()
  const dfs = new Map<string, number>()
  for (const term of tokenizeQuery(text)) {
    const df = library.df(term)
    if (df === undefined || df <= 0) continue
    counts.set(term, (counts.get(term) ?? 0) + 1)
    dfs.set(term, df)
  }
  const n = library.size
  const idfs = [...counts.keys()].map((term) => Math.log((n + 1) / dfs.get(term)!))
  const maxIdf = Math.max(1e-9, ...idfs)
  const sortedIdfs = [...idfs].sort((a, b) => b - a)
  return [...counts].map(([term, count], index) => {
    const x = new Float64Array(TERM_FEATURES)
    const seen = surface.get(term)
    const id = seen && vectors.wordId(seen.word)
    let known = 0
    if (id !== undefined && !noVectors) {
      const sum = new Float64Array(100)
      vectors.addScaled(sum, id, 1)
      const norm = Math.hypot(...sum) || 1
      for (let c = 0; c < 100; c++) x[c] = sum[c] / norm
      known = 1
    }
    const df = dfs.get(term)!
    const idf = idfs[index]
    x.set(
      [
        known,
        idf / Math.log(n + 1),
        df / n,
        Math.sqrt(df / n),
        library.inName(term) ? 1 : 0,
        seen?.position ?? 1,
        seen?.cap ? 1 : 0,
        /\d/.test(term) ? 1 : 0,
        term.length / 10,
        count,
        1 / counts.size,
        counts.size > 1 ? sortedIdfs.indexOf(idf) / (counts.size - 1) : 0,
        idf / maxIdf,
      ],
      100,
    )
    return { term, count, x }
  })
}

export interface TermModelJson {
  mean: number[]
  scale: number[]
  w: number[]
  bias: number
  alpha: number
}

/** A logistic model over standardised term features (Adam, L2), deterministic. */
export class TermModel {
  readonly mean = new Float64Array(TERM_FEATURES)
  readonly scale = new Float64Array(TERM_FEATURES)
  readonly w = new Float64Array(TERM_FEATURES)
  bias = 0

  static fromJson(json: TermModelJson): TermModel {
    const model = new TermModel()
    model.mean.set(json.mean)
    model.scale.set(json.scale)
    model.w.set(json.w)
    model.bias = json.bias
    return model
  }

  toJson(alpha: number): TermModelJson {
    return {
      mean: [...this.mean],
      scale: [...this.scale],
      w: [...this.w],
      bias: this.bias,
      alpha,
    }
  }

  static train(rows: { x: Float64Array; y: number }[], epochs = 6, seed = 1): TermModel {
    const model = new TermModel()
    const d = TERM_FEATURES
    for (const { x } of rows) for (let c = 0; c < d; c++) model.mean[c] += x[c] / rows.length
    for (const { x } of rows)
      for (let c = 0; c < d; c++) model.scale[c] += (x[c] - model.mean[c]) ** 2 / rows.length
    for (let c = 0; c < d; c++) model.scale[c] = 1 / (Math.sqrt(model.scale[c]) || 1)
    const z = rows.map(({ x }) =>
      Float64Array.from(x, (v, c) => (v - model.mean[c]) * model.scale[c]),
    )
    const order = rows.map((_, at) => at)
    let state = seed
    const random = () => (state = (Math.imul(state, 1664525) + 1013904223) >>> 0) / 2 ** 32
    const m = new Float64Array(d + 1)
    const v = new Float64Array(d + 1)
    const grad = new Float64Array(d + 1)
    const [rate, beta1, beta2, l2, batch] = [0.01, 0.9, 0.999, 1e-4, 256]
    let step = 0
    for (let epoch = 0; epoch < epochs; epoch++) {
      for (let at = order.length - 1; at > 0; at--) {
        const other = Math.floor(random() * (at + 1))
        ;[order[at], order[other]] = [order[other], order[at]]
      }
      for (let start = 0; start < order.length; start += batch) {
        grad.fill(0)
        const end = Math.min(order.length, start + batch)
        for (let at = start; at < end; at++) {
          const row = order[at]
          const error = model.#logistic(z[row]) - rows[row].y
          for (let c = 0; c < d; c++) grad[c] += error * z[row][c]
          grad[d] += error
        }
        step += 1
        for (let c = 0; c <= d; c++) {
          const g = grad[c] / (end - start) + (c < d ? l2 * model.w[c] : 0)
          m[c] = beta1 * m[c] + (1 - beta1) * g
          v[c] = beta2 * v[c] + (1 - beta2) * g * g
          const delta =
            (rate * (m[c] / (1 - beta1 ** step))) / (Math.sqrt(v[c] / (1 - beta2 ** step)) + 1e-8)
          if (c < d) model.w[c] -= delta
          else model.bias -= delta
        }
      }
    }
    return model
  }

  #logistic(z: Float64Array): number {
    let s = this.bias
    for (let c = 0; c < z.length; c++) s += this.w[c] * z[c]
    return 1 / (1 + Math.exp(-s))
  }

  probability(x: Float64Array): number {
    let s = this.bias
    for (let c = 0; c < x.length; c++) s += this.w[c] * (x[c] - this.mean[c]) * this.scale[c]
    return 1 / (1 + Math.exp(-s))
  }
}
