/**
 * The SDK client transport for one configured upstream: a spawned process over stdio, or
 * Streamable HTTP. The only gateway file that knows the two kinds apart.
 * @module
 */
import type { ChildProcess } from 'node:child_process'
import type { Writable } from 'node:stream'
import { StdioClientTransport } from '@modelcontextprotocol/sdk/client/stdio.js'
import { serializeMessage } from '@modelcontextprotocol/sdk/shared/stdio.js'
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js'
import type { Transport } from '@modelcontextprotocol/sdk/shared/transport.js'
import { ErrorCode, McpError } from '@modelcontextprotocol/sdk/types.js'
import type { UpstreamConfig } from '../../config/schema.ts'
import {
  BoundedReadBuffer,
  OwnMessageCount,
  UpstreamInputBacklog,
  type MessageId,
} from './bounded-read-buffer.ts'
import { settledBy } from './settled-by.ts'

export {
  redactedUpstreamConfig,
  redactUpstream,
  upstreamKind,
  upstreamTarget,
  type UpstreamKind,
} from './upstream-redaction.ts'

/** What bounds one upstream: its messages' size and rate, and what to do when one is over it. */
export interface UpstreamLimits {
  /** Most bytes of one message (`gateway.maxMessageBytes`). */
  maxMessageBytes: number
  /**
   * Most messages of its own a second (`gateway.maxServerMessagesPerSecond`, default
   * `MAX_SERVER_MESSAGES_PER_SECOND`); past it the transport reports an UpstreamMessageFlood.
   */
  maxServerMessagesPerSecond?: number
  /**
   * Told, for the log, of each message dropped at `maxMessageBytes`: `answered` says which request
   * it failed, if any. The request it answered is failed by the transport itself (`isOversizeReply`):
   * a stdio line (skipped to its newline; the process goes on), an HTTP call's JSON answer or
   * SSE stream (the SSE stream of that one POST is cut). The other calls go on.
   */
  onOversize: (dropped: string) => void
}

/** The message of an upstream answer cut at `maxMessageBytes`. */
export function oversizeMessage(maxMessageBytes: number): string {
  return `an upstream message was over ${maxMessageBytes.toLocaleString('en-US')} bytes (gateway.maxMessageBytes)`
}

/** An upstream HTTP answer cut at `gateway.maxMessageBytes` (`boundedFetch`). */
class UpstreamMessageTooLarge extends Error {
  constructor(maxMessageBytes: number) {
    super(oversizeMessage(maxMessageBytes))
    this.name = 'UpstreamMessageTooLarge'
  }
}

/**
 * The `data` of the error the transport answers a request with when its answer was over the
 * limit: an object no upstream can send (what arrives is parsed into new objects).
 */
const OVERSIZE_REPLY = Object.freeze({ limit: 'gateway.maxMessageBytes' })

/** A request failed because its answer was over `gateway.maxMessageBytes` (and nothing else). */
export function isOversizeReply(error: unknown): boolean {
  return (
    error instanceof UpstreamMessageTooLarge ||
    (error instanceof McpError && error.data === OVERSIZE_REPLY)
  )
}

/** Fails request `id` as if the upstream had answered it with `isOversizeReply`'s error. */
function failRequest(transport: Transport, id: MessageId, maxMessageBytes: number): void {
  transport.onmessage?.({
    jsonrpc: '2.0',
    id,
    error: {
      code: ErrorCode.InternalError,
      message: oversizeMessage(maxMessageBytes),
      data: OVERSIZE_REPLY,
    },
  })
}

/**
 * `onStderr` receives the process's stderr lines (stdio only): they go to our log instead of
 * our stderr, where in stdio mode they would mix with toolsel's own log. A line is cut at
 * `MAX_STDERR_LINE_CHARS` (the rest of it is never buffered).
 */
export function createUpstreamTransport(
  config: UpstreamConfig,
  onStderr: (line: string) => void,
  limits: UpstreamLimits,
): Transport {
  const { maxMessageBytes, onOversize, maxServerMessagesPerSecond } = limits
  const count = new OwnMessageCount(maxServerMessagesPerSecond)
  if ('url' in config) {
    const http: Transport = new StreamableHTTPClientTransport(new URL(config.url), {
      requestInit: { headers: config.headers },
      fetch: boundedFetch(maxMessageBytes, (ids) => {
        for (const id of ids) failRequest(http, id, maxMessageBytes)
        onOversize(
          ids.length > 0
            ? `the answer to request ${ids.join(', ')}, which failed`
            : 'an event of the standalone SSE stream, which reconnects',
        )
      }),
      // Our own backoff reconnects the whole client; the SDK's SSE retries would only add noise.
      reconnectionOptions: {
        maxReconnectionDelay: 30_000,
        initialReconnectionDelay: 1_000,
        reconnectionDelayGrowFactor: 2,
        maxRetries: 2,
      },
    })
    // Its messages come parsed, from POSTs' answers and the standalone GET stream: counted on
    // their way to the client.
    trackRequests(http, count)
    capOwnMessages(http, count)
    return http
  }
  const transport = new StdioClientTransport({
    command: config.command,
    args: config.args,
    env: config.env,
    cwd: config.cwd,
    stderr: 'pipe',
  })
  // The SDK's read buffer would close the transport on a line over the limit (and on several
  // small lines that arrive together past it), failing every call; this one skips the line and
  // fails the one request it answered.
  const lines = new BoundedReadBuffer(
    maxMessageBytes,
    (id) => {
      if (id !== undefined) failRequest(transport, id, maxMessageBytes)
      onOversize(
        id !== undefined
          ? `the answer to request ${id}, which failed`
          : 'a message that answered no request',
      )
    },
    count,
  )
  replaceReadBuffer(transport, lines)
  trackRequests(transport, lines.count)
  boundUnreadInput(transport, maxMessageBytes)
  trackProcess(transport)
  let pending = ''
  let cut = false
  transport.stderr?.on('data', (chunk: Buffer) => {
    const lines = (pending + chunk.toString('utf8')).split('\n')
    pending = lines.pop() ?? ''
    for (const line of lines) {
      if (!cut && line.trim()) onStderr(clipLine(line))
      cut = false
    }
    // A line without its end yet: kept up to the cap, the rest of it dropped when it comes.
    if (pending.length > MAX_STDERR_LINE_CHARS) {
      if (!cut) onStderr(clipLine(pending))
      pending = ''
      cut = true
    }
  })
  return transport
}

/** The bytes waiting to be written to the stdin of `transport`'s process (0: none, or no process). */
export function unwrittenInput(transport: Transport | undefined): number {
  return (transport && PROCESSES.get(transport)?.child.stdin?.writableLength) ?? 0
}

/**
 * The bytes written to the stdin of `transport`'s process so far, those waiting (`unwrittenInput`)
 * not counted: what the process has taken into its pipe (0: no process).
 */
export function writtenInput(transport: Transport | undefined): number {
  // A pipe's net.Socket counts them (`bytesWritten`: those written and those waiting).
  const stdin = (transport && PROCESSES.get(transport)?.child.stdin) as
    (Writable & { bytesWritten?: number }) | null | undefined
  return stdin ? (stdin.bytesWritten ?? 0) - stdin.writableLength : 0
}

/**
 * Refuses `transport`'s sends (UpstreamInputBacklog) while its stdin holds over `maxBytes`
 * unwritten, and writes the others as the SDK's `send` does (at once; settled once written or,
 * past the pipe's high-water mark, at its next 'drain'), but with one 'drain' listener for all the
 * sends waiting. The SDK's adds one per such write: an upstream that reads none of its input got
 * one for each call and each cancellation (a timed-out request's notifications/cancelled) sent
 * meanwhile, and Node warned "MaxListenersExceededWarning: 11 drain listeners added to [Socket]"
 * (the gateway's tests, upstream-bounds). Their count is bounded only by `maxBytes` (about 100
 * bytes a cancellation), so a higher listener limit would only hide them.
 */
function boundUnreadInput(transport: StdioClientTransport, maxBytes: number): void {
  const send = transport.send.bind(transport)
  let drained: Promise<void> | undefined
  transport.send = (message) => {
    const waiting = unwrittenInput(transport)
    if (waiting > maxBytes) return Promise.reject(new UpstreamInputBacklog(waiting, maxBytes))
    const stdin = PROCESSES.get(transport)?.child.stdin
    // Not started, or closed (the SDK's `pid` is its process's, none then): the SDK's, which
    // fails it ("Not connected").
    if (!stdin || transport.pid === null) return send(message)
    if (stdin.write(serializeMessage(message))) return Promise.resolve()
    drained ??= new Promise<void>((resolve) => stdin.once('drain', resolve)).finally(() => {
      drained = undefined
    })
    return drained
  }
}

/** Tells `count` the id of each request `transport` sends (an answer to none is the server's own). */
function trackRequests(transport: Transport, count: OwnMessageCount): void {
  const send = transport.send.bind(transport)
  transport.send = (message, options) => {
    if ('method' in message && 'id' in message) count.sent(message.id)
    return send(message, options)
  }
}

/**
 * Counts each message `transport` hands to its `onmessage` (set by the client, later); past the
 * cap it tells `onerror` the UpstreamMessageFlood (the gateway closes the connection) and drops
 * what comes after. A stdio transport's count is in its read buffer instead, before parsing.
 */
function capOwnMessages(transport: Transport, count: OwnMessageCount): void {
  let handler: Transport['onmessage']
  let flooded = false
  const counted: NonNullable<Transport['onmessage']> = (message, extra) => {
    if (flooded) return
    try {
      count.read(message)
    } catch (error) {
      flooded = true
      return transport.onerror?.(error as Error)
    }
    handler?.(message, extra)
  }
  Object.defineProperty(transport, 'onmessage', {
    configurable: true,
    get: () => (handler ? counted : undefined),
    set: (next: Transport['onmessage']) => (handler = next),
  })
}

/** How long a stdio server that never answered `initialize` has to exit on SIGTERM at close. */
const STARTING_KILL_MS = 1000

/** Most time `processExit` waits (the SDK's close has SIGKILLed the process 4 s after stdin). */
const EXIT_WAIT_MS = 10_000

/** The process of each started stdio transport, and when it exited (the SDK keeps it private). */
const PROCESSES = new WeakMap<Transport, { child: ChildProcess; exited: Promise<void> }>()

/**
 * Records `transport`'s process once started, for `terminateStarting`, `processExit` and
 * `killProcess`. The SDK keeps it in a private field, `_process` (SDK 1.32.2, pinned): its public
 * `pid` can't be waited on or signalled safely (a pid is reused once the process is reaped). An
 * SDK without that field fails the start here, by name, its process SIGKILLed by `pid`, not by
 * processes left running at close.
 */
export function trackProcess(transport: StdioClientTransport): void {
  const start = transport.start.bind(transport)
  transport.start = async () => {
    await start()
    const child = (transport as unknown as { _process?: ChildProcess })._process
    const pid: unknown = transport.pid
    if (typeof child?.kill !== 'function' || child.pid === undefined || child.pid !== pid) {
      if (typeof pid === 'number') process.kill(pid, 'SIGKILL')
      throw new Error(
        "@modelcontextprotocol/sdk's StdioClientTransport has no _process (a ChildProcess whose pid is its pid): the gateway can't end its upstream processes at close (src/mcp/gateway/create-upstream-transport.ts)",
      )
    }
    const exited = new Promise<void>((resolve) => child.once('exit', () => resolve()))
    PROCESSES.set(transport, { child, exited })
  }
}

const running = (child: ChildProcess) => child.exitCode === null && child.signalCode === null

/**
 * Ends the process of a stdio transport whose server never answered `initialize`, before the
 * SDK's close: SIGTERM at once, SIGKILL `STARTING_KILL_MS` later if it still runs. The SDK's
 * close ends stdin and waits 2 s for the process to exit, then SIGTERM, 2 s more, SIGKILL: a
 * grace for a server that speaks MCP. One still starting (`npx` fetching a package, node loading
 * its modules) or hung reads no stdin, so the grace only delayed a shutdown, 4 s for one that
 * ignores SIGTERM. Nothing for an HTTP transport or a process already gone.
 */
export function terminateStarting(transport: Transport | undefined): void {
  const tracked = transport && PROCESSES.get(transport)
  if (!tracked || !running(tracked.child)) return
  const { child } = tracked
  child.kill('SIGTERM')
  const kill = setTimeout(() => running(child) && child.kill('SIGKILL'), STARTING_KILL_MS)
  child.once('exit', () => clearTimeout(kill))
}

/**
 * SIGKILLs a stdio transport's process that still runs (the end of a shutdown's grace); true
 * when there was one. Nothing for an HTTP transport or a process already gone.
 */
export function killProcess(transport: Transport | undefined): boolean {
  const tracked = transport && PROCESSES.get(transport)
  if (!tracked || !running(tracked.child)) return false
  tracked.child.kill('SIGKILL')
  return true
}

/**
 * Resolves once a stdio transport's process exited (`EXIT_WAIT_MS` at most; at once for an HTTP
 * transport or one never started). `Client.close()` alone does not say so: when the SDK closed
 * the transport itself (a failed `initialize`), a second close returns at once while the first
 * one's process still runs its 2 s + 2 s.
 */
export async function processExit(transport: Transport): Promise<void> {
  const tracked = PROCESSES.get(transport)
  if (tracked && running(tracked.child)) await settledBy(tracked.exited, EXIT_WAIT_MS)
}

/**
 * Puts `lines` in place of the SDK's read buffer, a private field of `StdioClientTransport`
 * (SDK 1.32.2, pinned): an SDK that renamed it or changed its methods fails here, by name,
 * not by answers over the limit closing the transport again.
 */
export function replaceReadBuffer(transport: StdioClientTransport, lines: BoundedReadBuffer): void {
  const current = (transport as unknown as { _readBuffer?: Partial<BoundedReadBuffer> })._readBuffer
  if (
    typeof current?.append !== 'function' ||
    typeof current.readMessage !== 'function' ||
    typeof current.clear !== 'function'
  ) {
    throw new Error(
      "@modelcontextprotocol/sdk's StdioClientTransport has no _readBuffer {append, readMessage, clear}: gateway.maxMessageBytes can't be applied per line (src/mcp/gateway/bounded-read-buffer.ts)",
    )
  }
  Object.assign(transport, { _readBuffer: lines })
}

/** Longest upstream stderr line logged; longer ones are cut, saying how long they were. */
export const MAX_STDERR_LINE_CHARS = 2000

function clipLine(line: string): string {
  if (line.length <= MAX_STDERR_LINE_CHARS) return line
  return `${line.slice(0, MAX_STDERR_LINE_CHARS)}… (line cut at ${MAX_STDERR_LINE_CHARS} characters)`
}

type Fetch = (url: string | URL, init?: RequestInit) => Promise<Response>

/**
 * fetch whose answers are cut at `maxMessageBytes`: a JSON answer's body as a whole (the request
 * waiting for it fails with `UpstreamMessageTooLarge`), an SSE stream's each event (bytes since
 * the last blank line). Past it an SSE stream is cut and `onOversize` told the ids of the
 * requests its POST carried (none for the standalone GET stream): they wait on no other stream.
 */
function boundedFetch(maxMessageBytes: number, onOversize: (ids: MessageId[]) => void): Fetch {
  return async (url, init) => {
    const response = await fetch(url, init)
    if (response.body === null) return response
    const events = response.headers.get('content-type')?.includes('text/event-stream') === true
    // A JSON answer's error reaches its own request; an SSE stream's requests are failed.
    const over = () => {
      if (events) onOversize(requestIds(init?.body))
      return new UpstreamMessageTooLarge(maxMessageBytes)
    }
    const length = Number(response.headers.get('content-length') ?? 0)
    if (length > maxMessageBytes) {
      await response.body.cancel().catch(() => undefined)
      throw over()
    }
    let size = 0
    let lineEmpty = true
    const body = response.body.pipeThrough(
      new TransformStream<Uint8Array, Uint8Array>({
        transform(chunk, controller) {
          let start = 0
          for (let at = 0; events && at < chunk.length; at += 1) {
            const byte = chunk[at]
            if (byte === 10) {
              // A blank line ends an event: the bytes since the last one are its size.
              if (lineEmpty) {
                if (size + at - start > maxMessageBytes) return controller.error(over())
                size = 0
                start = at + 1
              }
              lineEmpty = true
            } else if (byte !== 13) lineEmpty = false
          }
          size += chunk.length - start
          if (size > maxMessageBytes) controller.error(over())
          else controller.enqueue(chunk)
        },
      }),
    )
    return new Response(body, {
      status: response.status,
      statusText: response.statusText,
      headers: response.headers,
    })
  }
}

/** The ids of the JSON-RPC requests a POST's body carried (the SDK sends it as a string). */
function requestIds(body: RequestInit['body']): MessageId[] {
  if (typeof body !== 'string') return []
  try {
    const parsed: unknown = JSON.parse(body)
    return (Array.isArray(parsed) ? parsed : [parsed]).flatMap((message: unknown) => {
      const { id, method } = (message ?? {}) as { id?: unknown; method?: unknown }
      return typeof method === 'string' && (typeof id === 'string' || typeof id === 'number')
        ? [id]
        : []
    })
  } catch {
    return []
  }
}
