/**
 * A teacher model (any OpenAI-compatible server, or a local ONNX model) that writes target plans
 * and checks gold pairs, as in the paper's data pipeline. Its prompts are training-time only: the
 * records keep the inference prompt (`buildPlanMessages`) and only take the teacher's answer.
 * @module
 */
import { oneLineDescription, type Tool } from '../library/tool.ts'
import type { ChatMessage, LanguageModel } from '../models/language-model.ts'
import { buildPlanMessages } from '../plan/prompts.ts'

/** Token budget of a teacher plan: a plan of 8 steps is about 120 tokens. */
const PLAN_MAX_TOKENS = 512

export const SYNONYM_SYSTEM_PROMPT = `You check training data for a tool-selection model. You get a user request and one tool. Answer yes when the request asks, in its own words, for something this tool does; answer no when the tool is unrelated to the request or only loosely related.
Answer with yes or no only.`

/**
 * The inference planner prompt, with the gold tools named after the request: the teacher knows
 * which tools the plan must reach, the student (trained on the plain prompt) does not.
 */
export function teacherPlanMessages(
  instruction: string,
  gold: readonly Tool[],
  maxSteps: number,
): ChatMessage[] {
  const messages = buildPlanMessages(instruction, maxSteps)
  const tools = gold
    .map((tool, index) => `${index + 1}. ${tool.name}: ${oneLineDescription(tool.description)}`)
    .join('\n')
  const last = messages[messages.length - 1]
  return [
    ...messages.slice(0, -1),
    {
      role: 'user',
      content: `${last.content}\n\n(Hint for this request only: the plan needs exactly these ${gold.length} tools, one step each, in this order. Describe what each step does in the request's words; do not name the tools.)\n${tools}`,
    },
  ]
}

export async function teacherPlan(
  teacher: LanguageModel,
  instruction: string,
  gold: readonly Tool[],
  maxSteps: number,
): Promise<string> {
  const answer = await teacher.generate(teacherPlanMessages(instruction, gold, maxSteps), {
    maxTokens: PLAN_MAX_TOKENS,
    temperature: 0,
  })
  return answer.text
}

/** Whether the teacher judges that the instruction asks for what `tool` does. */
export async function teacherConfirmsPair(
  teacher: LanguageModel,
  instruction: string,
  tool: Tool,
): Promise<boolean> {
  const messages: ChatMessage[] = [
    { role: 'system', content: SYNONYM_SYSTEM_PROMPT },
    {
      role: 'user',
      content: `Request: ${instruction.replace(/\s+/g, ' ').trim()}\n\nTool: ${tool.name} - ${oneLineDescription(tool.description)}\n\nDoes the request ask for what this tool does? Answer yes or no.`,
    },
  ]
  const { scores } = await teacher.scoreChoices(messages, ['yes', 'no'])
  return scores[0] >= scores[1]
}
