/** `POST /v1/snapshots` (admin): a snapshot of every saved library, as served now. */
import { Hono } from 'hono'
import type { ToolselService } from '../../service/toolsel-service.ts'
import type { AppEnv } from '../app-env.ts'
import { assertUnscoped, principalOf } from '../middleware/auth.ts'

export function snapshotRoutes(service: ToolselService) {
  // No body: the directory comes from the config (library.snapshotDir), never from a request.
  return new Hono<AppEnv>().post('/', async (c) => {
    assertUnscoped(principalOf(c), 'snapshots')
    return c.json(await service.snapshot({ requestId: c.get('requestId') }), 201)
  })
}
