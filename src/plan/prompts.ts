/**
 * The chat prompt of the LLM planner (the selector's is in `select/prompts.ts`). A fine-tuned
 * model's training data and the service use the same text.
 *
 * They follow the Plan-Retrieve-Select setup of "Training Small Language Models for
 * Transferable Tool Selection" (2026): a small LM first splits the instruction into short
 * sub-steps that each need one capability, BM25 retrieves candidates per step, and a small LM
 * picks exactly one tool per step from its candidates (or none). The wording is ours; the paper
 * fixes the task split, not these sentences. Changing them changes benchmark results: record the
 * change with the next benchmark run.
 * @module
 */
import type { ChatMessage } from '../models/language-model.ts'

/** The planner's instructions. `{maxSteps}` is replaced by the configured cap. */
export const PLANNER_SYSTEM_PROMPT = `You plan tool use for an AI agent. Split the user's request into short sub-steps, in the order they must run.
Rules:
- Each sub-step needs exactly one capability, that is one tool call.
- Write each sub-step as a short imperative phrase that keeps the details a tool needs (names, places, dates, amounts).
- Leave out steps that need no tool, such as thinking or answering the user.
- Use as few sub-steps as the request needs, at most {maxSteps}.
Answer with a JSON list of strings and nothing else.`

/** One worked example, sent as a user/assistant turn pair: small models copy the format. */
const PLANNER_EXAMPLE = {
  request:
    'Find a vegan restaurant near the Louvre and book a table for two at 8pm, then text Sam the address.',
  answer: JSON.stringify([
    'find vegan restaurants near the Louvre',
    'book a table for two at 8pm at the restaurant',
    'send Sam a text message with the restaurant address',
  ]),
}

export function buildPlanMessages(instruction: string, maxSteps: number): ChatMessage[] {
  return [
    { role: 'system', content: PLANNER_SYSTEM_PROMPT.replace('{maxSteps}', String(maxSteps)) },
    { role: 'user', content: PLANNER_EXAMPLE.request },
    { role: 'assistant', content: PLANNER_EXAMPLE.answer },
    { role: 'user', content: instruction },
  ]
}
