/**
 * MCP over stdio, for desktop clients that spawn `toolsel mcp --stdio`. stdout carries protocol
 * messages only; everything else (logs, upstream stderr) goes to stderr.
 * @module
 */
import { PassThrough } from 'node:stream'
import { setTimeout as delay } from 'node:timers/promises'
import { StdioServerTransport } from '@modelcontextprotocol/sdk/server/stdio.js'
import { isJSONRPCRequest, type JSONRPCMessage } from '@modelcontextprotocol/sdk/types.js'
import type { Logger } from '../log.ts'
import { createMcpServer } from './create-mcp-server.ts'
import type { McpContext, McpSession } from './mcp-context.ts'
import { StdioLineGate, type LineRefusal } from './stdio-line-gate.ts'
import { checkMessage, planLine, tooDeep, type ErrorAnswer } from './jsonrpc-answers.ts'

/**
 * Serves until the client closes stdin or the process gets SIGINT/SIGTERM. Requests received
 * by then are answered before the server closes (as `toolsel serve` answers the requests it has
 * received when it stops), for at most `server.shutdownGraceMs`: a client that writes its
 * requests and closes stdin (`… | toolsel mcp --stdio`) gets every answer. Resolves with the
 * deadline of the whole stop (when it began stopping + `server.shutdownGraceMs`, epoch ms), for
 * the caller's own closing (the gateway's upstreams) to fit in too.
 */
export async function runStdioServer(context: McpContext, session: McpSession): Promise<number> {
  const { logger, config } = context.service
  const server = createMcpServer(context, session)
  // stdin's lines are read here, through the gate (piped once `refuseLine` answers): whole UTF-8
  // lines within the limit; the others are answered here and the server goes on. The transport
  // only writes: its stdin is one that never ends or speaks. Its own reading parsed each line,
  // and a line it refused (a batch, a message that is not one) was parsed again here to be
  // answered: a 10 MiB batch line twice. Each line is parsed once (`readLines`).
  let refuseLine: (refusal: LineRefusal) => void = () => {}
  const gate = new StdioLineGate((refusal) => refuseLine(refusal))
  const transport = new StdioServerTransport(new PassThrough(), process.stdout)
  const closed = new Promise<string>((resolve) => {
    transport.onclose = () => resolve('transport closed')
    // The gate's end, after its last line (or its answer to an unended one) is passed on.
    gate.once('end', () => resolve('stdin closed'))
    process.once('SIGINT', () => resolve('SIGINT'))
    process.once('SIGTERM', () => resolve('SIGTERM'))
  })
  await server.connect(transport)
  // First, so that every answer is written in turn and the others' wrappers see each as sent;
  // then the batches', so that the others' see each answer of a batch as sent.
  sendInTurn(transport)
  const batches = runBatches(transport)
  const inFlight = trackRequests(transport)
  readLines(gate, transport, logger, batches)
  refuseLine = (refusal) => {
    logger.warn(`MCP stdio: a line of stdin was not answered as a request (${refusal.message})`)
    void transport.send({ jsonrpc: '2.0', id: null, error: refusal } as never).catch(() => {})
  }
  const reading = readWhileStdoutDrains(transport, gate)
  process.stdin.pipe(gate)
  logger.info('MCP server ready on stdio')
  const reason = await closed
  const deadline = Date.now() + config.server.shutdownGraceMs
  reading.stop()
  logger.info(`MCP server stopping (${reason})`)
  if (reason !== 'transport closed' && inFlight.count() > 0) {
    logger.info(`MCP server answering ${inFlight.count()} request(s) received before it stopped`)
    const grace = new AbortController()
    await Promise.race([
      inFlight.drained(),
      delay(config.server.shutdownGraceMs, undefined, { signal: grace.signal }).catch(() => {}),
    ])
    grace.abort()
    if (inFlight.count() > 0) {
      logger.warn(
        `MCP server closing with ${inFlight.count()} request(s) unanswered after server.shutdownGraceMs (${config.server.shutdownGraceMs} ms)`,
      )
    }
  }
  await server.close()
  // Stopped by a signal, stdin may still be open: read no more of it, or the pipe into the gate
  // would hold the process alive.
  gate.removeAllListeners('data')
  gate.pause()
  process.stdin.unpipe(gate)
  process.stdin.pause()
  return deadline
}

/**
 * Reads the gate's lines (one a 'data' event), each parsed once: a JSON-RPC message goes to the
 * server (`transport.onmessage`, as the SDK's transport passes one), a batch is run (`batches`);
 * a line that is not JSON, or not a JSON-RPC message, gets the JSON-RPC error answer and a
 * warning on stderr, as /mcp answers one (jsonrpc-answers.ts: -32700 parse error, -32600 invalid
 * request with the id where it can be read or nested past MAX_MESSAGE_DEPTH, -32602 for params by
 * position); the SDK's transport
 * would drop it without a word, leaving the client waiting.
 */
function readLines(
  gate: StdioLineGate,
  transport: StdioServerTransport,
  logger: Logger,
  batches: (plan: { run: JSONRPCMessage[]; errors: ErrorAnswer[] }) => void,
): void {
  const read = (line: Buffer) => {
    let value: unknown
    try {
      value = JSON.parse(line.toString('utf8'))
    } catch (error) {
      return answer(parseError(error as Error))
    }
    const deep = tooDeep(value)
    if (deep) return answer(deep)
    if (!Array.isArray(value)) {
      const checked = checkMessage(value)
      if ('message' in checked) return transport.onmessage?.(checked.message)
    }
    const plan = planLine(value)
    if ('run' in plan) return batches(plan)
    answer(plan.answer)
  }
  gate.on('data', (line: Buffer) => {
    // A throw here would be an uncaught exception in a stream's 'data' event: the process gone.
    // The SDK's own reading caught it (the server's onerror); so here. One is a response for an
    // unknown id nested some thousands deep: the SDK's JSON.stringify of it, for its error message,
    // overflows the stack.
    try {
      read(line)
    } catch (error) {
      transport.onerror?.(error instanceof Error ? error : new Error(String(error)))
    }
  })
  // As the SDK's transport took its stdin's errors (the server's onerror).
  gate.on('error', (error: Error) => transport.onerror?.(error))
  const answer = (answer: ErrorAnswer | ErrorAnswer[] | null) => {
    if (answer === null) {
      logger.warn('MCP stdio: a line of stdin was not read (notifications only, none answered)')
      return
    }
    const first = Array.isArray(answer) ? answer[0] : answer
    logger.warn(`MCP stdio: a line of stdin was not answered as a request (${first.error.message})`)
    void transport.send(answer as never).catch(() => {})
  }
}

/**
 * Writes the transport's answers one after another while stdout holds unread ones: the SDK's
 * `send` adds a 'drain' listener to stdout for each write past its buffer's high-water mark, and
 * the answers of one stdin chunk's lines (a 64 KiB chunk holds ~11 batch lines of 100 requests)
 * were written before the gate paused, so Node warned of a leak ("11 drain listeners added to
 * [Socket]"). Now an answer sent while stdout needs draining waits for the one before it and for
 * stdout's drain: one such listener at a time, in order; the waiting answers are the ones the
 * SDK's listeners held before (their count bounded by what the gate passes before it pauses).
 */
function sendInTurn(transport: StdioServerTransport): void {
  const send = transport.send.bind(transport)
  let waiting = 0
  let last: Promise<void> = Promise.resolve()
  let drain: Promise<void> | undefined
  const drained = () => {
    if (!process.stdout.writableNeedDrain) return Promise.resolve()
    drain ??= new Promise<void>((resolve) => process.stdout.once('drain', resolve)).finally(() => {
      drain = undefined
    })
    return drain
  }
  transport.send = (message: JSONRPCMessage) => {
    if (waiting === 0 && !process.stdout.writableNeedDrain) return send(message)
    waiting += 1
    const sent = last.then(drained).then(() => send(message))
    last = sent.then(
      () => void (waiting -= 1),
      () => void (waiting -= 1),
    )
    return sent
  }
}

/**
 * Runs a batch line's good messages (`run`) and answers its requests in one array line, with
 * the errors of its bad messages, as JSON-RPC answers a batch (a batch of notifications only:
 * its errors, or nothing). Each answer to one of its requests is held until the last comes. An
 * id is the client's to keep unique (the batch makes its own requests' ids unique): an answer
 * goes to the first batch still waiting for its id (a client reusing one of a running batch's ids
 * on another line gets that answer in the batch; two batches running one id each get one answer
 * with it), and a request cancelled (`notifications/cancelled`, which MCP answers with nothing:
 * the SDK sends no answer to an aborted request) is waited for no more. Without these, such a
 * batch was never answered and held its answers for the life of the process.
 */
function runBatches(transport: StdioServerTransport) {
  interface Batch {
    ids: Set<string | number>
    answers: JSONRPCMessage[]
    errors: ErrorAnswer[]
  }
  const waiting = new Map<string | number, Batch[]>()
  const send = transport.send.bind(transport)
  /** The first batch waiting for `id`, no longer waiting for it. */
  const take = (id: string | number): Batch | undefined => {
    const queue = waiting.get(id)
    const batch = queue?.shift()
    if (queue?.length === 0) waiting.delete(id)
    batch?.ids.delete(id)
    return batch
  }
  const answer = (batch: Batch): Promise<void> => {
    if (batch.ids.size > 0) return Promise.resolve()
    const all = [...batch.answers, ...batch.errors]
    return all.length === 0 ? Promise.resolve() : send(all as never)
  }
  transport.send = (message: JSONRPCMessage) => {
    const id = !('method' in message) && 'id' in message ? message.id : undefined
    const batch = id === undefined || id === null ? undefined : take(id)
    if (batch === undefined) return send(message)
    batch.answers.push(message)
    return answer(batch)
  }
  const receive = transport.onmessage
  transport.onmessage = (message: JSONRPCMessage) => {
    receive?.(message)
    const id = cancelledId(message)
    if (id === undefined) return
    const batch = take(id)
    if (batch !== undefined) void answer(batch).catch(() => {})
  }
  return ({ run, errors }: { run: JSONRPCMessage[]; errors: ErrorAnswer[] }) => {
    const ids = new Set(run.filter(isJSONRPCRequest).map((message) => message.id))
    if (ids.size === 0 && errors.length > 0) void send(errors as never).catch(() => {})
    const batch: Batch = { ids, answers: [], errors }
    for (const id of ids) {
      const queue = waiting.get(id)
      if (queue === undefined) waiting.set(id, [batch])
      else queue.push(batch)
    }
    for (const message of run) transport.onmessage?.(message)
  }
}

/** The request id a `notifications/cancelled` names; undefined for any other message. */
function cancelledId(message: JSONRPCMessage): string | number | undefined {
  if (!('method' in message) || message.method !== 'notifications/cancelled') return undefined
  const id = (message.params as { requestId?: unknown } | undefined)?.requestId
  return typeof id === 'string' || typeof id === 'number' ? id : undefined
}

function parseError(error: Error): ErrorAnswer {
  const message = `Parse error: ${error.message.slice(0, 200)}`
  return { jsonrpc: '2.0', id: null, error: { code: -32700, message } }
}

/**
 * Stops reading stdin while stdout holds answers the client has not read yet (past its buffer's
 * high-water mark), and reads on at its 'drain'. A client that wrote requests and never read
 * its answers grew the process without bound (60,000 `tools/list` unread: 1.1 GiB in 30 s and
 * rising); now the unread answers stop at the pipe and stdout's buffer, and the requests wait
 * in stdin's pipe. `stop()` (closing) reads no more.
 */
function readWhileStdoutDrains(transport: StdioServerTransport, gate: StdioLineGate) {
  let stopped = false
  const send = transport.send.bind(transport)
  transport.send = (message: JSONRPCMessage) => {
    const sent = send(message)
    if (!stopped && process.stdout.writableNeedDrain && !gate.isPaused()) {
      gate.pause()
      process.stdout.once('drain', () => {
        if (!stopped) gate.resume()
      })
    }
    return sent
  }
  return {
    stop: () => {
      stopped = true
    },
  }
}

/** Counts the requests the transport has received and not yet answered. */
function trackRequests(transport: StdioServerTransport) {
  const pending = new Set<string | number>()
  let onDrained: (() => void) | undefined
  const receive = transport.onmessage
  transport.onmessage = (message: JSONRPCMessage) => {
    if ('method' in message && 'id' in message) pending.add(message.id)
    receive?.(message)
    // A cancelled request is answered with nothing (the SDK drops an aborted handler's answer):
    // not one to wait for when stopping.
    const id = cancelledId(message)
    if (id !== undefined && pending.delete(id) && pending.size === 0) onDrained?.()
  }
  const send = transport.send.bind(transport)
  transport.send = async (message: JSONRPCMessage) => {
    await send(message)
    if (!('method' in message) && 'id' in message && message.id !== undefined) {
      pending.delete(message.id as string | number)
      if (pending.size === 0) onDrained?.()
    }
  }
  return {
    count: () => pending.size,
    drained: () =>
      pending.size === 0
        ? Promise.resolve()
        : new Promise<void>((resolve) => {
            onDrained = resolve
          }),
  }
}
