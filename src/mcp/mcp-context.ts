/**
 * What every MCP session shares, whatever its transport: the service, the gateway (when one is
 * configured), token accounting and the cache of scoped library views.
 * @module
 */
import { testSwitchMs } from '../config/env-vars.ts'
import { assertKeyLibrary, keyDefaultLibrary } from '../server/auth/api-keys.ts'
import type { ToolselService } from '../service/toolsel-service.ts'
import type { IndexedLibrary } from '../store/indexed-library.ts'
import type { McpGateway } from './gateway/mcp-gateway.ts'
import { ScopedLibraries } from './scoped-libraries.ts'
import type { CallTurns } from './tool-result.ts'
import { loadTokenCounter } from './tokens/load-token-counter.ts'
import { TokenAccountant } from './tokens/token-accountant.ts'
import { createEstimateTokenCounter, type TokenCounter } from './tokens/token-counter.ts'
import type { ToolScope } from './tool-scope.ts'
import type { BudgetClient } from './view-budget.ts'

export interface McpContext {
  readonly service: ToolselService
  readonly gateway?: McpGateway
  readonly tokens: TokenAccountant
  readonly views: ScopedLibraries
  /** The configured scope (`mcp.servers`, `mcp.tags`); clients can only narrow it. */
  readonly scope: ToolScope
  /**
   * The library used when a call names none (a session whose API key may not use it gets the
   * key's first library: `libraryNameOf`).
   */
  defaultLibrary(): string
  /**
   * How long a call over the gateway library waits for its first sync (`awaitGatewaySync`):
   * FIRST_SYNC_WAIT_MS, or less under the test-only switch TOOLSEL_TEST_FIRST_SYNC_WAIT_MS.
   */
  readonly firstSyncWaitMs: number
  /**
   * Stops following the service's library changes, drops the cached views and stops the
   * tokenizer worker the context started (not a `tokenCounter` it was given), without waiting
   * for one still loading: its load is aborted. Call it once
   * nothing serves through the context any more (`toolsel serve` and `toolsel mcp` do at
   * shutdown); counts after it use the estimate. Calling it again does nothing.
   */
  close(): Promise<void>
}

export interface McpContextOptions {
  gateway?: McpGateway
  /** Overrides `mcp.library` (e.g. `toolsel mcp --library`). */
  defaultLibrary?: string
  /** A fixed counter (tests, the benchmark); default: the best available, loaded on first use. */
  tokenCounter?: TokenCounter
}

export function createMcpContext(
  service: ToolselService,
  options: McpContextOptions = {},
): McpContext {
  const { config, logger } = service
  const { gateway } = options
  let counter: Promise<TokenCounter> | undefined
  let closed = false
  // Stops a tokenizer still loading when the context closes (shutdown doesn't wait 1-4 s for it).
  const loading = new AbortController()
  const tokens = new TokenAccountant(
    options.tokenCounter ??
      (() =>
        closed
          ? Promise.resolve(createEstimateTokenCounter())
          : (counter ??= loadTokenCounter({
              tokenizerDir: config.mcp.tokenizerDir,
              logger,
              signal: loading.signal,
            }).then((loaded) => (logger.info(`Token counting: ${counterNote(loaded)}`), loaded)))),
  )
  // Read here, at the start: a wrong value fails it (testSwitchMs).
  const firstSyncWaitMs =
    testSwitchMs('TOOLSEL_TEST_FIRST_SYNC_WAIT_MS', 100, FIRST_SYNC_WAIT_MS) ?? FIRST_SYNC_WAIT_MS
  const views = new ScopedLibraries(config)
  // A replaced or deleted library's views go at once: they hold the old version in memory.
  const unsubscribe = service.libraries.onChange((name, indexed) =>
    views.forget(name, indexed?.library),
  )
  return {
    service,
    gateway,
    tokens,
    views,
    scope: { servers: config.mcp.servers, tags: config.mcp.tags },
    firstSyncWaitMs,
    defaultLibrary: () =>
      options.defaultLibrary ||
      config.mcp.library ||
      (gateway && config.gateway.default ? gateway.libraryName : service.defaultLibraryName),
    async close() {
      if (closed) return
      closed = true
      unsubscribe()
      views.clear()
      // A tokenizer still loading is terminated where it is (counts waiting for it get the
      // estimate); one already loaded is stopped.
      loading.abort()
      await counter?.then(
        (loaded) => loaded.close?.(),
        () => undefined,
      )
    },
  }
}

/** One client's view: what it may see, and its default library (`?library=` on HTTP). */
export interface McpSession {
  scope: ToolScope
  library?: string
  /** Libraries the client's API key may use; empty or absent = all. */
  libraries?: readonly string[]
  /** The API key's name, for messages. */
  keyName?: string
  /**
   * The API key itself (its principal: one object per key), whose budget new scoped views are
   * built within (`mcp.scopeViewToolsPerMinute`); absent over stdio.
   */
  key?: BudgetClient
  /**
   * Over HTTP, the turns of this request's tool calls that work on the event loop (search,
   * select, schemas; `createCallTurns`): a JSON-RPC batch runs them one at a time. Absent over
   * stdio, whose process serves one client.
   */
  turns?: CallTurns
}

/**
 * How long a search, selection or schema load over the gateway library waits for the gateway's
 * first sync before it answers over the tools listed so far, with a `syncing` note: long enough
 * for upstreams that start in a few seconds (an agent's first search right after `initialize`
 * then sees every tool), short enough that a hung upstream (the first sync then runs to
 * `gateway.firstSyncTimeoutMs`) costs a client a few seconds, not its request timeout.
 */
export const FIRST_SYNC_WAIT_MS = 5000

/** The counter loaded, and how long its load took in its worker thread (the estimate: none). */
function counterNote(counter: TokenCounter): string {
  if (counter.loadMs === undefined) return counter.name
  return `${counter.name} (loaded in ${Math.round(counter.loadMs).toLocaleString('en-US')} ms, in a worker thread)`
}

/**
 * The library a call names, else the session's, else the default when the session's API key may
 * use it, else the key's first library (`keyDefaultLibrary`).
 */
function libraryNameOf(context: McpContext, session: McpSession, library?: string): string {
  return (
    library ||
    session.library ||
    keyDefaultLibrary({ libraries: session.libraries ?? [] }, context.defaultLibrary())
  )
}

/**
 * Before answering over the gateway library while its first sync runs: waits for it
 * (`context.firstSyncWaitMs` at most, no longer than `signal`), then says what is still missing for
 * this session's scope (undefined when nothing is: the sync is over, or not the gateway library).
 */
export async function awaitGatewaySync(
  context: McpContext,
  session: McpSession,
  library: string | undefined,
  signal?: AbortSignal,
): Promise<string | undefined> {
  const { gateway } = context
  if (!gateway || gateway.synced) return undefined
  if (libraryNameOf(context, session, library) !== gateway.libraryName) return undefined
  await gateway.waitForFirstSync(context.firstSyncWaitMs, signal)
  return gateway.syncingNote(session.scope)
}

/** The library a call names (else the session's, else the default), as seen through the scope. */
export async function resolveView(
  context: McpContext,
  session: McpSession,
  library?: string,
): Promise<IndexedLibrary> {
  const name = libraryNameOf(context, session, library)
  assertKeyLibrary(
    { name: session.keyName ?? 'this key', libraries: session.libraries ?? [] },
    name,
    context.service.libraries,
  )
  return context.views.view(context.service.libraries.require(name), session.scope, session.key)
}
