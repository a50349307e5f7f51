/**
 * Runs the integration against a live toolsel service, stopping before any language model: the
 * model slot holds a recorder that captures the tools the AI SDK would send and answers "done".
 * Swap it for a real model (e.g. `openai('gpt-4.1')` from @ai-sdk/openai) to run an agent.
 *
 *   TOOLSEL_URL=http://localhost:8080 node --import tsx examples/vercel-ai-sdk/run.ts
 */
import { generateText, type ToolSet } from 'ai'
import { MockLanguageModelV3 } from 'ai/test'
import { ToolselClient } from 'toolsel/client'
import { aiSdkTools, toolselPrepareStep } from './toolsel-prepare-step.ts'

const instruction = 'What is the weather in Paris tomorrow, and email the forecast to Ann'
const toolsel = new ToolselClient({ baseUrl: process.env.TOOLSEL_URL ?? 'http://localhost:8080' })

// The tools the agent could use: here every candidate toolsel considers for the instruction (an
// app would register its whole catalogue; activeTools keeps it out of the prompt either way).
const selection = await toolsel.select({ instruction, toolFormat: 'openai' })
const candidateIds = [
  ...new Set(selection.steps.flatMap((step) => step.candidates.map((c) => c.id))),
]
const candidates = await toolsel.getProviderTools(
  selection.components.library,
  candidateIds,
  'openai',
)
const tools: ToolSet = aiSdkTools(candidates, async (id, input) => ({ called: id, input }))

const offered: string[][] = []
const stopBeforeModel = new MockLanguageModelV3({
  doGenerate: async (options) => {
    offered.push((options.tools ?? []).map((offeredTool) => offeredTool.name))
    return {
      content: [{ type: 'text', text: 'done (no model was called)' }],
      finishReason: { unified: 'stop', raw: 'stop' },
      usage: {
        inputTokens: { total: 0, noCache: 0, cacheRead: 0, cacheWrite: 0 },
        outputTokens: { total: 0, text: 0, reasoning: 0 },
      },
      warnings: [],
    }
  },
})

await generateText({
  model: stopBeforeModel,
  tools,
  prompt: instruction,
  prepareStep: toolselPrepareStep(toolsel, { library: selection.components.library }),
})

const expected = selection.tools.map((selected) => selected.function.name)
console.log(`registered tools: ${Object.keys(tools).length}`)
console.log(`tools the model was offered: ${offered[0]?.join(', ')}`)
if (offered.length !== 1 || offered[0].join() !== expected.join() || expected.length === 0) {
  console.error(`expected the model to be offered exactly ${expected.join(', ')}`)
  process.exit(1)
}
