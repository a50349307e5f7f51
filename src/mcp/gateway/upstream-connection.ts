/**
 * One upstream MCP server as the gateway sees it: an SDK client, its last known tools, and its
 * health. It never throws from connect or sync: failures are recorded, reported by `state()`,
 * and repaired by reconnecting with backoff. The last known tools are kept while it is down, so
 * they stay searchable; only calls fail.
 * @module
 */
import type { Client } from '@modelcontextprotocol/sdk/client/index.js'
import type { Transport } from '@modelcontextprotocol/sdk/shared/transport.js'
import {
  McpError,
  CallToolResultSchema,
  ToolListChangedNotificationSchema,
  type CallToolResult,
} from '@modelcontextprotocol/sdk/types.js'
import type { GatewayConfig, UpstreamConfig } from '../../config/schema.ts'
import { ToolselError } from '../../errors.ts'
import { groupWarnings } from '../../library/importers/group-warnings.ts'
import type { Tool } from '../../library/tool.ts'
import type { Logger } from '../../log.ts'
import { timerAtLeast, type TimerAtLeast } from '../../timer-at-least.ts'
import { backoffDelay } from './backoff-delay.ts'
import type { ConnectSlot, ConnectSlots } from './connect-slots.ts'
import {
  classifyUpstreamError,
  describeUpstreamError,
  rejectedCallError,
  unavailableError,
} from './classify-upstream-error.ts'
import {
  createUpstreamTransport,
  isOversizeReply,
  oversizeMessage,
  upstreamKind,
  redactUpstream,
  killProcess,
  processExit,
  terminateStarting,
  unwrittenInput,
  writtenInput,
  upstreamTarget,
} from './create-upstream-transport.ts'
import {
  UpstreamInputBacklog,
  UpstreamInputStalled,
  UpstreamLineRunaway,
  UpstreamMessageFlood,
} from './bounded-read-buffer.ts'
import { upstreamStderrLog } from './upstream-stderr.ts'
import { newUpstreamClient, OutputChecks } from './upstream-output-schemas.ts'
import { listAllTools, upstreamTools } from './upstream-tools.ts'
import { upstreamState, type UpstreamState, type UpstreamStatus } from './upstream-state.ts'

export interface UpstreamOptions {
  settings: GatewayConfig
  logger: Logger
  /** Called after every successful tools/list (the gateway diffs and re-indexes). */
  onTools: (server: string) => void
  /** Shared by the gateway's upstreams: at most `gateway.connectConcurrency` connect at once. */
  slots?: ConnectSlots
}

/** The slot of a connection without a pool (none to wait for or step out of). */
const NO_POOL: ConnectSlot = { release: () => undefined, stepOut: () => false }

/** Longest upstream error text kept (`lastError`) and logged, in UTF-16 code units. */
export const MAX_UPSTREAM_ERROR_CHARS = 2000

/**
 * The defaults of the least time between the end of a listing of a server (at connect or a
 * re-list) and the next one (a re-list asked for meanwhile, on list_changed; a reconnect after a
 * failed listing), `gateway.relistGapMs`, and of its factor, `gateway.relistGapFactor`: the gap is
 * at least that many times the last listing's own time. An upstream sending list_changed in
 * a loop made toolsel re-list and re-index it back to back: 20,000 tools at 50 notifications a ms
 * held a core at 83% and stalled pings up to 863 ms (bench/README round 34, hard20). Since round 42
 * the connect's listing counts too (a list_changed during it started a second listing beside it),
 * and a reconnect after a failed listing waits for the gap as well as its backoff. A first change
 * after a quiet time is listed at once. Settings since round 43 (constants before).
 */
export { RELIST_GAP_FACTOR, RELIST_GAP_MS } from '../../config/schema.ts'

export class UpstreamConnection {
  readonly name: string
  readonly config: UpstreamConfig
  readonly #options: UpstreamOptions
  #client: Client | undefined
  #status: UpstreamStatus = 'connecting'
  #tools: Tool[] = []
  /** How the calls through each client are checked: its last complete listing's output schemas. */
  readonly #checks = new WeakMap<Client, OutputChecks>()
  #lastSyncAt: number | undefined
  #lastLatencyMs: number | undefined
  #lastError: string | undefined
  #downSince: number | undefined
  /**
   * The backoff's exponent, and the reconnect attempt `state()` reports while down: not reset by
   * a connect, only by a connection that stayed up `reconnectMaxMs`: a server whose every
   * connection ended in a flood or a crash within seconds came back every 1-2 s, listing its
   * tools again each time (bench/README round 35, gw9). Until round 36 the reported attempt
   * started over at 1 each outage, so "attempt 1" could wait 16 s.
   */
  #backoffStep = 0
  /** Times it went down since the gateway started (each outage once, however many attempts). */
  #outages = 0
  /** Why the last connection was dropped (for a call that went through it and fails late). */
  #droppedFor: string | undefined
  /** When the current connection was made (performance.now()), while there is one. */
  #upSince: number | undefined
  #retryTimer: TimerAtLeast | undefined
  /** Watches a stdin backlog that refused a request (`#watchInput`), while one runs. */
  #inputWatch: TimerAtLeast | undefined
  #nextRetryAt: number | undefined
  #syncing: Promise<void> | undefined
  #syncAgain = false
  /** Ends the wait between two re-lists early (close()). */
  #wakeSync: (() => void) | undefined
  #closed = false
  #waitingForSlot = false
  #pastSlot = false
  /** The client of an attempt still connecting (close() ends its process too). */
  #connecting: Client | undefined
  /**
   * Closes still running (a failed attempt's, a dropped connection's): the SDK ends a stdio
   * process 2 s after closing its stdin, then SIGTERM, on unref'd timers, so a process that
   * exits meanwhile (a shutdown) left the child running; close() waits for them.
   */
  #closing = new Set<Promise<void>>()
  /** The transports of the closes in `#closing` (a failed attempt's, a dropped connection's). */
  readonly #closingTransports = new Set<Transport>()
  /** Each client's transport (the SDK's client forgets it once closed). */
  readonly #transports = new WeakMap<Client, Transport>()
  readonly #stderr: (line: string) => void

  constructor(name: string, config: UpstreamConfig, options: UpstreamOptions) {
    this.name = name
    this.config = config
    this.#options = options
    this.#stderr = upstreamStderrLog(name, config, options.logger)
    this.#relistGap = options.settings.relistGapMs
  }

  /** The last tools listed (kept while the server is down). */
  get tools(): readonly Tool[] {
    return this.#tools
  }

  state(): UpstreamState {
    return upstreamState({
      name: this.name,
      transport: upstreamKind(this.config),
      target: upstreamTarget(this.config),
      status: this.#status,
      tags: this.config.tags,
      toolCount: this.#tools.length,
      lastSyncAt: this.#lastSyncAt,
      lastLatencyMs: this.#lastLatencyMs,
      lastError: this.#lastError,
      downSince: this.#downSince,
      attempt: this.#status === 'down' || this.#status === 'reconnecting' ? this.#backoffStep : 0,
      outages: this.#outages,
      nextRetryAt: this.#nextRetryAt,
    })
  }

  /**
   * Connects and lists the tools; on failure marks the server down and schedules a retry. First
   * it waits for one of the gateway's `connectConcurrency` slots (held to the end of the
   * listing, or `connectSlotMs`: then it steps out of the pool, when fewer than
   * `connectConcurrency` are out, and goes on without it). A stdio server's
   * start-up and `initialize` answer get `spawnTimeoutMs`, an HTTP server's handshake
   * `connectTimeoutMs`; each tools/list page gets `listTimeoutMs` (default `connectTimeoutMs`)
   * and the whole listing `listDeadlineMs`.
   */
  async connect(): Promise<void> {
    if (this.#closed || this.#client || this.#waitingForSlot) return
    this.#clearRetry()
    // A retry after an outage: `reconnecting` (attempt `#backoffStep`) until it succeeds or fails.
    if (this.#downSince !== undefined) this.#status = 'reconnecting'
    // Its timeouts start once it has a slot: waiting is not the server being slow.
    this.#waitingForSlot = true
    const slot = this.#options.slots ? await this.#options.slots.acquire() : NO_POOL
    this.#waitingForSlot = false
    // Undefined: the gateway closed while this one waited.
    if (!slot || this.#closed) return slot?.release()
    // A start-up still running after connectSlotMs (hung, or slow) steps out of the pool, if
    // fewer than connectConcurrency are out already (else it tries again connectSlotMs later).
    const { connectSlotMs } = this.#options.settings
    let bound: NodeJS.Timeout | undefined
    const stepOut = () => {
      if (slot.stepOut()) this.#pastSlot = true
      else bound = setTimeout(stepOut, connectSlotMs)
    }
    bound = setTimeout(stepOut, connectSlotMs)
    try {
      await this.#connectNow()
    } finally {
      clearTimeout(bound)
      this.#pastSlot = false
      slot.release()
    }
  }

  /**
   * Whether a connect attempt still running stepped out of the pool after
   * `gateway.connectSlotMs` (it goes on to its own timeouts without a slot).
   */
  get pastSlot(): boolean {
    return this.#pastSlot
  }

  /** Whether calls can go through: connected (or slow) with tools listed by this connection. */
  get serving(): boolean {
    return this.#client !== undefined && (this.#status === 'connected' || this.#status === 'slow')
  }

  /** Whether `connect()` is waiting for one of `gateway.connectConcurrency` slots. */
  get waitingForSlot(): boolean {
    return this.#waitingForSlot
  }

  async #connectNow(): Promise<void> {
    const { settings, logger } = this.#options
    const client = newUpstreamClient()
    client.setNotificationHandler(ToolListChangedNotificationSchema, () => void this.sync())
    const { maxMessageBytes, maxServerMessagesPerSecond } = settings
    // A stdio line that never ends closes the transport (bounded-read-buffer.ts), and so does a
    // flood of the server's own messages (closed here: the SDK only reports a read error):
    // said once, and the reason the server is down.
    let runaway: UpstreamLineRunaway | UpstreamMessageFlood | undefined
    client.onerror = (error) => {
      const flood = error instanceof UpstreamMessageFlood
      if (!(error instanceof UpstreamLineRunaway || flood) || runaway) return
      runaway = error
      logger.warn(`Upstream "${this.name}": ${error.message}`)
      // Down at once with that reason (a re-list in flight would otherwise fail first and say
      // 'Not connected'); markDown closes the client and its transport.
      if (flood && this.#client === client) this.#markDown(error)
      // Still connecting (a flood during the handshake): the process gets no grace either.
      else if (flood) {
        terminateStarting(transport)
        void transport.close().catch(() => {})
      }
    }
    client.onclose = () => {
      if (this.#client === client) this.#markDown(runaway ?? new Error('the connection closed'))
    }
    const transport = createUpstreamTransport(this.config, this.#stderr, {
      maxMessageBytes,
      maxServerMessagesPerSecond,
      // The request it answered failed on its own; the connection and other calls go on.
      onOversize: (dropped) =>
        logger.warn(
          `Upstream "${this.name}" sent a message over ${maxMessageBytes.toLocaleString('en-US')} bytes (gateway.maxMessageBytes): dropped (${dropped})`,
        ),
    })
    this.#transports.set(client, transport)
    const stdio = upstreamKind(this.config) === 'stdio'
    const handshake = stdio
      ? { timeoutMs: settings.spawnTimeoutMs, setting: 'spawnTimeoutMs' }
      : { timeoutMs: settings.connectTimeoutMs, setting: 'connectTimeoutMs' }
    this.#connecting = client
    try {
      try {
        await client.connect(transport, { timeout: handshake.timeoutMs })
      } catch (error) {
        if (classifyUpstreamError(error) !== 'timeout') throw error
        const what = stdio
          ? 'the process did not start and answer initialize'
          : 'no answer to initialize'
        throw new Error(`${what} within ${handshake.timeoutMs} ms (gateway.${handshake.setting})`, {
          cause: error,
        })
      }
      // Closed while connecting: don't keep a process or session nobody will close.
      if (this.#closed) return void (await this.#closeClient(client))
      this.#client = client
      // A list_changed meanwhile (sync) waits for this listing and the gap after it: until round
      // 42 it started a second listing at once, beside this one.
      const listing = this.#timedList(client)
      this.#connectListing = listing.catch(() => undefined)
      try {
        await listing
      } finally {
        this.#connectListing = undefined
      }
      if (this.#downSince !== undefined)
        logger.info(`Upstream "${this.name}" is back`, {
          downForMs: Date.now() - this.#downSince,
          attempt: this.#backoffStep,
          outages: this.#outages,
        })
      this.#upSince = performance.now()
      this.#downSince = undefined
      this.#lastError = undefined
    } catch (error) {
      if (this.#client === client) this.#client = undefined
      void this.#closeClient(client)
      // A flood or runaway line closed it (during the handshake, or the listing): that is why,
      // not the 'Connection closed' the request in flight failed with.
      this.#markDown(runaway ?? error)
    } finally {
      if (this.#connecting === client) this.#connecting = undefined
    }
  }

  /** Closes `client` (errors ignored) until its process exited; close() waits for it meanwhile. */
  #closeClient(client: Client): Promise<void> {
    const transport = this.#transports.get(client)
    const closing = client
      .close()
      .catch(() => undefined)
      .then(() => transport && processExit(transport))
    this.#closing.add(closing)
    if (transport) this.#closingTransports.add(transport)
    void closing.finally(() => {
      this.#closing.delete(closing)
      if (transport) this.#closingTransports.delete(transport)
    })
    return closing
  }

  /**
   * When the last listing ended (performance.now()), at connect or a re-list, and the gap that
   * follows it: no re-list of this server starts within it, nor a reconnect after a failed
   * listing.
   */
  #relistedAt = Number.NEGATIVE_INFINITY
  #relistGap: number
  /** Whether the last listing failed (a reconnect then waits for the gap too). */
  #listingFailed = false
  /** The listing of a connect in progress (settled: never rejects), while it runs. */
  #connectListing: Promise<void> | undefined

  /** `#list`, its end and time setting the gap before the next listing (failed or not). */
  async #timedList(client: Client): Promise<void> {
    const started = performance.now()
    this.#listingFailed = true
    try {
      await this.#list(client)
      this.#listingFailed = false
    } finally {
      this.#relistedAt = performance.now()
      const { relistGapMs, relistGapFactor } = this.#options.settings
      this.#relistGap = Math.max(relistGapMs, relistGapFactor * (this.#relistedAt - started))
    }
  }

  /**
   * Re-lists the tools (on list_changed and on the TTL). A request that arrives during a listing
   * makes it run once more afterwards (that listing may have read its pages before the change),
   * `gateway.relistGapMs` or `relistGapFactor` times the listing's time after it, whichever is longer:
   * any number of requests meanwhile make one more listing.
   */
  sync(): Promise<void> {
    if (this.#syncing) {
      this.#syncAgain = true
      return this.#syncing
    }
    this.#syncing = (async () => {
      // A connect's listing runs: this one follows it, after the gap (at most one listing in
      // flight and one waiting, whatever the number of requests).
      if (this.#connectListing) await this.#connectListing
      // The gap holds from the last re-list too, not only within one run of this loop: a server
      // sending its list_changed in bursts between fast listings was otherwise listed again at
      // once after each pause (about twice a gap).
      const since = performance.now() - this.#relistedAt
      if (since < this.#relistGap) await this.#pause(this.#relistGap - since)
      do {
        this.#syncAgain = false
        const client = this.#client
        if (!client || this.#closed) return
        await this.#timedList(client).catch((error: unknown) =>
          this.#failed('tools/list', error, client),
        )
        if (this.#syncAgain) await this.#pause(this.#relistGap)
      } while (this.#syncAgain)
    })().finally(() => (this.#syncing = undefined))
    return this.#syncing
  }

  /**
   * Waits `milliseconds` (the gap) by performance.now(), or until close(); keeps no process alive.
   * A timer alone may end up to a millisecond early: `timerAtLeast` makes the gap a floor.
   */
  #pause(milliseconds: number): Promise<void> {
    return new Promise<void>((resolve) => {
      const timer = timerAtLeast(milliseconds, done, true)
      this.#wakeSync = done
      function done() {
        timer.clear()
        resolve()
      }
    }).finally(() => (this.#wakeSync = undefined))
  }

  /** Forwards `tools/call`. Throws UPSTREAM_UNAVAILABLE when the server is down or too slow. */
  async callTool(
    name: string,
    args: Record<string, unknown> | undefined,
    signal?: AbortSignal,
  ): Promise<CallToolResult> {
    const client = this.#client
    if (!client || this.#status === 'down' || this.#status === 'reconnecting')
      throw unavailableError(this.state())
    const started = performance.now()
    try {
      // Not client.callTool: the gateway checks results against its own compiled output schemas
      // (upstream-output-schemas.ts); the SDK's cache of them is never filled.
      const checks = this.#checks.get(client) ?? new OutputChecks()
      checks.beforeCall(name)
      const result = (await client.request(
        { method: 'tools/call', params: { name, arguments: args } },
        CallToolResultSchema,
        { timeout: this.#options.settings.callTimeoutMs, signal },
      )) as CallToolResult
      checks.check(name, result)
      this.#observe(performance.now() - started, client)
      return result
    } catch (error) {
      if (signal?.aborted)
        throw new ToolselError('ABORTED', 'The call was cancelled.', { cause: error })
      // This call's answer was over gateway.maxMessageBytes (a stdio line, a JSON body, an
      // event of this call's SSE stream): it alone fails; the connection is fine.
      if (isOversizeReply(error)) {
        const tooLarge = oversizeMessage(this.#options.settings.maxMessageBytes)
        this.#lastError = `tools/call ${name}: ${tooLarge}`
        throw new ToolselError(
          'UPSTREAM_UNAVAILABLE',
          `Upstream "${this.name}" answered the call to "${name}" with ${tooLarge}; the answer was dropped.`,
          { cause: error, details: { server: this.name, tool: name } },
        )
      }
      // The connection this call went through was dropped (and said why) and another made since:
      // a stdio process ignoring the end of its stdin and SIGTERM fails its calls only when
      // SIGKILLed 4 s later, by when the new one may be up; that one is fine.
      const stale = client !== this.#client && this.#client !== undefined
      if (stale && classifyUpstreamError(error) !== 'rejected') {
        throw new ToolselError(
          'UPSTREAM_UNAVAILABLE',
          redactUpstream(
            `Upstream server "${this.name}" dropped the connection this call went through (${this.#droppedFor ?? describeUpstreamError(error)}); it is connected again: retry the call.`,
            this.config,
          ),
          { cause: error, details: { server: this.name, tool: name } },
        )
      }
      this.#failed(`tools/call ${name}`, error, client)
      if (error instanceof UpstreamInputBacklog) {
        throw new ToolselError(
          'UPSTREAM_UNAVAILABLE',
          `Upstream server "${this.name}": ${error.message}; it is marked slow. Retry later.`,
          { cause: error, details: { server: this.name, tool: name } },
        )
      }
      const failure =
        classifyUpstreamError(error) === 'rejected'
          ? rejectedCallError(this.name, name, error)
          : unavailableError(this.state(), error)
      throw new ToolselError(failure.code, redactUpstream(failure.message, this.config), {
        cause: error,
        details: failure.details,
      })
    }
  }

  /**
   * Closes the connection and the attempt still connecting; resolves once their processes ended
   * (the SDK's close: stdin ended, 2 s, SIGTERM, 2 s, SIGKILL). A process that has not answered
   * `initialize` yet gets SIGTERM at once (`terminateStarting`), and so do those of failed
   * attempts and dropped connections still in the SDK's close (their 2 s for stdin).
   */
  async close(): Promise<void> {
    this.#closed = true
    this.#clearRetry()
    this.#inputWatch?.clear()
    this.#wakeSync?.()
    for (const transport of this.#closingTransports) terminateStarting(transport)
    if (this.#connecting && this.#connecting !== this.#client)
      terminateStarting(this.#transports.get(this.#connecting))
    for (const client of [this.#client, this.#connecting])
      if (client) void this.#closeClient(client)
    this.#client = undefined
    this.#connecting = undefined
    await Promise.all(this.#closing)
  }

  /**
   * SIGKILLs this upstream's processes that still run: the connection's, the attempt's still
   * connecting, and those of closes in progress (the SDK's 2 s + 2 s). For the end of a shutdown's
   * grace (`McpGateway.close`); true when there was one.
   */
  kill(): boolean {
    let killed = false
    const transports = new Set(this.#closingTransports)
    for (const client of [this.#client, this.#connecting])
      if (client) transports.add(this.#transports.get(client)!)
    for (const transport of transports) killed = killProcess(transport) || killed
    return killed
  }

  async #list(client: Client): Promise<void> {
    const started = performance.now()
    const { settings } = this.#options
    const { tools: listed, checks } = await listAllTools(client, {
      pageTimeoutMs: settings.listTimeoutMs ?? settings.connectTimeoutMs,
      deadlineMs: settings.listDeadlineMs,
      maxTools: settings.maxToolsPerServer,
      maxChars: settings.maxListChars,
      compileBudgetMs: settings.listCompileBudgetMs,
    }).catch((error: unknown) => {
      // A page over gateway.maxMessageBytes: the listing fails with that error.
      if (isOversizeReply(error)) throw new Error(oversizeMessage(settings.maxMessageBytes))
      throw error
    })
    const { tools, warnings } = upstreamTools(this.name, listed, this.config.tags)
    // One line per skipped tool: thousands for a server whose every tool is malformed.
    for (const warning of groupWarnings(warnings).warnings) this.#options.logger.warn(warning)
    this.#tools = tools
    this.#checks.set(client, checks)
    this.#lastSyncAt = Date.now()
    this.#observe(performance.now() - started, client)
    this.#options.onTools(this.name)
  }

  /**
   * A request went through `client`: latency decides between connected and slow. Not when that
   * connection was dropped meanwhile (an answer read just before the flood that closed it).
   */
  #observe(milliseconds: number, client: Client): void {
    if (client !== this.#client) return
    this.#lastLatencyMs = Math.round(milliseconds)
    this.#status = milliseconds > this.#options.settings.slowMs ? 'slow' : 'connected'
  }

  /**
   * A request through `client` failed. Nothing when that connection was dropped already: its
   * drop marked the server down saying why (a runaway line, a flood…), the request's own
   * "Connection closed" would only cover that up, and a connection made since (or an attempt
   * running) is not the one that failed: before round 36 a call failing 4 s after its process
   * was dropped (a process ignoring SIGTERM) took down the healthy connection made meanwhile.
   */
  #failed(what: string, error: unknown, client: Client): void {
    if (client !== this.#client) return
    const failure = classifyUpstreamError(error)
    if (failure === 'connection') return this.#markDown(error)
    // A call the server answered with a JSON-RPC error: its message may echo the call's
    // arguments (another caller's), and every key that sees this server reads lastError
    // (list_servers, /readyz): only its code is kept; the caller got the message.
    const rejectedCall = failure === 'rejected' && what.startsWith('tools/call ')
    this.#lastError = this.#errorText(
      rejectedCall
        ? `${what}: rejected with JSON-RPC error ${error instanceof McpError ? error.code : 'unknown'} (its message went to that call's caller only)`
        : `${what}: ${describeUpstreamError(error)}`,
    )
    if (failure === 'timeout') this.#status = 'slow'
    if (failure === 'timeout' || error instanceof UpstreamInputBacklog) this.#watchInput(client)
  }

  /**
   * After a request was refused for the backlog on `client`'s stdin (UpstreamInputBacklog), or
   * timed out while some of its input still waited to be written (a process that stopped reading
   * before its backlog reached `maxMessageBytes`: light traffic may never get it there, and every
   * call would wait `callTimeoutMs` for good): every `callTimeoutMs`, a backlog of which not one
   * byte was taken since the last look (a hung or hostile process) drops the connection
   * (UpstreamInputStalled), which is made again with the usual backoff; one that was read from is
   * looked at again; an empty one ends the watch (the server reads again). Progress is counted in
   * bytes written to the pipe, so sends added meanwhile don't hide a stall. Each look comes at
   * least `callTimeoutMs` after the last by performance.now() (`timerAtLeast`: a plain timer may
   * end up to ~1 ms early, and the stall the error names would be shorter than it says).
   */
  #watchInput(client: Client): void {
    if (this.#inputWatch) return
    const { callTimeoutMs, maxMessageBytes } = this.#options.settings
    const transport = this.#transports.get(client)
    if (unwrittenInput(transport) === 0) return
    let written = writtenInput(transport)
    const look = () => {
      this.#inputWatch = undefined
      if (client !== this.#client || this.#closed) return
      const waiting = unwrittenInput(transport)
      if (waiting === 0) return
      // Logged by markDown ('is down: <why>').
      if (writtenInput(transport) <= written)
        return this.#markDown(new UpstreamInputStalled(waiting, maxMessageBytes, callTimeoutMs))
      written = writtenInput(transport)
      this.#inputWatch = timerAtLeast(callTimeoutMs, look, true)
    }
    this.#inputWatch = timerAtLeast(callTimeoutMs, look, true)
  }

  /**
   * An upstream's error as kept (`lastError`, in list_servers and the log line saying it is
   * down): its credentials redacted, then cut at MAX_UPSTREAM_ERROR_CHARS (cut after redacting,
   * so no secret is cut in half and shown in part). A server's error message can be as long as
   * gateway.maxMessageBytes (8 MiB): a 4 MiB one was kept whole and logged as one 5 MB line.
   */
  #errorText(text: string): string {
    const redacted = redactUpstream(text, this.config)
    if (redacted.length <= MAX_UPSTREAM_ERROR_CHARS) return redacted
    const more = redacted.length - MAX_UPSTREAM_ERROR_CHARS
    return `${redacted.slice(0, MAX_UPSTREAM_ERROR_CHARS)}… (${more.toLocaleString('en-US')} more characters)`
  }

  #markDown(error: unknown): void {
    if (this.#closed) return
    this.#inputWatch?.clear()
    this.#inputWatch = undefined
    const client = this.#client
    this.#client = undefined
    if (client) this.#droppedFor = this.#errorText(describeUpstreamError(error))
    if (client) void this.#closeClient(client)
    // A connection that stayed up as long as the longest delay was a real recovery: the backoff
    // starts over. One that ended sooner (a flood, a crash at each start) keeps it growing.
    const upFor = this.#upSince === undefined ? 0 : performance.now() - this.#upSince
    this.#upSince = undefined
    if (upFor >= this.#options.settings.reconnectMaxMs) this.#backoffStep = 0
    // Logged once an outage: a failed reconnect attempt is the same outage.
    const firstFailure = this.#downSince === undefined
    this.#status = 'down'
    this.#downSince ??= Date.now()
    this.#lastError = this.#errorText(describeUpstreamError(error))
    if (firstFailure) this.#outages += 1
    this.#scheduleRetry()
    if (firstFailure) {
      this.#options.logger.warn(`Upstream "${this.name}" is down: ${this.#lastError}`, {
        tools: this.#tools.length,
        outages: this.#outages,
        attempt: this.#backoffStep,
        nextRetryInMs: this.#nextRetryAt === undefined ? null : this.#nextRetryAt - Date.now(),
      })
    }
  }

  #scheduleRetry(): void {
    if (this.#closed || this.#retryTimer) return
    const { reconnectInitialMs, reconnectMaxMs } = this.#options.settings
    // Not before the gap after the last listing either: a server failing each listing (past
    // listCompileBudgetMs, listDeadlineMs) was listed again after reconnectInitialMs, 1 s.
    // (After a listing that succeeded, the backoff alone: it grows over short connections.)
    const gapLeft = this.#listingFailed ? this.#relistedAt + this.#relistGap - performance.now() : 0
    const delay = Math.max(
      backoffDelay(this.#backoffStep, reconnectInitialMs, reconnectMaxMs),
      Math.ceil(gapLeft),
    )
    this.#backoffStep += 1
    this.#nextRetryAt = Date.now() + delay
    // At least the delay by performance.now() (timerAtLeast): the gap above is a floor, and a
    // plain timer may end up to a millisecond early.
    this.#retryTimer = timerAtLeast(
      delay,
      () => {
        this.#retryTimer = undefined
        void this.connect()
      },
      true,
    )
  }

  #clearRetry(): void {
    this.#retryTimer?.clear()
    this.#retryTimer = undefined
    this.#nextRetryAt = undefined
  }
}
