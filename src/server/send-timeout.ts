/**
 * A connection whose answer makes no progress for `server.sendTimeoutMs` is closed: a client that
 * sends requests but never reads the answers held its connection and the unsent answer forever
 * (Node's own timeouts stop at the request: `headersTimeout` and `requestTimeout` bound receiving
 * it, `keepAliveTimeout` the idle time after the answer went out). As nginx's `send_timeout`: the
 * time between two steps of the answer into the OS's socket buffers, not the whole answer's, so a
 * slow client that reads is never cut.
 *
 * Progress is what Node can see: a write of the socket completed (`bytesWritten` less
 * `writableLength` grew) or libuv's queue of the write in flight shrank (`writeQueueSize`). The OS
 * takes more of an answer when its send buffer has room again, which is when the client has read
 * about half of what it held (on loopback up to a few MiB): a client that reads more slowly than
 * that per `sendTimeoutMs` (at the default 60 s, tens of KiB a second) is seen as stalled.
 *
 * Time the process itself was held is not the client's: a check that runs late (the event loop
 * blocked by a long synchronous task) runs before the writes completed meanwhile are seen (timers
 * run before I/O callbacks), so it counts only the time the checks kept to their interval (each
 * check's lateness is added to each watch's start), and a check comes at least every half timeout,
 * so that the one blind check after a block, counted as one interval, never reaches the timeout.
 * Before round 48 a client reading at full speed was reset by the first check after a block
 * longer than the timeout; until review10 (round 48) still when the block began right after a
 * check, with a `sendTimeoutMs` under 2 s (a check every timeout, or a block under two intervals
 * counted whole).
 * @module
 */
import type { Server } from 'node:http'
import type { Socket } from 'node:net'

/** One connection's output as last looked at. */
interface Watch {
  /** Bytes of completed writes (`bytesWritten - writableLength`). */
  completed: number
  /** libuv's bytes still queued of the write in flight. */
  queued: number
  /** When its pending output last moved (or first was pending), ms (performance.now). */
  since: number
}

/** `writeQueueSize` of the socket's libuv handle: Node's accessor, live; 0 when closed. */
function queuedBytes(socket: Socket): number {
  const handle = (socket as unknown as { _handle?: { writeQueueSize?: unknown } | null })._handle
  const size = handle?.writeQueueSize
  return typeof size === 'number' ? size : 0
}

export interface SendTimeoutOptions {
  /** How often connections are looked at, ms. Default: half of `timeoutMs`, at most 1,000. */
  checkEveryMs?: number
  /** Called for each connection closed, before it is destroyed. */
  onClose?: (socket: Socket, stalledMs: number) => void
}

/**
 * Watches `server`'s connections (from now on) and resets each whose pending output has not
 * moved for `timeoutMs`. Returns a stop function (also called when the server closes).
 */
export function closeStalledSends(
  server: Server,
  timeoutMs: number,
  { checkEveryMs = Math.min(1000, timeoutMs / 2), onClose }: SendTimeoutOptions = {},
): () => void {
  const open = new Set<Socket>()
  const watches = new WeakMap<Socket, Watch>()
  const onConnection = (socket: Socket) => {
    open.add(socket)
    socket.once('close', () => open.delete(socket))
  }
  server.on('connection', onConnection)
  let lastCheck = performance.now()
  const check = () => {
    const now = performance.now()
    // Run late: the lateness is not time in which a client could be seen to read (the I/O done
    // meanwhile is seen after this check). Was counted unless past one more interval.
    const held = Math.max(0, now - lastCheck - checkEveryMs)
    lastCheck = now
    for (const socket of open) {
      if (socket.destroyed || socket.writableLength === 0) {
        watches.delete(socket)
        continue
      }
      const completed = socket.bytesWritten - socket.writableLength
      const queued = queuedBytes(socket)
      const watch = watches.get(socket)
      if (watch === undefined || completed > watch.completed || queued < watch.queued) {
        watches.set(socket, { completed, queued, since: now })
        continue
      }
      // A new write dispatched since (its queue larger): remembered, not progress.
      watch.queued = queued
      watch.since += held
      if (now - watch.since < timeoutMs) continue
      open.delete(socket)
      onClose?.(socket, Math.round(now - watch.since))
      // A reset (SO_LINGER 0): a plain close leaves the unsent bytes in the OS's buffers until it
      // gives up on the client (minutes, a few MiB a connection).
      socket.resetAndDestroy()
    }
  }
  const timer = setInterval(check, checkEveryMs)
  timer.unref()
  const stop = () => {
    clearInterval(timer)
    server.off('connection', onConnection)
    server.off('close', stop)
    open.clear()
  }
  server.on('close', stop)
  return stop
}
