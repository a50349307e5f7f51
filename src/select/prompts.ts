/**
 * The chat prompt of the LLM selector (the planner's is in `plan/prompts.ts`). A fine-tuned
 * model's training data and the service use the same text; changing it changes benchmark
 * results: record the change with the next benchmark run.
 * @module
 */
import type { CandidateTool } from '../contracts.ts'
import type { ChatMessage } from '../models/language-model.ts'

export const SELECTOR_SYSTEM_PROMPT = `You choose the tool for one step of an AI agent's plan. You get the step and a list of candidate tools, one per line as "id: name - description".
Answer with the id of the one candidate that can do the step, written exactly as in the list. If no candidate can do it, answer {none}.
Answer with the id only.`

/** Longest description shown per candidate, in characters. Selectors never see full schemas. */
export const MAX_DESCRIPTION_CHARS = 200

/**
 * The selector's conversation for one step. `none` is the answer meaning "no candidate fits"
 * (normally `none`; the caller picks another label when a candidate's id is `none`).
 */
export function buildSelectMessages(
  step: string,
  candidates: readonly CandidateTool[],
  none: string,
): ChatMessage[] {
  const lines = candidates.map((candidate) => {
    const name =
      candidate.name && candidate.name !== candidate.id ? `${oneLine(candidate.name)} - ` : ''
    return `${candidate.id}: ${name}${oneLine(candidate.description)}`
  })
  return [
    { role: 'system', content: SELECTOR_SYSTEM_PROMPT.replace('{none}', none) },
    {
      role: 'user',
      content: `Step: ${oneLine(step)}\n\nCandidates:\n${lines.join('\n')}\n\nAnswer with one id from the list, or ${none}.`,
    },
  ]
}

function oneLine(text: string): string {
  const flat = text.replace(/\s+/g, ' ').trim()
  return flat.length > MAX_DESCRIPTION_CHARS ? `${flat.slice(0, MAX_DESCRIPTION_CHARS - 1)}…` : flat
}
