/**
 * Runs the integration against a live toolsel service, stopping before any language model: the
 * agent's model is a recorder (the SDK's `Model` interface) that captures the tools the SDK would
 * send and answers "done". Give the agent a real model name (e.g. 'gpt-4.1') to run it for real.
 *
 *   TOOLSEL_URL=http://localhost:8080 node --import tsx examples/openai-agents/run.ts
 */
import {
  run,
  setTracingDisabled,
  Usage,
  type Model,
  type ModelRequest,
  type ModelResponse,
} from '@openai/agents'
import { ToolselClient } from 'toolsel/client'
import { toolselAgent } from './toolsel-agent.ts'

setTracingDisabled(true) // no trace export: nothing leaves this machine

const offered: string[][] = []
const stopBeforeModel: Model = {
  async getResponse(request: ModelRequest): Promise<ModelResponse> {
    offered.push(
      request.tools.map((offeredTool) => ('name' in offeredTool ? offeredTool.name : '')),
    )
    return {
      usage: new Usage(),
      output: [
        {
          type: 'message',
          role: 'assistant',
          status: 'completed',
          content: [{ type: 'output_text', text: 'done (no model was called)' }],
        },
      ],
    }
  },
  getStreamedResponse() {
    throw new Error('this example does not stream')
  },
}

const instruction = 'Book a table for two at an Italian restaurant tonight, then send Sam an SMS'
const toolsel = new ToolselClient({ baseUrl: process.env.TOOLSEL_URL ?? 'http://localhost:8080' })
const { agent, selected } = await toolselAgent(toolsel, instruction, {
  name: 'Assistant',
  instructions: 'Use the tools to do what the user asks.',
  model: stopBeforeModel,
  execute: async (id, input) => ({ called: id, input }),
})

const result = await run(agent, instruction)
console.log(`toolsel selected: ${selected.join(', ')}`)
console.log(`tools the model was offered: ${offered[0]?.join(', ')}`)
console.log(`final output: ${String(result.finalOutput)}`)
if (selected.length === 0 || offered.length !== 1 || offered[0].join() !== selected.join()) {
  console.error('expected the model to be offered exactly the tools toolsel selected')
  process.exit(1)
}
