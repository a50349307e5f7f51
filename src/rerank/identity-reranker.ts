/** `identity`: the default reranker. Keeps each step's candidates in the retriever's order. */
import type { CandidateTool, Reranker, SelectionRequest } from '../contracts.ts'

export class IdentityReranker implements Reranker {
  readonly name = 'identity'

  async rerank(requests: SelectionRequest[]): Promise<CandidateTool[][]> {
    return requests.map((request) => request.candidates)
  }
}
