/**
 * toolsel in LangChain.js: a retriever over a tool library (one Document per tool, best first),
 * and the retrieved tools as LangChain tools a chat model can bind. toolsel does the ranking, so
 * no vector store of tool descriptions has to be built or kept in sync.
 */
import type { CallbackManagerForRetrieverRun } from '@langchain/core/callbacks/manager'
import { Document } from '@langchain/core/documents'
import { BaseRetriever, type BaseRetrieverInput } from '@langchain/core/retrievers'
import { DynamicStructuredTool } from '@langchain/core/tools'
import type { ProviderTools, ToolselClient } from 'toolsel/client'

export interface ToolselToolRetrieverInput extends BaseRetrieverInput {
  client: ToolselClient
  /** The toolsel library; default: the service's default library. */
  library?: string
  /** How many tools to return (toolsel's `k`). Default 5. */
  k?: number
}

/** Document metadata of a retrieved tool. */
export interface ToolMetadata {
  id: string
  name: string
  score: number
  library: string
}

/** A retriever whose documents are tools: `pageContent` is the one-line description. */
export class ToolselToolRetriever extends BaseRetriever<ToolMetadata> {
  override lc_namespace = ['toolsel', 'retrievers']
  readonly #client: ToolselClient
  readonly #library?: string
  readonly #k: number

  constructor(input: ToolselToolRetrieverInput) {
    super(input)
    this.#client = input.client
    this.#library = input.library
    this.#k = input.k ?? 5
  }

  override async _getRelevantDocuments(
    query: string,
    _runManager?: CallbackManagerForRetrieverRun,
  ): Promise<Document<ToolMetadata>[]> {
    const found = await this.#client.search({ query, library: this.#library, k: this.#k })
    return found.results.map(
      (result) =>
        new Document<ToolMetadata>({
          pageContent: result.description,
          metadata: {
            id: result.id,
            name: result.name,
            score: result.score,
            library: found.library,
          },
          id: result.id,
        }),
    )
  }
}

/**
 * LangChain tools for toolsel tools in OpenAI's shape (`getProviderTools(…, 'openai')`), named by
 * their provider names (`finance.convert_currency` is `finance--convert_currency`: valid for
 * `bindTools` and distinct across servers); `call` runs the real call (your backend) by tool id.
 */
export function langchainTools(
  { tools, toolIds }: ProviderTools<'openai'>,
  call: (id: string, input: unknown) => Promise<unknown>,
): DynamicStructuredTool[] {
  return tools.map(
    ({ function: definition }) =>
      new DynamicStructuredTool({
        name: definition.name,
        description: definition.description,
        schema: definition.parameters,
        func: async (input: unknown) => JSON.stringify(await call(toolIds[definition.name], input)),
      }),
  )
}

/** Retrieves tools for `query` and loads their full definitions as LangChain tools. */
export async function retrieveTools(
  retriever: ToolselToolRetriever,
  client: ToolselClient,
  query: string,
  call: (id: string, input: unknown) => Promise<unknown>,
): Promise<DynamicStructuredTool[]> {
  const documents = await retriever.invoke(query)
  if (documents.length === 0) return []
  const library = documents[0].metadata.library
  const ids = documents.map((document) => document.metadata.id)
  return langchainTools(await client.getProviderTools(library, ids, 'openai'), call)
}
