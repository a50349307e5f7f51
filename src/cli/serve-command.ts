/** `toolsel serve`: start the HTTP service. */
import { existsSync, rmSync } from 'node:fs'
import cluster from 'node:cluster'
import type { Server, ServerResponse } from 'node:http'
import { Server as NetServer } from 'node:net'
import { availableParallelism } from 'node:os'
import type { Logger } from '../log.ts'
import type { Config } from '../config/schema.ts'
import { ToolselError } from '../errors.ts'
import { isLoopbackAddress } from '../server/middleware/host-check.ts'
import { createAdaptorServer } from '@hono/node-server'
import { createComponents } from '../components.ts'
import { checkOpenAiApiKey, openAiModelUsers } from '../models/openai/check-api-key.ts'
import { createMcpGateway } from '../mcp/gateway/create-mcp-gateway.ts'
import { gatewayConfigLayers, noUpstreamsWarning } from '../mcp/gateway/read-gateway-file.ts'
import { createApp } from '../server/app.ts'
import { answerClientErrors } from '../server/client-error.ts'
import { createConnectionLimit } from '../server/connection-limits.ts'
import { closeStalledSends } from '../server/send-timeout.ts'
import { clientAddresses, trustedProxiesWarning } from '../server/client-address.ts'
import { relayLibraryChanges, WorkerLibrarySync } from '../service/cluster-sync.ts'
import { IndexDirPoller, pickUpCommits, retryTestOptions } from '../service/index-dir-watch.ts'
import { relayModelHealth, shareModelHealth } from '../service/cluster-model-health.ts'
import {
  ModelHealth,
  modelUses,
  startupFallbacks,
  type StartupFallback,
} from '../service/model-health.ts'
import type { FailedIndex } from '../service/load-libraries.ts'
import {
  indexDirWarnings,
  savedDemoNeedsCheck,
  unshowableIdWarnings,
} from '../store/library-lifecycle.ts'
import { sweepSnapshotTemporaries } from '../store/snapshot.ts'
import { ToolselService } from '../service/toolsel-service.ts'
import {
  DEMO_CHECK_ENV,
  LISTEN_WHEN_READY_ENV,
  LOAD_WARNINGS_ENV,
  testSwitch,
  testSwitchMs,
} from '../config/env-vars.ts'
import { closeUnansweredHandoffs } from '../server/cluster-handoffs.ts'
import { relayClusterMetrics, workerClusterMetrics } from '../server/cluster-metrics.ts'
import { createMetrics, processRegistry } from '../server/metrics.ts'
import { REQUEST_ID_HEADER } from '../server/middleware/request-log.ts'
import { launcherGone, npmLauncher, unwatchedLauncherHint, type Launcher } from './npm-launcher.ts'
import {
  commandConfig,
  maxFileBytesFlag,
  numberFlag,
  parseCommand,
  type CommandIO,
  printConfig,
} from './cli-options.ts'
import { HELP as SERVE_HELP, OPTIONS } from './serve-help.ts'

export { HELP as SERVE_HELP, OPTIONS } from './serve-help.ts'

/** How long idle keep-alive connections may still bring a request after SIGTERM, in ms. */
const IDLE_DRAIN_MS = 250

/**
 * How long a stopping server waits, once its connections are closed and its library writes
 * settled, for the handlers of requests still running (a selection whose client left) before
 * its last line.
 */
const HANDLERS_WAIT_MS = 1000

/**
 * The shortest wait of a stopping server for the library writes it abandoned at the grace's end
 * (else server.shutdownGraceMs): a write stops at its next check, then removes its staged files
 * (tens of ms; 0.8 s seen at load 13), and a grace of 0 must not count every one as still running.
 */
const ABANDONED_WRITES_WAIT_MIN_MS = 2000
/** Longest wait before `--workers N`'s primary starts a worker again after one failed to start. */
const REPLACE_RETRY_MAX_MS = 60_000
/**
 * The first wait of that backoff, doubled each time: 1 s, or less under the test-only switch
 * TOOLSEL_TEST_WORKER_REPLACE_BASE_MS (100-1,000 ms; another value fails the start), so that a
 * test that kills workers one after another waits tenths of a second, not 1, 2, 4 and 8 s.
 */
function replaceRetryBaseMs(): number {
  return testSwitchMs('TOOLSEL_TEST_WORKER_REPLACE_BASE_MS', 100, 1000) ?? 1000
}
/**
 * The window over which `--workers N`'s primary counts workers that died after they were ready:
 * the first in it is replaced at once, each further one 1 s, 2 s, 4 s, … (at most
 * REPLACE_RETRY_MAX_MS) later, so a worker that crashes on every request, or at once after it is
 * ready, is not restarted in a busy loop.
 */
const CRASH_WINDOW_MS = 5 * 60_000

/** The signals that stop the server: a process manager's, Ctrl-C, the terminal gone. */
const STOP_SIGNALS = ['SIGTERM', 'SIGINT', 'SIGHUP'] as const

/**
 * How often a server started by npm looks whether its launcher is still there, in ms: 500, or
 * less under the test-only switch TOOLSEL_TEST_LAUNCHER_POLL_MS (50-500; another value fails the
 * start), so that a test that a server outlives four polls waits 0.5 s, not 2 s.
 */
function launcherPollMs(): number {
  return testSwitchMs('TOOLSEL_TEST_LAUNCHER_POLL_MS', 50, 500) ?? 500
}

/** `net.Server#close`: stops listening without http.Server's immediate closing of idle sockets. */
const netClose = NetServer.prototype.close

/**
 * Refuses to serve without keys on an address other machines can reach, unless the operator
 * said so; returns the line that tells how the server is protected.
 */
export function checkBindSafety(config: Config): string {
  const { adminKey, readKeys, insecureNoAuth } = config.auth
  const keys = (adminKey ? 1 : 0) + readKeys.length
  if (keys > 0) {
    if (!adminKey) {
      return `API keys: ${readKeys.length} read key(s), no admin key (libraries can't be changed over HTTP)`
    }
    return `API keys: admin key and ${readKeys.length} read key(s)`
  }
  if (isLoopbackAddress(config.server.host)) {
    return `No API key configured (TOOLSEL_ADMIN_KEY): listening on ${config.server.host} only, reachable from this machine`
  }
  if (!insecureNoAuth) {
    throw new ToolselError(
      'INVALID_CONFIG',
      `Refusing to listen on ${config.server.host} without an API key: anyone who can reach the port could replace libraries. Set TOOLSEL_ADMIN_KEY (auth.adminKey), or listen on 127.0.0.1, or pass --insecure-no-auth (TOOLSEL_INSECURE_NO_AUTH=true) if something in front of toolsel authenticates.`,
    )
  }
  return `WARNING: no API key and --insecure-no-auth: anyone who reaches ${config.server.host}:${config.server.port} can replace libraries`
}

/** How the last try of a commit that failed to load is logged (service/index-dir-watch.ts). */
/** The log line's start when a failed commit's last try (`server.indexRetryLimit`) fails too. */
const gaveUp = (tries: number) =>
  `Gave up after ${tries} tries (a new commit of it, or a restart, loads it again; /readyz failedIndexes keeps it)`

export async function serveCommand(argv: string[], io: CommandIO): Promise<number> {
  const { values } = parseCommand(argv, OPTIONS, 'serve')
  if (values.help) return (io.stdout(`${SERVE_HELP}\n`), 0)
  // Before anything that takes time: a launcher that goes while the libraries load is noticed too.
  const launcher = npmLauncher()
  const { config, logger } = await commandConfig(
    values,
    {
      'server.port': numberFlag(values.port, 'port'),
      'server.host': values.host,
      'library.default': values.library,
      'library.indexDir': values['index-dir'],
      'library.maxFileBytes': maxFileBytesFlag(values['max-file-bytes']),
      'plan.planner': values.planner,
      'select.selector': values.selector,
      'auth.insecureNoAuth': values['insecure-no-auth'],
      'server.workers': numberFlag(values.workers, 'workers'),
    },
    io,
    await gatewayConfigLayers(values['gateway-config']),
  )
  const noUpstreams =
    values['gateway-config'] && noUpstreamsWarning(values['gateway-config'], config.gateway)
  // Once: the workers of --workers N run this command too.
  if (noUpstreams && cluster.isPrimary) logger.warn(noUpstreams)
  // A trusted-proxy list over half of IPv4 or IPv6 (all of it is refused by the config check).
  const wideTrust = trustedProxiesWarning(config.server.trustedProxies)
  if (wideTrust && cluster.isPrimary) logger.warn(`server.trustedProxies: ${wideTrust}.`)
  if (values['print-config']) return printConfig(config, io)
  const unwatched = launcher ? undefined : unwatchedLauncherHint()
  if (unwatched) logger.warn(unwatched)
  // Entries of the index directory left alone are logged as the server logs, not printed by Node.
  indexDirWarnings.report = (message) => logger.warn(message)
  const protection = checkBindSafety(config)
  // Once (not per worker): a snapshot a killed process left half-written goes at the start, not
  // only at the next snapshot (one readdir of library.snapshotDir).
  if (cluster.isPrimary)
    for (const removed of await sweepSnapshotTemporaries(config.library.snapshotDir))
      logger.info(`Removed ${removed}: a snapshot left half-written by a process that is gone`)
  // Once, before any worker starts: a wrong API key fails the start (exit 2), not every request
  // (each of which would fall back), nor N workers each asking the endpoint.
  // What it finds failing (unreachable, a model not listed) is `degraded` from the start.
  let failingAtStart: StartupFallback[] = []
  if (cluster.isPrimary) {
    const users = openAiModelUsers([
      config.plan.planner,
      ...config.plan.fallback,
      config.select.selector,
      ...config.select.fallback,
    ])
    // What a failing call of each does, per stage: falls back, or fails the request (a model
    // with nothing after it in its list, or configured with no fallback).
    const uses = Object.fromEntries(users.map((user) => [user, modelUses(user, config)]))
    if (users.length > 0 && config.models.openai.baseUrl) {
      const { failing } = await checkOpenAiApiKey({
        ...config.models.openai,
        users,
        uses,
        logger,
      })
      failingAtStart = startupFallbacks(failing, config)
    }
  }
  if (cluster.isPrimary && config.server.workers !== 1) {
    logger.info(protection)
    return servePrimary(config.server.workers || availableParallelism(), config, logger, launcher, {
      failingAtStart,
    })
  }

  // N workers load the same libraries: one of them (LOAD_WARNINGS_ENV) warns of odd tool ids.
  if (cluster.isWorker && process.env[LOAD_WARNINGS_ENV] !== '1')
    unshowableIdWarnings.level = 'debug'
  const service = new ToolselService(config, logger, createComponents(config, logger))
  for (const fallback of failingAtStart) service.modelHealth.markFailing(fallback)
  // A worker's `degraded` is every worker's, kept by the primary (cluster-model-health.ts).
  const stopHealth = cluster.isWorker ? shareModelHealth(service.modelHealth) : undefined
  const gateway = await createMcpGateway(service)
  // A worker's /metrics answers every worker's, summed through the primary (cluster-metrics.ts).
  const ownMetrics = cluster.isWorker ? createMetrics(service, gateway) : undefined
  const clusterMetrics = ownMetrics
    ? workerClusterMetrics([processRegistry(), ownMetrics.registry])
    : undefined
  const { server: limits } = config
  // Counted by the server's 'connection' listener; over it, the app answers 429 (refuseOverLimit).
  // A trusted proxy is not counted: every client behind it has its address.
  // The app's request rate reads the same one (one list, one memory of its answers).
  const addresses = clientAddresses(limits.trustedProxies, limits.forwardedHeader)
  const connectionLimit = createConnectionLimit(limits.maxConnectionsPerAddress, {
    exempt: addresses.isTrustedProxy,
  })
  const app = createApp(service, {
    gateway,
    connectionLimit,
    clientAddresses: addresses,
    ...(ownMetrics &&
      clusterMetrics && { metrics: { ...ownMetrics, scrape: clusterMetrics.scrape } }),
  })
  // A worker of `--workers N`: answers a request that changed libraries once every worker has them.
  const sync = cluster.isWorker
    ? new WorkerLibrarySync(service.libraries, config, logger, {
        pickUp: (names) => pickUpCommits(service, names, { replicated: true }),
        failedIndexes: () => service.failedIndexes,
        onFailedIndexes: (all) => (service.sharedFailedIndexes = all),
        onReconciled: (name, indexDir, error) => service.recordIndexLoad(name, indexDir, error),
      })
    : undefined
  // One process: it looks for other processes' commits itself (with --workers, the primary does).
  const poller =
    !cluster.isWorker && config.server.indexWatchMs > 0
      ? new IndexDirPoller(
          config.library.indexDir,
          config.server.indexWatchMs,
          async (names, { retry, lastTry }) => {
            const failures = await pickUpCommits(service, names)
            // Once per commit, and its last try: the tries between are logged at debug level.
            for (const failure of failures)
              if (lastTry) logger.error(`${gaveUp(config.server.indexRetryLimit)}: ${failure}`)
              else if (retry) logger.debug(`Tried again: ${failure}`)
              else logger.error(failure)
            return failedAmong(names, service.failedIndexes)
          },
          { retryLimit: config.server.indexRetryLimit, ...retryTestOptions() },
        )
      : undefined
  const fetch: typeof app.fetch = sync
    ? async (request, ...rest) => {
        const response = await app.fetch(request, ...rest)
        if (request.method !== 'GET' && request.method !== 'HEAD')
          await sync.flush(requestIdOf(response, rest[0]))
        return response
      }
    : app.fetch
  // Requests whose handler still runs (its connection may be closed: a client gone, the grace
  // over), so that the stop's last line comes after theirs (the access log's).
  const handling = new Set<Promise<unknown>>()
  const server = createAdaptorServer({
    fetch: (...args: Parameters<typeof app.fetch>) => {
      const handled = Promise.resolve(fetch(...args))
      const done = () => handling.delete(handled)
      handling.add(handled)
      void handled.then(done, done)
      return handled
    },
    hostname: config.server.host,
    serverOptions: {
      headersTimeout: limits.headersTimeoutMs,
      requestTimeout: limits.requestReceiveTimeoutMs,
      keepAliveTimeout: limits.keepAliveTimeoutMs,
      // How often slow clients are checked against the two timeouts above.
      connectionsCheckingInterval: Math.min(1000, limits.headersTimeoutMs),
    },
  }) as Server
  server.maxConnections = limits.maxConnections
  // Answers a client does not read are not held forever (Node's timeouts end with the request).
  closeStalledSends(server, limits.sendTimeoutMs, {
    onClose: (socket, stalledMs) =>
      logger.debug('Closed a connection whose answer was not read (server.sendTimeoutMs)', {
        client: socket.remoteAddress,
        stalledMs,
      }),
  })
  if (connectionLimit) server.on('connection', connectionLimit.admit)
  answerClientErrors(server)
  // Responses in progress, so that shutdown can ask their clients not to reuse the connection.
  const inFlight = new Set<ServerResponse>()
  let draining = false
  // Requests answered after the shutdown signal, and responses that closed unfinished then
  // (connections dropped by the grace period, or clients gone), reported when stopping.
  const drained = { answered: 0, unfinished: 0 }
  server.on('request', (_request, response: ServerResponse) => {
    if (draining) response.setHeader('connection', 'close')
    inFlight.add(response)
    response.once('close', () => {
      inFlight.delete(response)
      if (draining) {
        if (response.writableFinished) drained.answered += 1
        else drained.unfinished += 1
      }
    })
  })
  const listen = async (what: string) => {
    await new Promise<void>((resolve, reject) => {
      server.once('listening', resolve)
      server.once('error', (error: NodeJS.ErrnoException) => reject(listenError(error, config)))
      server.listen(config.server.port, config.server.host)
    })
    const address = server.address()
    const port = typeof address === 'object' && address ? address.port : config.server.port
    logger.info(`Listening on http://${config.server.host}:${port} (${what})`)
  }
  // A worker that replaces one that died while others serve takes no connection before it is
  // ready: the primary hands connections to the workers that listen, so /readyz and requests
  // are answered by ready workers only, not 503 NOT_READY by the one loading (servePrimary).
  const listenWhenReady = cluster.isWorker && process.env[LISTEN_WHEN_READY_ENV] === '1'
  if (!listenWhenReady) await listen('loading libraries…')
  logger.info(protection)
  // How long the library writes abandoned at the grace's end are waited for.
  const abandonedWaitMs = Math.max(config.server.shutdownGraceMs, ABANDONED_WRITES_WAIT_MIN_MS)
  let stopSignals: (() => void) | undefined
  let stopping = false
  let stopped: Promise<SettledWrites> | undefined
  try {
    // The MCP token counter is not waited for: it loads in a worker thread on the first count
    // (mcp/tokens/tokenizer-thread.ts), beside the event loop.
    // A worker: what it loaded agrees with the disk before it serves (changes made meanwhile).
    // What is committed before the libraries load: later commits are picked up once ready.
    await poller?.baseline()
    // The gateway's (empty) library is there before the service is ready: a call naming it is
    // "not ready" until then, never UNKNOWN_LIBRARY (its first build may load an embedder).
    // `--workers N` after the demo's files changed: the first worker rebuilds the saved demo (and
    // says when it has), the others load what it saved (servePrimary).
    const demoCheck = cluster.isWorker ? process.env[DEMO_CHECK_ENV] : undefined
    await service.start(undefined, {
      beforeReady: async () => {
        await sync?.reconcile()
        await gateway?.open()
      },
      asSavedDemo: demoCheck === 'as-saved',
      ...(demoCheck === 'first' && {
        onDefaultLoaded: () => process.send!({ toolsel: 'demo-loaded' }),
      }),
    })
    // From here a stop signal is a graceful shutdown, also during the gateway's first sync (up
    // to gateway.firstSyncTimeoutMs): Node's default exit left the upstream processes still
    // starting (those that read no stdin yet: hung, or busy loading) running on, orphaned.
    stopped = new Promise<SettledWrites>((resolve) => {
      stopSignals = onStopSignal(logger, (cause) => shutdown(cause, resolve), launcher)
    })
    await gateway?.start()
    // Before a replacement listens: one held here must take no connection (round 43).
    if (cluster.isWorker && !stopping) stopBeforeReadyForTests()
    if (listenWhenReady && !stopping) await listen('ready')
  } catch (error) {
    stopSignals?.()
    // A library or model that can't load is fatal: stop listening so the process exits.
    server.closeAllConnections()
    if (server.listening) await new Promise((resolve) => server.close(resolve))
    await gateway?.close()
    await app.close()
    throw error
  }
  if (!stopping) {
    logger.info(
      `Ready: libraries ${service.libraries.names().join(', ')}; default "${service.defaultLibraryName}"`,
    )
    if (cluster.isWorker)
      process.send!({ toolsel: 'ready' }, undefined, {}, crashAfterReadyForTests)
    // Indexes skipped at start-up are tried again as failed commits are.
    poller?.retryLater(service.failedIndexes.map((failed) => failed.name))
    poller?.start()
  }

  // Graceful shutdown: stop accepting, let in-flight requests finish within the grace period.
  // A shutdown during the first sync closes the gateway, which ends start()'s wait.
  // The library writes under way (uploads, usage examples, deletes) are waited for until the
  // grace's end, then abandoned (their staged files removed, nothing of them committed; one
  // already committing is finished) and waited for one more grace period, so that "Stopped"
  // comes after every write settled (was: logged while a write still ran, which then finished
  // or failed after it, the process lingering until then).
  function shutdown(cause: string, resolve: (writes: SettledWrites) => void) {
    // The writes, then the handlers of their requests (the abandoned ones answer 499 into a
    // closed connection; a few ms), at most HANDLERS_WAIT_MS.
    const settleWrites = async () => {
      const writes = await service.settleWrites(deadline, abandonedWaitMs)
      let timer: NodeJS.Timeout | undefined
      await Promise.race([
        Promise.allSettled(handling),
        new Promise((resolve) => (timer = setTimeout(resolve, HANDLERS_WAIT_MS))),
      ])
      clearTimeout(timer)
      return writes
    }
    stopping = true
    // The whole stop, upstream processes included, ends by then.
    const deadline = Date.now() + config.server.shutdownGraceMs
    logger.info(`${cause}: closing (grace ${config.server.shutdownGraceMs} ms)`)
    poller?.stop()
    // Upstreams that serve no call (still starting, down) end now, during the drain.
    gateway?.beginClose()
    const force = setTimeout(() => {
      logger.warn('Grace period over: closing remaining connections')
      server.closeAllConnections()
    }, config.server.shutdownGraceMs)
    force.unref()
    // Busy connections close after their response (the client is told "connection: close"),
    // so no request already received is reset.
    draining = true
    for (const response of inFlight) {
      if (!response.headersSent) response.setHeader('connection', 'close')
    }
    // Stop accepting connections (new ones are refused, cleanly) but keep the open ones for a
    // moment: http.Server#close would drop idle keep-alive connections at once, resetting a
    // request already on its way over one. Whatever arrives meanwhile is answered with
    // "connection: close"; the connections still idle after IDLE_DRAIN_MS are closed then,
    // so shutdown never waits for keep-alive timeouts.
    netClose.call(server, () => {
      clearTimeout(force)
      clearTimeout(idle)
      // Upstreams close all at once, now (no library write needs them); those still running at
      // the grace's end are SIGKILLed. Closed after the writes, they met a deadline already
      // past: SIGKILLed at once, without their time to exit on their stdin closing.
      const gatewayClosed = gateway?.close(deadline)
      // Every connection is closed, but a write whose client is gone runs on: settled first, so
      // that a commit is still relayed to the other workers.
      void settleWrites().then((writes) => {
        // A worker relays and applies no more library changes.
        sync?.close()
        stopHealth?.()
        // Nothing serves any more: the app's MCP context lets go of the registry and its
        // tokenizer (one still loading is stopped, not waited for), its metrics of the service.
        clusterMetrics?.close()
        ownMetrics?.close()
        void Promise.allSettled([gatewayClosed, app.close()]).then(() => resolve(writes))
      })
    })
    const idle = setTimeout(
      () => server.closeIdleConnections(),
      Math.min(IDLE_DRAIN_MS, config.server.shutdownGraceMs),
    )
    idle.unref()
  }
  const writes = await stopped
  stopSignals?.()
  if (writes.unsettled > 0)
    logger.error(
      `${writes.unsettled} library write(s) still running ${abandonedWaitMs} ms after they were abandoned: what they leave in library.indexDir is for the next start's recovery`,
    )
  logger.info('Stopped', {
    answeredWhileStopping: drained.answered,
    unfinished: drained.unfinished,
    // Only when writes were under way at the grace's end: those abandoned or still running.
    ...(writes.unfinished > 0 && { writesUnfinished: writes.unfinished }),
  })
  // An abandoned write left the library as it was (its client got no answer, as an unfinished
  // request): a clean stop. One still running may leave work for the next start: exit 1.
  if (writes.unsettled === 0) {
    // A worker's channel to the primary would keep it alive.
    if (cluster.isWorker) process.disconnect()
    return 0
  }
  // bin/toolsel.mjs disconnects a worker (cluster.worker.disconnect(), which keeps its exit code:
  // process.disconnect() here made it 0, and so the primary's) and only sets the exit code: the
  // write still running (a disk that does not answer) kept the process alive for as long as it
  // ran (for good, held). Unref'd: a process that ends anyway ends as it would.
  setTimeout(() => exitOnceFlushed(1), 0).unref()
  return 1
}

/**
 * How long `exitOnceFlushed` waits at most for stdout and stderr to hand over what was written
 * to them (a reader that does not read keeps a pipe full).
 */
const EXIT_FLUSH_MAX_MS = 2000

/**
 * `process.exit(code)` once stdout and stderr have handed what was written to them to the system,
 * at most EXIT_FLUSH_MAX_MS later. Pipes are asynchronous on macOS: at once, the last lines (the
 * ERROR naming the write still running, "Stopped") could be lost while a full pipe held them (was:
 * process.exit right after them).
 */
function exitOnceFlushed(code: number): void {
  const exit = () => process.exit(code)
  setTimeout(exit, EXIT_FLUSH_MAX_MS).unref()
  let writing = 2
  // A stream's writes end in order: this one's callback comes after the lines written before.
  for (const stream of [process.stdout, process.stderr])
    stream.write('', () => {
      writing -= 1
      if (writing === 0) exit()
    })
}

/** What `ToolselService.settleWrites` reports. */
type SettledWrites = Awaited<ReturnType<ToolselService['settleWrites']>>

/**
 * The primary of `--workers N`: forks the workers (each runs this command's single-process path),
 * relays library changes between them (service/cluster-sync.ts) and other processes' commits to
 * the index directory (service/index-dir-watch.ts), replaces a worker that dies once
 * all were ready, and stops them all on SIGTERM/SIGINT, then logs its own last line (why, and
 * the exit code) after theirs. A worker of the first start that fails
 * before it is ready (a library that can't load…) stops everything, exit code 1: the error is in
 * its log; one that was ready and died, even while others of the first start still load, is a
 * worker that died after it was ready (below), never a failed start (bin/toolsel.mjs disconnects a worker whose command ended, else it hung). A replacement
 * that fails so is started again 1 s, 2 s, 4 s, … at most REPLACE_RETRY_MAX_MS later, until one is
 * ready; the workers still running serve meanwhile. A worker that dies after it was ready is
 * replaced at once the first time in CRASH_WINDOW_MS, then on the same backoff (an ERROR line
 * each): never given up on, as the workers still up serve.
 */
async function servePrimary(
  count: number,
  config: Config,
  logger: Logger,
  launcher: Launcher | undefined,
  { failingAtStart }: { failingAtStart: readonly StartupFallback[] },
): Promise<number> {
  const replaceBaseMs = replaceRetryBaseMs()
  // Indexes a worker skipped at its start are tried again as failed commits are.
  const relay = relayLibraryChanges(logger, {
    onStartupFailures: (names) => poller?.retryLater(names),
  })
  // Other processes' commits: the primary looks (one poll, not one per worker) and relays them.
  const poller =
    config.server.indexWatchMs > 0
      ? new IndexDirPoller(
          config.library.indexDir,
          config.server.indexWatchMs,
          async (names, { retry, lastTry }) => {
            const { failures, failed } = await relay.relayCommits(names)
            // One line per poll, however many workers failed alike; once per commit, and its
            // last try (the tries between are logged at debug level).
            if (failures.length > 0)
              logger[retry && !lastTry ? 'debug' : 'error'](
                `${lastTry ? `${gaveUp(config.server.indexRetryLimit)}, not` : retry ? 'Tried again, not' : 'Not'} picked up: ${failures.join('; ')}`,
              )
            return failed
          },
          { retryLimit: config.server.indexRetryLimit, ...retryTestOptions() },
        )
      : undefined
  await poller?.baseline()
  poller?.start()
  // The saved demo's files changed since it was built (or it records no fingerprint of them): one
  // worker rebuilds it (or records the fingerprint) first, the others start once it has
  // (`demo-loaded`) and load what it saved (not N rebuilds racing to save).
  const demoFirst = count > 1 && (await savedDemoNeedsCheck(config).catch(() => false))
  logger.info(
    demoFirst
      ? `Starting ${count} worker processes: one first, which rebuilds the saved demo from its files if their tools changed (else records their fingerprint), then the others`
      : `Starting ${count} worker processes`,
  )
  // The workers of the first start that have not been ready yet: one that exits is a failed start.
  const starting = new Set<number>()
  // Whether `Ready: <count> workers` was logged (once, when that many are ready at once).
  let announced = false
  // Workers that died after the start and were replaced (toolsel_worker_restarts_total).
  let restarts = 0
  // Replacements in a row that exited before they were ready.
  let failedStarts = 0
  // When ready workers died within the last CRASH_WINDOW_MS (at most one entry per death).
  const crashes: number[] = []
  // Replacements waiting for their backoff to pass before they start.
  const waiting = new Set<NodeJS.Timeout>()
  const stopMetrics = relayClusterMetrics(() => restarts)
  // The workers' `degraded`, from the start-up check's findings and every worker's selections.
  const health = new ModelHealth()
  for (const fallback of failingAtStart) health.markFailing(fallback)
  const stopHealth = relayModelHealth(health)
  // The workers ready now: a replacement started while one is ready listens once it is ready.
  const readyNow = new Set<number>()
  let stopping = false
  let failed = false
  // Why the workers were stopped, for the primary's last line.
  let stopCause = 'no worker left'
  // Workers that exited otherwise than with code 0 once the stop began (killed, crashed).
  const unclean: string[] = []
  // How long the library writes abandoned at the grace's end are waited for.
  const abandonedWaitMs = Math.max(config.server.shutdownGraceMs, ABANDONED_WRITES_WAIT_MIN_MS)
  let stopSignals: (() => void) | undefined
  // The worker that logs the load warnings all would repeat; its replacement takes it over.
  let warner: number | undefined
  const fork = (env: Record<string, string> = {}) => {
    const worker = cluster.fork({ ...env, [LOAD_WARNINGS_ENV]: warner === undefined ? '1' : '0' })
    const pid = worker.process.pid
    closeUnansweredHandoffs(worker, (closed) =>
      logger.warn(
        `Worker ${pid} had ${closed} connection(s) handed to it and not taken: closed (their clients see a reset and can retry)`,
      ),
    )
    warner ??= worker.id
    return worker
  }
  return new Promise<number>((resolve) => {
    const stopAll = () => {
      stopping = true
      for (const timer of waiting) clearTimeout(timer)
      waiting.clear()
      poller?.stop()
      for (const worker of Object.values(cluster.workers ?? {})) worker?.process.kill('SIGTERM')
    }
    // The workers forked once the first one loaded the demo (when `demoFirst`).
    let rest = demoFirst ? count - 1 : 0
    const forkRest = () => {
      if (stopping) return
      for (; rest > 0; rest -= 1) starting.add(fork({ [DEMO_CHECK_ENV]: 'as-saved' }).id)
    }
    cluster.on('message', (worker, message: unknown) => {
      const said = (message as { toolsel?: unknown } | null)?.toolsel
      if (said === 'demo-loaded') forkRest()
      if (said !== 'ready') return
      forkRest()
      readyNow.add(worker.id)
      starting.delete(worker.id)
      failedStarts = 0
      if (!announced && readyNow.size === count) {
        announced = true
        logger.info(`Ready: ${count} workers`)
      }
    })
    cluster.on('exit', (worker, code, signal) => {
      const wasReady = readyNow.delete(worker.id)
      if (worker.id === warner) warner = undefined
      if (stopping && (signal !== null || code !== 0)) {
        unclean.push(`${worker.process.pid}: ${signal ?? `code ${code}`}`)
        // Exit 1 at a stop: a library write of it still ran after its second wait (its ERROR
        // line above), left to the next start's recovery; killed (SIGKILL, the OOM killer) or
        // crashed, it did not settle its writes either: the primary's exit code says so, as a
        // single process's does (was 0, the worker only listed in uncleanExits; before round 54
        // for a signal too). Not a worker still loading that the stop's own signal ended (Node's
        // default exit before its handlers are set: nothing of it served or written).
        const endedLoading =
          !wasReady && signal !== null && (STOP_SIGNALS as readonly string[]).includes(signal)
        if (!endedLoading) failed = true
      }
      // Only a worker of the first start that was never ready: one that was ready once (also
      // while others of the first start still load) is replaced as below, not a failed start.
      if (starting.delete(worker.id) && !stopping) {
        logger.error(
          `Worker ${worker.process.pid} exited before it was ready (code ${code}); stopping`,
        )
        failed = true
        stopCause = `worker ${worker.process.pid} exited before it was ready, code ${code}`
        stopAll()
      } else if (!stopping) {
        restarts += 1
        const replace = () => {
          if (!stopping) fork(readyNow.size > 0 ? { [LISTEN_WHEN_READY_ENV]: '1' } : undefined)
        }
        const later = (delayMs: number) => {
          const timer = setTimeout(() => {
            waiting.delete(timer)
            replace()
          }, delayMs)
          waiting.add(timer)
        }
        const exit = signal ?? `code ${code}`
        if (wasReady) {
          const now = Date.now()
          while (crashes.length > 0 && crashes[0]! <= now - CRASH_WINDOW_MS) crashes.shift()
          crashes.push(now)
          if (crashes.length === 1) {
            logger.warn(`Worker ${worker.process.pid} exited (${exit}); starting another`)
            replace()
          } else {
            // Dying again and again once ready (a request that crashes it, a fault right after
            // the start): replaced 1 s, 2 s, 4 s, … then every minute later, not in a busy loop.
            const delayMs = Math.min(
              REPLACE_RETRY_MAX_MS,
              replaceBaseMs * 2 ** (crashes.length - 2),
            )
            logger.error(
              `Worker ${worker.process.pid} exited (${exit}), ${crashes.length} workers in the last ${CRASH_WINDOW_MS / 60_000} min after they were ready; starting another in ${delayMs / 1000} s`,
            )
            later(delayMs)
          }
        } else {
          // A replacement that fails to start (a tool file removed since, a model gone) would
          // fail again at once: tried again 1 s, 2 s, 4 s, … then every minute, until one is ready.
          const delayMs = Math.min(REPLACE_RETRY_MAX_MS, replaceBaseMs * 2 ** failedStarts)
          failedStarts += 1
          logger.error(
            `Worker ${worker.process.pid} exited before it was ready (${exit}); starting another in ${delayMs / 1000} s`,
          )
          later(delayMs)
        }
      }
      // Not while a replacement waits to start: the primary lives on with no worker meanwhile.
      if (Object.keys(cluster.workers ?? {}).length === 0 && waiting.size === 0)
        resolve(failed ? 1 : 0)
    })
    stopSignals = onStopSignal(
      logger,
      (cause) => {
        logger.info(`${cause}: stopping the workers`)
        stopCause = cause
        stopAll()
      },
      launcher,
    )
    if (demoFirst) starting.add(fork({ [DEMO_CHECK_ENV]: 'first' }).id)
    else for (let index = 0; index < count; index += 1) starting.add(fork().id)
  })
    .then((code) => {
      // The primary's own last line, after every worker's (each logs its "Stopped").
      logger[code === 0 ? 'info' : 'error'](
        `Stopped: every worker has exited (${stopCause}); exit code ${code}`,
        { restarts, ...(unclean.length > 0 && { uncleanExits: unclean }) },
      )
      return code
    })
    .finally(() => {
      stopSignals?.()
      stopMetrics()
      stopHealth()
    })
}

/**
 * Calls `stop` on the first SIGTERM, SIGINT or SIGHUP, or when the `launcher` exits (the server, or a
 * process between it and npm, was re-parented: `launcherGone`), and keeps the signals handled until the returned function
 * removes the handlers: a second signal while stopping is logged, not Node's default exit in the
 * middle of the drain. One Ctrl-C under `npm start` reaches the server, and its launcher (npm's
 * shell) exits of it too. SIGHUP (the terminal closed; Node's default ends the process at once,
 * with the requests in flight) drains as SIGTERM does; Node resets a SIGHUP that `nohup` ignored,
 * so `nohup toolsel serve &` never outlived a closed terminal.
 */
function onStopSignal(
  logger: Logger,
  stop: (cause: string) => void,
  launcher: Launcher | undefined,
): () => void {
  let stopping = false
  const handle = (cause: string, again: string) => {
    if (stopping) {
      logger.info(`${again}: already stopping`)
      return
    }
    stopping = true
    stop(cause)
  }
  const signal = (name: NodeJS.Signals) => handle(`${name} received`, `${name} received again`)
  for (const name of STOP_SIGNALS) process.on(name, signal)
  const pollMs = launcher && launcherPollMs()
  const watch =
    launcher &&
    setInterval(() => {
      const gone = launcherGone(launcher)
      if (gone === undefined) return
      clearInterval(watch)
      const went = `Launcher exited (process ${gone}, ${launcher.manager}'s "${launcher.event}")`
      handle(went, went)
    }, pollMs)
  watch?.unref()
  return () => {
    clearInterval(watch)
    for (const name of STOP_SIGNALS) process.off(name, signal)
  }
}

/** Which of `names` are among the `failed` indexes. */
function failedAmong(names: readonly string[], failed: readonly FailedIndex[]): string[] {
  return names.filter((name) => failed.some((entry) => entry.name === name))
}

/** A port that is taken or not ours to use, as a config error naming the setting to change. */
function listenError(error: NodeJS.ErrnoException, config: Config): Error {
  const { host, port } = config.server
  if (error.code === 'EADDRINUSE') {
    return new ToolselError(
      'INVALID_CONFIG',
      `Port ${port} on ${host} is already in use (another toolsel serve?): stop that process or choose another port with --port (TOOLSEL_PORT).`,
      { cause: error },
    )
  }
  if (error.code === 'EACCES' || error.code === 'EADDRNOTAVAIL') {
    return new ToolselError(
      'INVALID_CONFIG',
      `Cannot listen on ${host}:${port} (${error.code}): ${error.code === 'EACCES' ? 'ports below 1024 need privileges; choose another --port' : 'this machine has no such address; choose another --host'}.`,
      { cause: error },
    )
  }
  return error
}

/**
 * The request id of an answered request (request-log.ts): on the node response under
 * @hono/node-server (`env.outgoing`), else on the answer.
 */
function requestIdOf(response: Response, env: unknown): string | undefined {
  const outgoing = (env as { outgoing?: ServerResponse } | undefined)?.outgoing
  const id = outgoing?.getHeader(REQUEST_ID_HEADER) ?? response.headers.get(REQUEST_ID_HEADER)
  return typeof id === 'string' ? id : undefined
}

/**
 * For tests of a worker that is slow to get ready (TOOLSEL_TEST_STOP_BEFORE_READY_FILE, off unless
 * set): the one worker that removes the file it names stops itself (SIGSTOP) once loaded, before a
 * replacement listens and before it says it is ready, until the test lets it go on (SIGCONT).
 */
function stopBeforeReadyForTests(): void {
  const file = testSwitch('TOOLSEL_TEST_STOP_BEFORE_READY_FILE')
  if (file === undefined) return
  try {
    rmSync(file)
  } catch {
    return
  }
  process.kill(process.pid, 'SIGSTOP')
}

/**
 * For tests of a worker that crashes once it is ready (TOOLSEL_TEST_CRASH_AFTER_READY_FILE, off
 * unless set): exits with code 70 when the file it names exists, once the primary has the ready
 * message.
 */
function crashAfterReadyForTests(): void {
  const file = testSwitch('TOOLSEL_TEST_CRASH_AFTER_READY_FILE')
  if (file !== undefined && existsSync(file)) process.exit(70)
}
