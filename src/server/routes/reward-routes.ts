/**
 * `POST /v1/rewards/planner` and `POST /v1/rewards/selector`: the paper's rewards for a batch of
 * model completions, computed by the library's own retriever (read-only, nothing is stored).
 */
import { Hono } from 'hono'
import { scorePlans } from '../../rewards/score-plans.ts'
import { scoreSelectionsSliced } from '../../rewards/score-selections.ts'
import type { ToolselService } from '../../service/toolsel-service.ts'
import type { TimeoutEnv } from '../middleware/request-timeout.ts'
import type { RequestSchemas } from '../schemas.ts'
import { jsonBody, requireJson } from '../validate.ts'
import { assertLibraryAccess, assertUnscoped, libraryFor, principalOf } from '../middleware/auth.ts'

export function rewardRoutes(service: ToolselService, schemas: RequestSchemas) {
  return new Hono<TimeoutEnv>()
    .post('/planner', requireJson, jsonBody(schemas.rewardsPlanner), async (c) => {
      const request = c.req.valid('json')
      const principal = principalOf(c)
      assertUnscoped(principal, 'rewards/planner')
      const library = libraryFor(principal, request.library, service.defaultLibraryName)
      assertLibraryAccess(principal, library, service.libraries)
      const { indexed, retriever, k, minScore } = service.resolveRetrieval({ ...request, library })
      const rewards = await scorePlans(request.instruction, request.gold, request.completions, {
        library: indexed.library,
        retriever,
        k,
        minScore,
        maxSteps: service.config.plan.maxSteps,
        formatPenalty: request.formatPenalty,
        abort: c.get('abort'),
      })
      return c.json({ library: indexed.library.name, retriever: retriever.name, k, rewards })
    })
    .post('/selector', requireJson, jsonBody(schemas.rewardsSelector), async (c) => {
      const request = c.req.valid('json')
      return c.json({
        rewards: await scoreSelectionsSliced(request.gold, request.completions, {
          candidates: request.candidates,
          abort: c.get('abort'),
        }),
      })
    })
}
