/**
 * The zod fields of the per-request pipeline options, shared by the HTTP bodies
 * (`server/schemas.ts`) and the MCP tools (`mcp/tools/`), so both accept the same options with
 * the same bounds and descriptions. A new option is one field here and one line in
 * `resolve-request.ts`.
 * @module
 */
import { z } from 'zod'
import type { Config } from '../config/schema.ts'
import { RETRIEVER_KINDS } from '../store/kinds/index.ts'

/** Component ids (`rule`, `llm:onnx:models/qwen3`, …) are looked up, not enumerated here. */
export const COMPONENT_ID = z.string().min(1).max(500)

/** A retriever kind of the registry (`store/kinds/`): `bm25`, `dense`, `hybrid`, … */
export const RETRIEVER_KIND = z.string().refine((name) => Object.hasOwn(RETRIEVER_KINDS, name), {
  error: (issue) =>
    `no retriever kind "${String(issue.input)}" (available: ${Object.keys(RETRIEVER_KINDS).join(', ')})`,
})

/**
 * Planner, reranker and selector ids a request may name: the model-free ones, the configured
 * defaults and fallbacks, and `server.allowedComponents`. A request can't name any other model,
 * so it can't make the server read a path or load (and cache) a component nobody configured.
 */
export function requestableComponents(config: Config): string[] {
  const ids = [
    'rule',
    'none',
    'identity',
    'top1',
    config.plan.planner,
    config.plan.fallback,
    config.rerank.reranker,
    config.select.selector,
    config.select.fallback,
    ...config.server.allowedComponents,
  ]
  return [...new Set(ids.filter((id) => id !== ''))]
}

export function pipelineOptionFields(config: Config) {
  const { maxK } = config.server
  const kinds = Object.keys(RETRIEVER_KINDS).join(', ')
  const requestable = requestableComponents(config)
  const componentId = (kind: string) =>
    COMPONENT_ID.refine((id) => requestable.includes(id), {
      error: `not a ${kind} this server offers to requests (allowed: ${requestable.join(', ')}); an operator can add ids to server.allowedComponents`,
    })
  return {
    k: z
      .number()
      .int()
      .min(1)
      .max(maxK)
      .optional()
      .describe(`Candidates per step, 1-${maxK}. Default ${config.retrieve.k}.`),
    tau: z
      .number()
      .min(0)
      .optional()
      .describe(`Retrieval score threshold. Default ${config.retrieve.bm25.tau} for BM25.`),
    planner: componentId('planner')
      .optional()
      .describe(`Planner id (rule, none, llm:<model>). Default ${config.plan.planner}.`),
    retriever: RETRIEVER_KIND.optional().describe(
      `Retriever of the library (${kinds}). Default: ${config.retrieve.retriever === 'auto' ? "the library's own" : `${config.retrieve.retriever} when the library has it`}.`,
    ),
    reranker: componentId('reranker')
      .optional()
      .describe(`Reranker id (identity). Default ${config.rerank.reranker}.`),
    selector: componentId('selector')
      .optional()
      .describe(
        `Selector id (learned, learned:<model.json>, top1, llm:<model>). Default ${config.select.selector}.`,
      ),
  }
}
