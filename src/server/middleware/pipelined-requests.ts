/**
 * Pipelined requests (HTTP/1.1: a client sends requests on a connection before reading the
 * answers) are served one at a time: a request waits until the answer before it on its connection
 * has gone out to the OS ('finish') or the connection closed. Node parses every request of a read
 * (64 KiB: 1,600 requests of 47 bytes) before it pauses a connection whose answers are not read,
 * and the app answered each: 75 KB of `GET /openapi.json` on one connection, never read, held
 * 1.2 GB of answers (no key needed). Answers go out in request order anyway, so a client that
 * reads them loses nothing but work done ahead; one that does not holds one answer and the OS's
 * socket buffers (bench/README round 46).
 * @module
 */
import type { IncomingMessage, ServerResponse } from 'node:http'
import type { Socket } from 'node:net'
import type { MiddlewareHandler } from 'hono'
import { ToolselError } from '../../errors.ts'

/** One connection's line: the latest request's answer, and the requests waiting. */
interface Line {
  last: ServerResponse
  /** Wakes each waiting request (the connection closed). */
  waiting: Set<() => void>
}

/**
 * The middleware (the app's first: time waiting for a previous answer is neither logged nor
 * timed). Requests not served by `@hono/node-server` (no socket in `c.env`) pass. A request whose
 * connection closed while it waited is answered ABORTED (to no one) without reaching a route.
 */
export function pipelinedOneAtATime(): MiddlewareHandler {
  const lines = new WeakMap<Socket, Line>()
  return async (c, next) => {
    const env = c.env as { incoming?: IncomingMessage; outgoing?: ServerResponse } | undefined
    const socket = env?.incoming?.socket
    const outgoing = env?.outgoing
    if (socket === undefined || socket === null || outgoing === undefined) return next()
    const line = lines.get(socket)
    if (line === undefined) {
      const fresh: Line = { last: outgoing, waiting: new Set() }
      lines.set(socket, fresh)
      socket.once('close', () => {
        for (const wake of fresh.waiting) wake()
      })
      return next()
    }
    const previous = line.last
    line.last = outgoing
    if (!previous.writableFinished) {
      if (!socket.destroyed) await answered(previous, line)
      if (socket.destroyed) {
        throw new ToolselError('ABORTED', 'The client closed the connection.')
      }
    }
    return next()
  }
}

/** Settles when `previous` has gone out or closed, or the connection closed. */
function answered(previous: ServerResponse, line: Line): Promise<void> {
  return new Promise<void>((resolve) => {
    const done = () => {
      previous.off('finish', done).off('close', done)
      line.waiting.delete(done)
      resolve()
    }
    previous.once('finish', done).once('close', done)
    line.waiting.add(done)
  })
}
