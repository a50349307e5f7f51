/**
 * The selector reward: 1 when a completion names the gold tool of its step (or the no-tool
 * answer when the step has no gold tool among its candidates), else 0. The selector is trained
 * to answer with the id only, exactly as listed (see the selector prompt); a completion is read
 * after any `<think>…</think>` block, and a JSON string or `{"answer": …}` (what the
 * `json_schema` choice mode of OpenAI-compatible servers returns) is unwrapped. Nothing else is
 * forgiven: a near-miss id scores 0, as the pipeline refuses it.
 * @module
 */
import { noneLabel } from '../select/llm-selector.ts'
import type { AbortInput } from '../lazy-abort.ts'
import { createTimeSlicer } from '../time-slicer.ts'

export interface ScoreSelectionsOptions {
  /** The step's candidate ids, when known: an answer outside them and `none` is marked invalid. */
  candidates?: readonly string[]
}

export interface SelectionScore {
  /** 1 for the gold answer, 0 otherwise. */
  reward: 0 | 1
  /** The answer as read (thinking removed, JSON unwrapped, trimmed). */
  answer: string
  /** False when the answer is neither a candidate nor the no-tool answer (only with candidates). */
  valid: boolean
}

/** `gold` is the gold tool id, or null when the step's gold tool is not among its candidates. */
export function scoreSelections(
  gold: string | null,
  completions: readonly string[],
  options: ScoreSelectionsOptions = {},
): SelectionScore[] {
  return completions.map(selectionScorer(gold, options))
}

/**
 * `scoreSelections` for request handlers: yields to the event loop every few ms (a batch of
 * 1,024 long completions is most of a second of CPU) and stops when `abort` fires (a request's
 * LazyAbort: only its `aborted` flag is read, so no AbortSignal is made).
 */
export async function scoreSelectionsSliced(
  gold: string | null,
  completions: readonly string[],
  options: ScoreSelectionsOptions & { abort?: AbortInput } = {},
): Promise<SelectionScore[]> {
  const score = selectionScorer(gold, options)
  const slicer = createTimeSlicer(options.abort)
  const scores: SelectionScore[] = []
  for (const completion of completions) {
    await slicer.next()
    scores.push(score(completion))
  }
  return scores
}

function selectionScorer(
  gold: string | null,
  options: ScoreSelectionsOptions,
): (completion: string) => SelectionScore {
  const none = noneLabel(options.candidates ?? (gold === null ? [] : [gold]))
  const expected = gold ?? none
  const allowed = options.candidates && new Set([...options.candidates, none])
  return (completion) => {
    const answer = readAnswer(completion)
    return {
      reward: answer === expected ? 1 : 0,
      answer,
      valid: allowed ? allowed.has(answer) : true,
    }
  }
}

/** The id a selector completion names. */
export function readAnswer(completion: string): string {
  const closed = completion.lastIndexOf('</think>')
  let text = (closed >= 0 ? completion.slice(closed + '</think>'.length) : completion).trim()
  const fenced = /^```[\w-]*\s*\n?([\s\S]*?)```$/.exec(text)
  if (fenced) text = fenced[1].trim()
  if (text.startsWith('"') || text.startsWith('{')) {
    try {
      const value: unknown = JSON.parse(text)
      if (typeof value === 'string') return value.trim()
      const answer = (value as { answer?: unknown } | null)?.answer
      if (typeof answer === 'string') return answer.trim()
    } catch {
      // Not JSON: compared as written.
    }
  }
  return text
}
