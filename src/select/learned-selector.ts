/**
 * The learned selector (`selector: learned`, the embedded default): decides how many tools an
 * instruction needs and which, from library-independent features of every candidate of every
 * step (see learn/candidate-features.ts), scored by a small logistic model trained on public
 * training splits (learn/default-model.json; `toolsel train` makes others). It sees all steps at
 * once, plus the whole instruction as an extra step (it asks the pipeline for one), so it can
 * take one tool for an instruction the planner over-split, or a step's runner-up when two steps
 * point at the same tool. It replaces the fixed "best candidate above tau" rule: retrieval runs
 * without a threshold for it, and whether a step gets a tool is the model's decision.
 * @module
 */
import type { Tool } from '../library/tool.ts'
import { extractCandidateFeatures } from '../learn/candidate-features.ts'
import { decideTools } from '../learn/count-model.ts'
import {
  mostProbableFirst,
  stepFloorCandidates,
  type ScoredCandidate,
} from '../learn/decide-set.ts'
import { usesDenseFeatures, type LearnedModel } from '../learn/learned-model.ts'
import { scoreCandidate } from '../learn/boosted-trees.ts'
import { denseToolVectors, learnedToolVectors, probedToolVectors } from '../learn/dense-encoder.ts'
import type { DenseToolVectors } from '../learn/dense-features.ts'
import type { Selection, SelectionRequest, SelectOptions, Selector } from '../contracts.ts'
import type { ExampleDecisionModel } from '../examples/example-decision.ts'

export class LearnedSelector implements Selector {
  readonly name: string
  /** The pipeline appends the whole instruction as a last step when the plan split it. */
  readonly wholeInstructionStep = true
  /** Retrieval threshold the pipeline uses when a request sets none: the model decides. */
  readonly retrievalMinScore = 0
  readonly model: LearnedModel
  /** The model's example-aware decision, when it was trained with one. */
  readonly exampleDecision: ExampleDecisionModel | undefined
  /**
   * The dense features' tool vectors, for a model trained with them (undefined: unavailable, the
   * features take the model's training means).
   */
  readonly #dense: () => Promise<DenseToolVectors | undefined>

  constructor(
    model: LearnedModel,
    name = 'learned',
    dense: () => Promise<DenseToolVectors | undefined> = model.denseMap
      ? () => learnedToolVectors(model.denseMap!)
      : model.denseProbe !== undefined
        ? () => probedToolVectors(model.denseProbe!)
        : denseToolVectors,
  ) {
    this.model = model
    this.exampleDecision = model.examples
    this.name = name
    this.#dense = dense
  }

  /** Loads the dense features' word vectors when the model uses them (the service's start-up). */
  async prepare(): Promise<void> {
    if (usesDenseFeatures(this.model)) await this.#dense()
  }

  async select(requests: SelectionRequest[], options: SelectOptions = {}): Promise<Selection[]> {
    if (requests.length === 0) return []
    const instruction = options.instruction ?? requests.map((request) => request.step).join(' ')
    const wholeIndex = requests.findIndex((request) => request.whole === true)
    const clauses = requests.filter((_request, index) => index !== wholeIndex)
    const whole = wholeIndex >= 0 ? requests[wholeIndex] : requests[0]
    const byId = new Map<string, Tool>()
    const tool = (id: string): Tool => {
      let found = byId.get(id)
      if (found === undefined) {
        found = options.tool?.(id) ?? {
          id,
          name: requests.flatMap((r) => r.candidates).find((c) => c.id === id)?.name ?? id,
          description: '',
          parameters: { type: 'object', properties: {} },
        }
        byId.set(id, found)
      }
      return found
    }
    const useDense = usesDenseFeatures(this.model)
    const dense = useDense ? await this.#dense() : undefined
    const features = extractCandidateFeatures({
      instruction,
      whole: whole.candidates,
      steps: (clauses.length > 0 ? clauses : [whole]).map((request) => ({
        text: request.step,
        candidates: request.candidates,
      })),
      tool,
      library: options.library,
      exampleVotes: options.exampleVotes,
      // With the model's one-clause vector (LearnedModel `oneClauseDense`).
      ...(dense && { dense: dense.input(tool, options.library, this.model.oneClauseDense) }),
    })
    if (useDense && dense === undefined) {
      // No word vectors: the dense features take the training means, which weigh nothing.
      const { mean } = this.model.model
      for (const feature of features) {
        for (let index = feature.values.length; index < mean.length; index += 1)
          feature.values.push(mean[index])
      }
    }
    // One map from id to the candidate's slot in `features` (their ids are distinct), which
    // holds its values and namespace, and its probability by slot: no map per field. (Not
    // `scored[slot].p`: `scored` is sorted below, so its order is not the slots'.)
    const slotOf = new Map<string, number>()
    const probabilities = new Float64Array(features.length)
    const scored: ScoredCandidate[] = new Array(features.length)
    for (let slot = 0; slot < features.length; slot++) {
      const feature = features[slot]
      const candidate = scoreCandidate(this.model, feature.id, feature.values)
      scored[slot] = candidate
      probabilities[slot] = candidate.p
      slotOf.set(feature.id, slot)
    }
    const probability = (id: string): number | undefined => {
      const slot = slotOf.get(id)
      return slot === undefined ? undefined : probabilities[slot]
    }
    const values = (id: string): number[] | undefined => {
      const slot = slotOf.get(id)
      return slot === undefined ? undefined : features[slot].values
    }
    // Most probable first (ties by id): the order decideTools' steps sort the candidates into,
    // so each of their sorts finds one run instead of sorting ~50 candidates again.
    scored.sort(mostProbableFirst)
    const placed = decideTools(
      {
        scored,
        values: { get: values },
        clauses: clauses.map((request) => request.candidates.map((candidate) => candidate.id)),
        stepTops: clauses.map((request) => stepFloorCandidates(request.step, request.candidates)),
        lists: requests.map((request) => request.candidates.map((candidate) => candidate.id)),
        wholeIndex,
        namespaceOf: (id) => {
          const slot = slotOf.get(id)
          return slot === undefined ? undefined : features[slot].namespace
        },
      },
      this.model.rule,
      this.model.count,
    )
    // Each chosen tool went to one request that retrieved it, one tool per request.
    const selections: Selection[] = placed.map((toolId) =>
      toolId === null ? { toolId: null } : { toolId, score: probability(toolId) },
    )
    if (options.probabilities) {
      requests.forEach((request, index) => {
        const scores: Record<string, number> = {}
        for (const candidate of request.candidates) {
          const p = probability(candidate.id)
          if (p !== undefined) scores[candidate.id] = p
        }
        selections[index] = { ...selections[index], probabilities: scores }
      })
    }
    if (options.explain) {
      requests.forEach((request, index) => {
        const explained: Record<string, Record<string, number>> = {}
        for (const candidate of request.candidates) {
          const vector = values(candidate.id)
          if (vector === undefined) continue
          const named: Record<string, number> = {
            probability: round(probability(candidate.id) ?? 0),
          }
          this.model.features.forEach((name, position) => (named[name] = round(vector[position])))
          explained[candidate.id] = named
        }
        selections[index] = { ...selections[index], features: explained }
      })
    }
    return selections
  }
}

const round = (value: number) => Math.round(value * 1e4) / 1e4
