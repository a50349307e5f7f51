/** Serves an app over real HTTP on a free port of 127.0.0.1, for tests that need sockets. */
import type { Server } from 'node:http'
import type { AddressInfo } from 'node:net'
import { serve } from '@hono/node-server'

export interface ListeningApp {
  url: string
  /** Drops every connection and stops listening. */
  close(): Promise<void>
}

export async function listenApp(
  fetch: (request: Request, env?: unknown) => Response | Promise<Response>,
): Promise<ListeningApp> {
  const http = serve({ fetch, port: 0, hostname: '127.0.0.1' }) as Server
  await new Promise<void>((resolve) => http.once('listening', () => resolve()))
  return {
    url: `http://127.0.0.1:${(http.address() as AddressInfo).port}`,
    async close() {
      http.closeAllConnections()
      await new Promise((resolve) => http.close(resolve))
    },
  }
}
