/**
 * `GET /v1/components`: the planners, retriever kinds, rerankers and selectors this service can
 * run, each with its default, read from the registries (`components.ts`, `store/kinds/`), so
 * clients such as the playground list what exists instead of hard-coding it.
 */
import { Hono } from 'hono'
import { NEEDS_ARGUMENT, PLANNERS, RERANKERS, SELECTORS } from '../../components.ts'
import type { ToolselService } from '../../service/toolsel-service.ts'
import { RETRIEVER_KINDS } from '../../store/kinds/index.ts'

function describeRegistry(keys: readonly string[], defaultId: string) {
  return {
    default: defaultId,
    ids: keys.filter((key) => !NEEDS_ARGUMENT.has(key)),
    prefixes: keys.filter((key) => NEEDS_ARGUMENT.has(key)).map((key) => `${key}:`),
  }
}

export function componentsRoutes(service: ToolselService) {
  const { config } = service
  return new Hono().get('/', (c) =>
    c.json({
      planners: describeRegistry(Object.keys(PLANNERS), config.plan.planner),
      retrievers: describeRegistry(Object.keys(RETRIEVER_KINDS), config.retrieve.retriever),
      rerankers: describeRegistry(Object.keys(RERANKERS), config.rerank.reranker),
      selectors: describeRegistry(Object.keys(SELECTORS), config.select.selector),
    }),
  )
}
