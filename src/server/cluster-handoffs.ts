/**
 * Closes the connections the primary of `serve --workers N` handed to a worker that died before
 * taking them.
 *
 * node:cluster's round-robin scheduling (the default but on Windows) accepts every connection in
 * the primary and sends it to a worker, keeping the primary's copy open until the worker answers
 * that it took it (lib/internal/cluster/round_robin_handle.js closes it then). A worker killed
 * (SIGKILL, the OOM killer, a crash) between the two never answers, and nothing else closes that
 * copy: its client waited with no answer and no reset for as long as the primary ran (Node 20; one
 * such connection or more per worker killed under load). This keeps, per worker, the connections
 * sent to it and not yet answered, and closes them when it exits: their clients see the
 * connection reset, as the ones in flight in the dead worker do, and can retry.
 * @module
 */
import type { Worker } from 'node:cluster'

/** The handle of a connection as the primary sends it (a TCP or pipe handle): closable. */
interface ConnectionHandle {
  close(): void
}

/** node:cluster's message handing a connection to a worker, `{cmd, act: 'newconn', seq}`. */
function handoffSeq(message: unknown): number | undefined {
  const fields = message as { cmd?: unknown; act?: unknown; seq?: unknown } | null
  return fields?.cmd === 'NODE_CLUSTER' &&
    fields.act === 'newconn' &&
    typeof fields.seq === 'number'
    ? fields.seq
    : undefined
}

/** A worker's answer to message `seq`, `{cmd, ack: seq, accepted}`. */
function answeredSeq(message: unknown): number | undefined {
  const fields = message as { cmd?: unknown; ack?: unknown } | null
  return fields?.cmd === 'NODE_CLUSTER' && typeof fields.ack === 'number' ? fields.ack : undefined
}

/**
 * Watches what the primary hands `worker` (call it right after `cluster.fork()`): the connections
 * it has not answered for are closed once it has exited and its IPC channel has been read to its
 * end; `onClosed` is told how many, when any.
 */
export function closeUnansweredHandoffs(
  worker: Worker,
  onClosed: (count: number) => void = () => {},
): void {
  const child = worker.process
  const pending = new Map<number, ConnectionHandle>()
  const send = child.send.bind(child) as (...args: unknown[]) => boolean
  child.send = ((message: unknown, handle?: unknown, ...rest: unknown[]) => {
    const seq = handoffSeq(message)
    if (seq !== undefined && typeof (handle as ConnectionHandle | undefined)?.close === 'function')
      pending.set(seq, handle as ConnectionHandle)
    return send(message, handle, ...rest)
  }) as typeof child.send
  // Node emits the cluster's own messages (cmd NODE_…) as 'internalMessage', not 'message'.
  child.on('internalMessage', (message: unknown) => {
    const seq = answeredSeq(message)
    if (seq !== undefined) pending.delete(seq)
  })
  const closeAll = () => {
    // A worker that took a connection and then died closed its own copy; the primary's copy is
    // closed here if its answer never came (closing a closed handle does nothing).
    let closed = 0
    for (const handle of pending.values()) {
      try {
        handle.close()
        closed += 1
      } catch {
        // Already closed.
      }
    }
    pending.clear()
    if (closed > 0) onClosed(closed)
  }
  // Node emits 'exit' before 'disconnect' when the process ended before its IPC channel was read
  // to the end: an answer still in the channel (`accepted: false` from a worker closing its
  // server makes the primary hand that connection to another worker) is read before
  // 'disconnect', so a copy is closed only once both have happened.
  child.once('exit', () => (child.connected ? child.once('disconnect', closeAll) : closeAll()))
}
