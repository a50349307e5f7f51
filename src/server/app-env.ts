/** The hono environment of the app's routes (in its own module so routes don't import app.ts). */
import type { AuthEnv } from './middleware/auth.ts'
import type { RequestLogEnv } from './middleware/request-log.ts'
import type { TimeoutEnv } from './middleware/request-timeout.ts'

export type AppEnv = {
  Variables: TimeoutEnv['Variables'] & AuthEnv['Variables'] & RequestLogEnv['Variables']
}
