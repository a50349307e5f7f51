/**
 * Gateway mode: toolsel connects to the configured upstream MCP servers as a client, keeps one
 * namespaced library of all their tools (`server.tool` ids) in `service.libraries`, keeps it in
 * sync (on `notifications/tools/list_changed` and on a TTL), and forwards `call_tool` to the
 * server that owns the tool. One server being down or slow never affects the others.
 * @module
 */
import { setTimeout as delay } from 'node:timers/promises'
import type { CallToolResult } from '@modelcontextprotocol/sdk/types.js'
import type { GatewayConfig } from '../../config/schema.ts'
import { ToolselError } from '../../errors.ts'
import type { Tool } from '../../library/tool.ts'
import { ToolLibrary } from '../../library/tool-library.ts'
import type { ToolselService } from '../../service/toolsel-service.ts'
import { buildIndexedLibrary, publishLibrary } from '../../store/library-lifecycle.ts'
import { isUnscoped, serverInScope, UNSCOPED, type ToolScope } from '../tool-scope.ts'
import { ConnectSlots } from './connect-slots.ts'
import { diffTools, isEmptyDiff, type ToolDiff } from './diff-tools.ts'
import { UpstreamConnection } from './upstream-connection.ts'
import { settledBy } from './settled-by.ts'
import type { FirstSyncCounts, UpstreamState } from './upstream-state.ts'
import { shownName } from '../../library/name-characters.ts'

export class McpGateway {
  readonly config: GatewayConfig
  readonly #service: ToolselService
  readonly #upstreams = new Map<string, UpstreamConnection>()
  readonly #slots: ConnectSlots
  #rebuilding: Promise<void> | undefined
  #rebuildAgain = false
  #syncTimer: NodeJS.Timeout | undefined
  #lastDiff: ToolDiff | undefined
  #synced = false
  #opened: Promise<void> | undefined
  #closed = false
  /** Resolves when the first sync is over (or the gateway closed): `waitForFirstSync`. */
  #firstSyncOver: () => void = () => undefined
  readonly #firstSync = new Promise<void>((resolve) => (this.#firstSyncOver = resolve))

  constructor(service: ToolselService, config: GatewayConfig = service.config.gateway) {
    this.#service = service
    this.config = config
    this.#slots = new ConnectSlots(config.connectConcurrency)
    for (const [name, upstream] of Object.entries(config.servers)) {
      if (!upstream.enabled) continue
      const connection = new UpstreamConnection(name, upstream, {
        settings: config,
        logger: service.logger,
        onTools: () => void this.#rebuild(),
        slots: this.#slots,
      })
      this.#upstreams.set(name, connection)
    }
  }

  /** Name of the gateway library in `service.libraries`. */
  get libraryName(): string {
    return this.config.library
  }

  /**
   * True once `start()` has connected to (or given up on the first attempt at) every upstream,
   * or `firstSyncTimeoutMs` passed, and indexed the tools they listed. Until then `/readyz`
   * answers 503 and `call_tool` answers UPSTREAM_UNAVAILABLE for tools it does not know yet.
   */
  get synced(): boolean {
    return this.#synced
  }

  /** What the last re-index changed (for tests and logs). */
  get lastDiff(): ToolDiff | undefined {
    return this.#lastDiff
  }

  /**
   * Registers the (empty) gateway library, so that the MCP tools can answer over it before the
   * first sync: fails with INVALID_CONFIG when `gateway.library` names a loaded library of
   * another kind. `start()` does it first; calling it again does nothing. `toolsel serve` calls
   * it before the service is ready (`toolsel mcp` before it serves), so no call finds the library
   * missing.
   */
  open(): Promise<void> {
    this.#opened ??= (async () => {
      const existing = this.#service.libraries.get(this.libraryName)
      if (existing && existing.manifest.source.format !== 'mcp-gateway') {
        throw new ToolselError(
          'INVALID_CONFIG',
          `gateway.library "${this.libraryName}" is already the name of a loaded library; choose another name.`,
        )
      }
      await this.#install(new ToolLibrary(this.libraryName, []))
    })()
    return this.#opened
  }

  /**
   * Registers the (empty) library (`open()`), connects to every upstream, `connectConcurrency` at a time,
   * and waits for each first attempt (bounded by `spawnTimeoutMs` for a stdio server's start-up,
   * `connectTimeoutMs` for an HTTP handshake, `listTimeoutMs` per tools/list page and
   * `listDeadlineMs` per listing, from when it has a slot), or until `firstSyncTimeoutMs`
   * passed, whichever comes first: servers that fail keep retrying in the background, and those
   * not done by then go on connecting.
   */
  async start(): Promise<void> {
    await this.open()
    const connecting = Promise.all(
      [...this.#upstreams.values()].map((upstream) => upstream.connect()),
    )
    // Connects never reject; those still running at firstSyncTimeoutMs go on in the background.
    let timer: NodeJS.Timeout | undefined
    const late = new Promise<'late'>((resolve) => {
      timer = setTimeout(() => resolve('late'), this.config.firstSyncTimeoutMs)
    })
    // close() ends the wait too: a stopping process is not held by this timer.
    const closed = this.#firstSync.then(() => 'closed' as const)
    const first = await Promise.race([connecting, late, closed])
    clearTimeout(timer)
    if (first === 'closed') return
    if (first === 'late') {
      const pending = this.servers().filter((server) => server.status === 'connecting')
      this.#service.logger.warn(
        `Gateway ready after gateway.firstSyncTimeoutMs (${this.config.firstSyncTimeoutMs} ms) with ${pending.length} upstreams still connecting; their tools are added when they list them`,
        { servers: pending.slice(0, 20).map((server) => server.name) },
      )
    }
    await this.whenSynced()
    if (this.#closed) return
    this.#synced = true
    this.#firstSyncOver()
    if (this.config.syncIntervalMs > 0) {
      this.#syncTimer = setInterval(() => void this.syncAll(), this.config.syncIntervalMs)
      this.#syncTimer.unref()
    }
  }

  /**
   * Waits for the first sync, `timeoutMs` at most (and no longer than `signal` lasts): true once
   * it is over, false when it is still running then (or the gateway closed).
   */
  async waitForFirstSync(timeoutMs: number, signal?: AbortSignal): Promise<boolean> {
    if (this.#synced || this.#closed) return this.#synced
    const stop = new AbortController()
    const timeout = delay(timeoutMs, undefined, {
      signal: signal ? AbortSignal.any([signal, stop.signal]) : stop.signal,
    }).catch(() => undefined)
    await Promise.race([this.#firstSync, timeout])
    stop.abort()
    return this.#synced
  }

  /**
   * For answers over the gateway library while the first sync runs (MCP `syncing`): which of
   * the upstreams `scope` may see are not done yet, and that their tools are missing until they
   * list them. Undefined once the first sync is over, or when every upstream in scope is done
   * and indexed.
   */
  syncingNote(scope: ToolScope = UNSCOPED): string | undefined {
    if (this.#synced) return undefined
    const counts = this.firstSyncCounts(scope)
    if (counts.done === counts.upstreams && !this.#rebuilding) return undefined
    return `The gateway's first sync of its upstream servers is not over (${this.firstSyncProgress(scope)}): the tools of servers that have not listed them yet are missing from this answer. Ask again shortly; list_servers shows each server's status.`
  }

  /** Re-lists every connected server's tools now. */
  async syncAll(): Promise<void> {
    await Promise.all([...this.#upstreams.values()].map((upstream) => upstream.sync()))
    await this.whenSynced()
  }

  /** Resolves once the library reflects every tool list received so far. */
  async whenSynced(): Promise<void> {
    while (this.#rebuilding) await this.#rebuilding
  }

  servers(): UpstreamState[] {
    return [...this.#upstreams.values()].map((upstream) => upstream.state())
  }

  /**
   * Why a tool id the gateway library lacks may yet exist: the first sync is not done, or the id
   * names a configured server whose tools were never listed (down since start-up). Undefined when
   * the id is simply unknown. With a `scope` (a scoped client): only the first-sync reason, which
   * names no server and counts only the servers in `scope`.
   */
  pendingReason(id: string, scope: ToolScope = UNSCOPED): string | undefined {
    if (!this.#synced) {
      return `the gateway is still connecting to its upstream servers (first sync not done: ${this.firstSyncProgress(scope)})`
    }
    if (!isUnscoped(scope)) return undefined
    const dot = id.indexOf('.')
    const upstream = dot > 0 ? this.#upstreams.get(id.slice(0, dot)) : undefined
    const state = upstream?.state()
    if (state && state.lastSyncAt === null) {
      return `server "${state.name}" is ${state.status} and has not listed its tools yet${state.lastError ? ` (${state.lastError})` : ''}`
    }
    return undefined
  }

  /**
   * Where the first sync stands, as counts: upstreams whose first attempt is over (`done`),
   * running one (`connecting`; `pastSlot` of them past `connectSlotMs`, outside the pool) and
   * waiting for a connect slot (`waiting`). With `scope` (a scoped MCP client, an API key
   * limited to some servers or tags), only the upstreams it may see are counted.
   */
  firstSyncCounts(scope: ToolScope = UNSCOPED): FirstSyncCounts {
    const all = [...this.#upstreams.values()].filter((upstream) =>
      serverInScope(upstream.name, upstream.config.tags, scope),
    )
    const first = all.filter((upstream) => upstream.state().status === 'connecting')
    const waiting = first.filter((upstream) => upstream.waitingForSlot).length
    return {
      upstreams: all.length,
      done: all.length - first.length,
      connecting: first.length - waiting,
      pastSlot: first.filter((upstream) => upstream.pastSlot).length,
      waiting,
      connectConcurrency: this.#slots.size,
    }
  }

  /**
   * Where the first sync stands, for `/readyz` and call errors while it runs: `120 of 500
   * upstreams done, 16 connecting, 364 waiting for a connect slot (gateway.connectConcurrency
   * 16)`, or `every upstream done, indexing their tools`.
   */
  firstSyncProgress(scope: ToolScope = UNSCOPED): string {
    const counts = this.firstSyncCounts(scope)
    const count = (n: number) => n.toLocaleString('en-US')
    if (counts.done === counts.upstreams) {
      // A scoped caller's servers may all be done while others (not its to know) are not.
      const all = isUnscoped(scope) ? counts : this.firstSyncCounts()
      return all.done === all.upstreams
        ? 'every upstream done, indexing their tools'
        : `${count(counts.done)} of ${count(counts.upstreams)} upstreams done`
    }
    const past =
      counts.pastSlot > 0
        ? ` (${count(counts.pastSlot)} past gateway.connectSlotMs ${count(this.config.connectSlotMs)}, outside the pool)`
        : ''
    const queue =
      counts.waiting > 0
        ? `, ${count(counts.waiting)} waiting for a connect slot (gateway.connectConcurrency ${count(counts.connectConcurrency)})`
        : ''
    return `${count(counts.done)} of ${count(counts.upstreams)} upstreams done, ${count(counts.connecting)} connecting${past}${queue}`
  }

  /** The upstream that owns `tool`, or undefined for a tool of no configured server. */
  upstreamOf(tool: Tool): UpstreamConnection | undefined {
    return tool.namespace === undefined ? undefined : this.#upstreams.get(tool.namespace)
  }

  /** Forwards a call to the tool's server and returns its result unchanged. */
  async callTool(
    tool: Tool,
    args: Record<string, unknown> | undefined,
    signal?: AbortSignal,
  ): Promise<CallToolResult> {
    const upstream = this.upstreamOf(tool)
    if (!upstream) {
      throw new ToolselError(
        'UNKNOWN_TOOL',
        `Tool ${shownName(tool.id)} does not belong to a gateway server (${[...this.#upstreams.keys()].join(', ') || 'none configured'}); call_tool only forwards tools of the "${this.libraryName}" library.`,
        { details: { id: tool.id } },
      )
    }
    return upstream.callTool(tool.name, args, signal)
  }

  /**
   * The start of a shutdown (`toolsel serve` calls it when the HTTP drain begins): ends the first
   * sync's wait and the TTL, and closes at once every upstream that serves no call (connecting,
   * waiting for a slot, down or reconnecting), so their processes end during the drain, not after
   * it. The connected ones stay for the requests being drained; `close()` ends them.
   */
  beginClose(): void {
    this.#closed = true
    this.#firstSyncOver()
    clearInterval(this.#syncTimer)
    // Upstreams still waiting for a connect slot stop waiting (none of them connects).
    this.#slots.close()
    for (const upstream of this.#upstreams.values()) if (!upstream.serving) void upstream.close()
  }

  /**
   * Closes every upstream, all at once; resolves once their processes ended (see
   * `UpstreamConnection.close`: a connected stdio server gets the SDK's 2 s after its stdin ends,
   * then SIGTERM and 2 s more). With `deadline` (a `Date.now()` time: `toolsel serve` passes the
   * end of `server.shutdownGraceMs`), the processes still running then are SIGKILLed, the
   * upstreams they belong to logged, and the wait for their exit is `KILL_WAIT_MS` at most.
   */
  async close(deadline?: number): Promise<void> {
    this.beginClose()
    const closing = Promise.all([...this.#upstreams.values()].map((upstream) => upstream.close()))
    if (deadline === undefined) return void (await closing)
    if ((await settledBy(closing, deadline - Date.now())) === 'settled') return
    const killed = [...this.#upstreams.values()].filter((upstream) => upstream.kill())
    if (killed.length > 0) {
      this.#service.logger.warn(
        `Upstream processes still running at the end of server.shutdownGraceMs (${this.#service.config.server.shutdownGraceMs} ms): killed (SIGKILL) ${killed.length}: ${killed
          .slice(0, 20)
          .map((upstream) => upstream.name)
          .join(', ')}${killed.length > 20 ? ', …' : ''}`,
      )
    }
    await settledBy(closing, KILL_WAIT_MS)
  }

  /**
   * Coalesces rebuild requests: one runs at a time, and one more runs if any arrived meanwhile,
   * after a pause as long as the last one took. Listings that land one after another (a
   * connect pool draining, list_changed from many servers) would otherwise re-index back to
   * back, each over every tool so far: 300 stdio servers through a pool of 16 re-indexed 68-92
   * times (5.3 s of CPU), with the pause 16-19 times (4.2-4.6 s), ready as soon (bench/README
   * "Round 31: the gateway's start-up (gw4)").
   */
  #rebuild(): Promise<void> {
    if (this.#rebuilding) {
      this.#rebuildAgain = true
      return this.#rebuilding
    }
    this.#rebuilding = (async () => {
      do {
        this.#rebuildAgain = false
        const started = performance.now()
        try {
          await this.#reindex()
        } catch (error) {
          this.#service.logger.error(`Gateway re-index failed: ${(error as Error).message}`)
        }
        if (this.#rebuildAgain) await delay(performance.now() - started)
      } while (this.#rebuildAgain)
    })().finally(() => (this.#rebuilding = undefined))
    return this.#rebuilding
  }

  /**
   * Re-indexes when the union of the last known tool lists differs from the library, by
   * `toolContentHash`. What "re-indexed" costs depends on the retriever:
   * - BM25 is rebuilt over all tools. IDF and the average document length are global, so one
   *   added tool changes every score, and wink's index is consolidated once and then read-only.
   *   That is cheap: tokenising a few thousand tool texts takes milliseconds.
   * - Embeddings are the expensive part (one model forward pass per tool). Dense indexes take
   *   vectors from the embedding cache keyed by content hash (`retrieve/dense/embedding-cache.ts`),
   *   so only added and changed tools are embedded. Token counts are cached the same way.
   * An unchanged list (the usual TTL result) costs nothing: no rebuild, no swap.
   */
  async #reindex(): Promise<void> {
    const tools = [...this.#upstreams.values()].flatMap((upstream) => upstream.tools)
    const next = new ToolLibrary(this.libraryName, tools)
    const current = this.#service.libraries.get(this.libraryName)?.library
    const diff = diffTools(current?.toolHashes ?? new Map(), next.toolHashes)
    if (current && isEmptyDiff(diff)) return
    this.#lastDiff = diff
    await this.#install(next)
    this.#service.logger.info(`Gateway library "${this.libraryName}" re-indexed`, {
      tools: next.size,
      added: diff.added.length,
      removed: diff.removed.length,
      changed: diff.changed.length,
    })
  }

  async #install(library: ToolLibrary): Promise<void> {
    const indexed = await buildIndexedLibrary(library, this.#service.config, {
      source: { format: 'mcp-gateway' },
    })
    await publishLibrary(this.#service.libraries, indexed)
  }
}

/** Most time `McpGateway.close` waits for the processes it SIGKILLed to exit, in ms. */
const KILL_WAIT_MS = 1000
