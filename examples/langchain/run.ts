/**
 * Runs the integration against a live toolsel service, stopping before any language model: it
 * retrieves tools for a request, turns them into LangChain tools and prints the OpenAI tool
 * definitions `chatModel.bindTools(tools)` would send. Bind them to a real chat model (e.g.
 * `new ChatOpenAI({model: 'gpt-4.1'}).bindTools(tools)`) to run an agent.
 *
 *   TOOLSEL_URL=http://localhost:8080 node --import tsx examples/langchain/run.ts
 */
import { convertToOpenAITool } from '@langchain/core/utils/function_calling'
import { ToolselClient } from 'toolsel/client'
import { retrieveTools, ToolselToolRetriever } from './toolsel-tool-retriever.ts'

const client = new ToolselClient({ baseUrl: process.env.TOOLSEL_URL ?? 'http://localhost:8080' })
const retriever = new ToolselToolRetriever({ client, k: 3 })

const query = 'convert 100 US dollars to euros'
const documents = await retriever.invoke(query)
console.log(`retrieved: ${documents.map((document) => document.metadata.id).join(', ')}`)

const tools = await retrieveTools(retriever, client, query, async (id, input) => ({
  called: id,
  input,
}))
const definitions = tools.map((tool) => convertToOpenAITool(tool))
console.log(`tool definitions for bindTools: ${definitions.map((d) => d.function.name).join(', ')}`)

// Calling a tool runs your backend through toolsel's schema (here: an echo).
const echoed = await tools[0].invoke({ amount: 100, from: 'USD', to: 'EUR' })
console.log(`first tool answered: ${echoed}`)

const parameters = definitions[0]?.function.parameters as { type?: string } | undefined
if (
  documents.length === 0 ||
  definitions.length !== documents.length ||
  parameters?.type !== 'object'
) {
  console.error('expected one OpenAI tool definition with an object schema per retrieved tool')
  process.exit(1)
}
