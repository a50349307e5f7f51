/**
 * Gradient-boosted regression trees for a binary label (logistic loss, Newton leaf values, as in
 * XGBoost), fitted on top of a base margin (the linear candidate model's log-odds): the trees
 * learn what the linear model's additive log-odds miss (interactions, thresholds) from a chosen
 * subset of the features. Every tree has the same depth and is stored in heap order, so scoring
 * a row is `depth` comparisons per tree. Deterministic: histogram bins are quantiles of the
 * training values, rows are visited in order, there is no sampling.
 * @module
 */
import type { ScoredCandidate } from './decide-set.ts'
import {
  predictLogit,
  predictProbability,
  roundMillionths,
  sigmoid,
  type LogisticModel,
} from './logistic-regression.ts'

/** One tree of depth `depth`: `2^depth - 1` split nodes in heap order, then `2^depth` leaves. */
export interface RegressionTree {
  /** Feature index of each split node (into the full feature vector); -1: every row goes left. */
  split: number[]
  /** A row goes right when its value is greater than the node's threshold. */
  threshold: number[]
  /** Log-odds added by each leaf (the learning rate applied). */
  leaf: number[]
}

export interface TreeEnsemble {
  depth: number
  trees: RegressionTree[]
}

export interface BoostOptions {
  /** Indices of the features the trees may split on. */
  features: readonly number[]
  trees?: number
  depth?: number
  learningRate?: number
  /** L2 penalty on leaf values (in units of summed row weight × curvature). */
  lambda?: number
  /** Least summed curvature (row weight × p(1-p)) in a child. */
  minChildWeight?: number
  /** Bins per feature (quantiles of the training values) at most. */
  bins?: number
  rowWeights?: ArrayLike<number>
  /** Each row's starting log-odds (e.g. the linear model's); default 0. */
  baseMargins?: ArrayLike<number>
  onTree?: (tree: number, loss: number) => void
}

/** An ensemble's trees packed into three typed arrays (one per model object, made once). */
interface PackedEnsemble {
  inner: number
  split: Int32Array
  threshold: Float64Array
  leaf: Float64Array
}

const packed = new WeakMap<TreeEnsemble, PackedEnsemble>()

function pack(ensemble: TreeEnsemble): PackedEnsemble {
  let found = packed.get(ensemble)
  if (found === undefined) {
    found = {
      inner: (1 << ensemble.depth) - 1,
      split: Int32Array.from(ensemble.trees.flatMap((tree) => tree.split)),
      threshold: Float64Array.from(ensemble.trees.flatMap((tree) => tree.threshold)),
      leaf: Float64Array.from(ensemble.trees.flatMap((tree) => tree.leaf)),
    }
    packed.set(ensemble, found)
  }
  return found
}

/** Log-odds the ensemble adds to a row's base margin. */
export function ensembleMargin(ensemble: TreeEnsemble, values: ArrayLike<number>): number {
  const { inner, split, threshold, leaf } = pack(ensemble)
  const trees = ensemble.trees.length
  let sum = 0
  for (let tree = 0; tree < trees; tree += 1) {
    const base = tree * inner
    let node = 0
    while (node < inner) {
      const feature = split[base + node]
      node = 2 * node + (feature >= 0 && values[feature] > threshold[base + node] ? 2 : 1)
    }
    sum += leaf[tree * (inner + 1) + node - inner]
  }
  return sum
}

/** Bin thresholds of one feature: up to `bins - 1` distinct quantiles of `values`. */
function binThresholds(values: Float64Array, bins: number): number[] {
  const sorted = Float64Array.from(values).sort()
  const out: number[] = []
  for (let b = 1; b < bins; b += 1) {
    const value = sorted[Math.min(sorted.length - 1, Math.floor((b * sorted.length) / bins))]
    // Split below the quantile's value: the threshold is the largest value less than it.
    let lo = 0
    let hi = sorted.length
    while (lo < hi) {
      const mid = (lo + hi) >>> 1
      if (sorted[mid] < value) lo = mid + 1
      else hi = mid
    }
    if (lo === 0) continue
    const cut = shortCut(sorted[lo - 1], value)
    if (out.length === 0 || cut > out[out.length - 1]) out.push(cut)
  }
  return out
}

/**
 * A threshold between two adjacent training values `below` < `above` with the fewest decimals
 * (the model file stays small): every training value falls on the same side of it as of `below`.
 */
function shortCut(below: number, above: number): number {
  for (let decimals = 0; decimals <= 6; decimals += 1) {
    const scale = 10 ** decimals
    const cut = Math.floor(((below + above) / 2) * scale) / scale
    if (cut >= below && cut < above) return cut
  }
  return below
}

export function fitBoostedTrees(
  rows: ReadonlyArray<ArrayLike<number>>,
  labels: ArrayLike<number>,
  options: BoostOptions,
): TreeEnsemble {
  const n = rows.length
  const features = options.features
  const nf = features.length
  const depth = options.depth ?? 3
  const rounds = options.trees ?? 100
  const rate = options.learningRate ?? 0.1
  const lambda = options.lambda ?? 1
  const minChild = options.minChildWeight ?? 1
  const maxBins = Math.min(255, options.bins ?? 64)
  const thresholds: number[][] = []
  const bins = new Uint8Array(n * nf)
  for (let f = 0; f < nf; f += 1) {
    const column = new Float64Array(n)
    for (let r = 0; r < n; r += 1) column[r] = rows[r][features[f]]
    const cuts = binThresholds(column, maxBins)
    thresholds.push(cuts)
    for (let r = 0; r < n; r += 1) {
      let lo = 0
      let hi = cuts.length
      while (lo < hi) {
        const mid = (lo + hi) >>> 1
        if (cuts[mid] < column[r]) lo = mid + 1
        else hi = mid
      }
      bins[r * nf + f] = lo
    }
  }
  const margin = new Float64Array(n)
  if (options.baseMargins) for (let r = 0; r < n; r += 1) margin[r] = options.baseMargins[r]
  const weight = (r: number) => options.rowWeights?.[r] ?? 1
  const grad = new Float64Array(n)
  const hess = new Float64Array(n)
  const histSize = nf * 256 * 2
  /** The gradient and curvature sums per feature bin of `members`. */
  const histogram = (members: Int32Array) => {
    const hist = new Float64Array(histSize)
    for (let i = 0; i < members.length; i += 1) {
      const r = members[i]
      const g = grad[r]
      const h = hess[r]
      const base = r * nf
      for (let f = 0; f < nf; f += 1) {
        const at = (f * 256 + bins[base + f]) * 2
        hist[at] += g
        hist[at + 1] += h
      }
    }
    return hist
  }
  const inner = (1 << depth) - 1
  const trees: RegressionTree[] = []
  for (let round = 0; round < rounds; round += 1) {
    let loss = 0
    for (let r = 0; r < n; r += 1) {
      const z = margin[r]
      const p = sigmoid(z)
      const w = weight(r)
      grad[r] = w * (p - labels[r])
      hess[r] = w * Math.max(p * (1 - p), 1e-9)
      loss -= w * (labels[r] > 0 ? Math.log(Math.max(p, 1e-15)) : Math.log(Math.max(1 - p, 1e-15)))
    }
    options.onTree?.(round, loss)
    const split = new Array<number>(inner).fill(-1)
    const threshold = new Array<number>(inner).fill(0)
    const leaf = new Array<number>(inner + 1).fill(0)
    // The rows of each node of the current level, in row order.
    let level: Int32Array[] = [Int32Array.from({ length: n }, (_v, r) => r)]
    // Each node's histogram: the smaller child's is summed from its rows, the larger one's is its
    // parent's minus the smaller's (histogram subtraction: each level sums at most half the rows).
    let hists: Array<Float64Array | undefined> = [undefined]
    for (let d = 0; d < depth; d += 1) {
      const next: Int32Array[] = []
      const nextHists: Array<Float64Array | undefined> = []
      level.forEach((members, offset) => {
        const node = (1 << d) - 1 + offset
        let gTotal = 0
        let hTotal = 0
        for (let i = 0; i < members.length; i += 1) {
          gTotal += grad[members[i]]
          hTotal += hess[members[i]]
        }
        const hist = hists[offset] ?? histogram(members)
        const parentScore = (gTotal * gTotal) / (hTotal + lambda)
        let best = { gain: 1e-9, f: -1, bin: -1 }
        for (let f = 0; f < nf; f += 1) {
          let gLeft = 0
          let hLeft = 0
          for (let b = 0; b < thresholds[f].length; b += 1) {
            gLeft += hist[(f * 256 + b) * 2]
            hLeft += hist[(f * 256 + b) * 2 + 1]
            const hRight = hTotal - hLeft
            if (hLeft < minChild || hRight < minChild) continue
            const gRight = gTotal - gLeft
            const gain =
              (gLeft * gLeft) / (hLeft + lambda) +
              (gRight * gRight) / (hRight + lambda) -
              parentScore
            if (gain > best.gain) best = { gain, f, bin: b }
          }
        }
        if (best.f < 0) {
          next.push(members, new Int32Array(0))
          nextHists.push(hist, new Float64Array(histSize))
          return
        }
        split[node] = features[best.f]
        threshold[node] = thresholds[best.f][best.bin]
        const left: number[] = []
        const right: number[] = []
        for (let i = 0; i < members.length; i += 1) {
          const r = members[i]
          if (bins[r * nf + best.f] <= best.bin) left.push(r)
          else right.push(r)
        }
        const leftRows = Int32Array.from(left)
        const rightRows = Int32Array.from(right)
        next.push(leftRows, rightRows)
        if (d + 1 === depth) {
          nextHists.push(undefined, undefined)
          return
        }
        const leftSmaller = leftRows.length <= rightRows.length
        const small = histogram(leftSmaller ? leftRows : rightRows)
        const large = new Float64Array(histSize)
        for (let i = 0; i < histSize; i += 1) large[i] = hist[i] - small[i]
        nextHists.push(...(leftSmaller ? [small, large] : [large, small]))
      })
      level = next
      hists = nextHists
    }
    level.forEach((members, offset) => {
      let g = 0
      let h = 0
      for (let i = 0; i < members.length; i += 1) {
        g += grad[members[i]]
        h += hess[members[i]]
      }
      const value = members.length === 0 ? 0 : roundMillionths((-rate * g) / (h + lambda))
      leaf[offset] = value
      for (let i = 0; i < members.length; i += 1) margin[members[i]] += value
    })
    trees.push({ split, threshold, leaf })
  }
  return { depth, trees }
}

/** The candidate model: the linear log-odds, plus the trees' when the model has them. */
export interface CandidateModel {
  model: LogisticModel
  trees?: TreeEnsemble
  /**
   * A dense-free logistic model (over the first `weights.length` features) whose probability
   * decides whether a clause gets its pick by the rule's `stepFloor` (LearnedModel `acceptance`).
   */
  acceptance?: LogisticModel
}

/** A candidate's probability under `candidate` (its raw feature vector). */
export function candidateProbability(candidate: CandidateModel, values: ArrayLike<number>): number {
  const linear = predictLogit(candidate.model, values)
  return sigmoid(candidate.trees ? linear + ensembleMargin(candidate.trees, values) : linear)
}

/**
 * Candidate `id` scored by `candidate`: its probability `p`, and its acceptance probability `a`
 * when the model has a dense-free `acceptance` model (decide-set.ts `stepFloor`).
 */
export function scoreCandidate(
  candidate: CandidateModel,
  id: string,
  values: ArrayLike<number>,
): ScoredCandidate {
  const p = candidateProbability(candidate, values)
  const { acceptance } = candidate
  return acceptance ? new AcceptanceScored(id, p, acceptance, values) : { id, p }
}

/**
 * A scored candidate whose acceptance probability is computed when first read: only a clause's
 * `stepFloor` pick reads it (decide-set.ts), one or two of a request's ~50 candidates, so most
 * never pay its dot product. `values` must not change after scoring (no caller changes them).
 */
class AcceptanceScored implements ScoredCandidate {
  readonly id: string
  readonly p: number
  readonly #acceptance: LogisticModel
  readonly #values: ArrayLike<number>
  #a: number | undefined

  constructor(id: string, p: number, acceptance: LogisticModel, values: ArrayLike<number>) {
    this.id = id
    this.p = p
    this.#acceptance = acceptance
    this.#values = values
  }

  get a(): number {
    return (this.#a ??= predictProbability(this.#acceptance, this.#values))
  }
}
