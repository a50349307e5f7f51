/**
 * The zod fields of the per-request pipeline options, shared by the HTTP bodies
 * (`server/schemas.ts`) and the MCP tools (`mcp/tools/`), so both accept the same options with
 * the same bounds and descriptions. A new option is one field here and one line in
 * `resolve-request.ts`.
 * @module
 */
import { z } from 'zod'
import type { Config } from '../config/schema.ts'
import { configuredComponentIds } from '../component-id.ts'
import { validHashingDimensions } from '../models/hashing-embedding-model.ts'
import {
  MAX_PART_NAME_CHARS,
  partNameProblem,
  RETRIEVER_KINDS,
  splitPartList,
  splitPartName,
} from '../store/kinds/index.ts'

/** Component ids (`rule`, `llm:onnx:models/qwen3`, …) are looked up, not enumerated here. */
const COMPONENT_ID = z.string().min(1).max(500)

/**
 * A retriever part of a library, by a kind of the registry (`store/kinds/`): `bm25`, `dense`,
 * `dense:static:glove-100d`, `hybrid`, `hybrid:bm25+dense:use-lite`, `regex`, …, or `auto`, the
 * library's own default (what `GET /v1/components` names as the default, and the CLI takes).
 */
const RETRIEVER_KIND = z
  .string()
  .max(MAX_PART_NAME_CHARS)
  .superRefine((name, context) => {
    if (name === 'auto') return
    const problem = partNameProblem(name)
    if (problem !== undefined) context.addIssue({ code: 'custom', message: problem })
  })

/**
 * Parts an upload builds, a comma list (`bm25,dense:static:glove-100d`): the first is the
 * library's default. A part naming an `onnx:<model directory>` embedder must be one the operator
 * configured (`retrieve.dense.embedder`, `retrieve.build` or `server.allowedComponents`), so a
 * request can't make the server read a path nobody configured.
 */
export function retrieverPartsField(config: Config) {
  const configured = new Set([
    config.retrieve.dense.embedder,
    ...splitPartList(config.retrieve.build).flatMap(partEmbedders),
    ...config.server.allowedComponents,
  ])
  return (
    z
      .string()
      .max(2000)
      // In a URL query "+" reads as a space: "?retriever=hybrid:bm25+dense" arrives as
      // "hybrid:bm25 dense". Part names have no spaces, so the field restores the "+" (the one
      // place: the route and the checks below see the list as meant).
      .overwrite(uploadRetrieverParts)
      .superRefine((list, context) => {
        const parts = splitPartList(list)
        if (parts.length === 0)
          context.addIssue({ code: 'custom', message: 'names no retriever part' })
        for (const part of parts) {
          const problem = partNameProblem(part)
          if (problem !== undefined) context.addIssue({ code: 'custom', message: problem })
          for (const embedder of partEmbedders(part)) {
            // The embedder's own check, before any build starts (a failed create is a 500).
            const hashing = /^hashing:(.*)$/.exec(embedder)
            if (
              hashing &&
              !(/^\d+$/.test(hashing[1]) && validHashingDimensions(Number(hashing[1])))
            ) {
              context.addIssue({
                code: 'custom',
                message: `embedder "${embedder}": hashing:<dimensions> takes an integer in 8-65536`,
              })
            }
            if (embedder.startsWith('onnx:') && !configured.has(embedder)) {
              context.addIssue({
                code: 'custom',
                message: `embedder "${embedder}" is not one this server offers to requests (configure it as retrieve.dense.embedder or add it to server.allowedComponents)`,
              })
            }
          }
        }
      })
  )
}

/** An upload's `?retriever=` list as meant: a "+" that URL decoding turned into a space restored. */
function uploadRetrieverParts(list: string): string {
  return list.replace(/ /g, '+')
}

/** The embedders a part names: `dense:<id>` → id; a fusion's dense inputs likewise. */
function partEmbedders(part: string): string[] {
  const { kind, arg } = splitPartName(part)
  if (arg === undefined) return []
  if (kind === 'dense') return [arg]
  return kind === 'hybrid' ? arg.split('+').flatMap((input) => partEmbedders(input.trim())) : []
}

/**
 * Planner, reranker and selector ids a request may name: the model-free ones, the configured
 * defaults and fallbacks, and `server.allowedComponents`. A request can't name any other model,
 * so it can't make the server read a path or load (and cache) a component nobody configured.
 */
function requestableComponents(config: Config): string[] {
  const ids = [
    'rule',
    'none',
    'identity',
    'top1',
    ...configuredComponentIds(config),
    ...config.server.allowedComponents,
  ]
  return [...new Set(ids.filter((id) => id !== ''))]
}

export function pipelineOptionFields(config: Config) {
  const { maxK } = config.server
  const kinds = Object.keys(RETRIEVER_KINDS).join(', ')
  const requestable = requestableComponents(config)
  // The message names the ids of the field's own kind (the check takes any requestable id; a
  // planner named as a selector fails later with UNKNOWN_COMPONENT).
  const ofKind: Record<string, string[]> = {
    planner: ['rule', 'none', config.plan.planner, ...config.plan.fallback],
    reranker: ['identity', config.rerank.reranker],
    selector: ['learned', 'top1', config.select.selector, ...config.select.fallback],
  }
  const allowed = (kind: string) =>
    [...new Set([...(ofKind[kind] ?? []), ...config.server.allowedComponents])]
      .filter((id) => id !== '' && requestable.includes(id))
      .join(', ')
  const componentId = (kind: string) =>
    COMPONENT_ID.refine((id) => requestable.includes(id), {
      error: `not a ${kind} this server offers to requests (allowed: ${allowed(kind)}); an operator can add ids to server.allowedComponents`,
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
      .describe(
        `Retrieval score threshold a step's candidates must pass. Default: 0 with the learned selector (it weighs every candidate above 0 itself; a dense retriever's negative cosines are cut), else the retriever's own (${config.retrieve.bm25.tau} for BM25).`,
      ),
    planner: componentId('planner')
      .optional()
      .describe(`Planner id (rule, none, llm:<model>). Default ${config.plan.planner}.`),
    retriever: RETRIEVER_KIND.optional().describe(
      `Retriever of the library: ${kinds}, or a part it has (dense:<embedder>, hybrid:<part>+<part>); auto: the library's own. Default: ${config.retrieve.retriever === 'auto' ? "the library's own" : `${config.retrieve.retriever} when the library has it`}.`,
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
