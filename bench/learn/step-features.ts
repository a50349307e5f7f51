/**
 * Library-independent features of one planner clause, for the decision whether the clause needs a
 * tool at all: its request cues (imperative verb, question, embedded request, first-person
 * context), its length, and how strongly and clearly retrieval answered it.
 * @module
 */
import { isRequest, startsWithAction } from '../../src/plan/request-cues.ts'
import { tokenize } from '../../src/retrieve/bm25/tokenize.ts'
import type { ScoredId } from '../../src/learn/candidate-features.ts'

export const STEP_FEATURE_NAMES = [
  'action',
  'question',
  'context',
  'embedded_request',
  'terms',
  'top_abs',
  'top_norm',
  'top_gap',
  'steps',
  'first',
  'top1_shared',
] as const

/** Clauses that talk about the user rather than ask ("I'm planning…", "My team is…"). */
export const CONTEXT_OPENER = /^(?:i'm|i am|i've|i have|i was|we're|we are|we have|my|our)\b/iu

export function extractStepFeatures(
  steps: ReadonlyArray<{ text: string; candidates: readonly ScoredId[] }>,
): number[][] {
  const top1s = steps.map((step) => step.candidates[0]?.id)
  return steps.map((step, index) => {
    const text = step.text.trim()
    const terms = Math.max(1, new Set(tokenize(text)).size)
    const top = step.candidates[0]?.score ?? 0
    const second = step.candidates[1]?.score ?? 0
    const action = startsWithAction(text)
    const shared = top1s.some(
      (id, other) => other !== index && id !== undefined && id === top1s[index],
    )
    return [
      action ? 1 : 0,
      text.endsWith('?') ? 1 : 0,
      CONTEXT_OPENER.test(text) ? 1 : 0,
      !action && isRequest(text) ? 1 : 0,
      Math.log1p(terms),
      Math.log1p(top),
      top / terms,
      top > 0 ? (top - second) / top : 0,
      Math.min(steps.length, 8) / 8,
      index === 0 ? 1 : 0,
      shared ? 1 : 0,
    ]
  })
}
