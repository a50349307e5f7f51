/** `POST /v1/snapshots` (admin): a snapshot of every saved library, as served now. */
import { Hono } from 'hono'
import { ToolselError } from '../../errors.ts'
import type { ToolselService } from '../../service/toolsel-service.ts'
import type { AppEnv } from '../app-env.ts'
import { assertUnscoped, principalOf } from '../middleware/auth.ts'

export function snapshotRoutes(service: ToolselService) {
  // No body: the directory comes from the config (library.snapshotDir), never from a request.
  return new Hono<AppEnv>().post('/', async (c) => {
    assertUnscoped(principalOf(c), 'snapshots')
    try {
      return c.json(await service.snapshot({ requestId: c.get('requestId') }), 201)
    } catch (error) {
      // One at a time: a 429 says when to ask again, as /openapi.json's every 429 does.
      if (error instanceof ToolselError && error.code === 'RATE_LIMITED')
        c.header('retry-after', '1')
      throw error
    }
  })
}
