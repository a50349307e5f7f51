/**
 * The read side of a stdio upstream with a size limit per message that costs one call, not the
 * connection. Messages are newline-delimited JSON, and JSON text holds no raw newline (one in a
 * string is written `\n`), so a line over the limit can be skipped up to its newline and the
 * next line is the next message: the process goes on. While a line is skipped a scanner reads
 * its top-level `"id"` (an answer names the request it answers, at its start or at its end),
 * so the one request it answered fails and the others go on. Nothing of the line is kept.
 * @module
 */
import type { JSONRPCMessage } from '@modelcontextprotocol/sdk/types.js'
import { deserializeMessage } from '@modelcontextprotocol/sdk/shared/stdio.js'

/** A JSON-RPC id: what `TopLevelId` reads. */
export type MessageId = string | number

const NEWLINE = 0x0a
const QUOTE = 0x22
const BACKSLASH = 0x5c
/** Most bytes of a top-level key or of the id's value that are kept (longer: not the id). */
const MAX_TOKEN_BYTES = 256

/**
 * Reads, chunk by chunk and keeping at most a few hundred bytes, the top-level `"id"` of one
 * JSON object: nesting and strings (with their escapes) are followed, so an `"id"` inside the
 * result or inside a string is not taken for it. Of two `"id"` keys the last, as `JSON.parse`.
 */
export class TopLevelId {
  #depth = 0
  #inString = false
  #escaped = false
  /** Bytes of the depth-1 string being read (a key, or the id's value), undefined when too long. */
  #token: number[] | undefined
  #readingId = false
  #value: number[] = []
  #id: MessageId | undefined
  #method = false

  feed(bytes: Uint8Array): void {
    for (const byte of bytes) this.#byte(byte)
  }

  /** The id, once its value was read whole; undefined for a message with none (a notification). */
  get id(): MessageId | undefined {
    if (this.#readingId) this.#endValue()
    return this.#id
  }

  /**
   * The id of the request this message answers: undefined for a request or notification of the
   * server (a top-level `"method"`), whose id is the server's own and names none of ours.
   */
  get answers(): MessageId | undefined {
    return this.#method ? undefined : this.id
  }

  #byte(byte: number): void {
    if (this.#inString) {
      if (this.#readingId) this.#keep(this.#value, byte)
      else if (this.#token !== undefined && this.#depth === 1) this.#keep(this.#token, byte)
      if (this.#escaped) this.#escaped = false
      else if (byte === BACKSLASH) this.#escaped = true
      else if (byte === QUOTE) {
        this.#inString = false
        if (this.#token !== undefined && !this.#readingId) this.#token.pop()
      }
      return
    }
    if (byte === QUOTE) {
      this.#inString = true
      if (this.#readingId) this.#keep(this.#value, byte)
      else this.#token = this.#depth === 1 ? [] : undefined
      return
    }
    if (byte === 0x7b || byte === 0x5b) {
      // `{` or `[`: an id is a string or a number, never an object or array.
      if (this.#depth === 1 && this.#readingId) this.#readingId = false
      this.#depth += 1
      return
    }
    if (byte === 0x7d || byte === 0x5d) {
      if (this.#depth === 1 && this.#readingId) this.#endValue()
      this.#depth -= 1
      return
    }
    if (this.#depth !== 1) return
    if (byte === 0x3a) {
      // `:` after a key: the value that follows is the id's when the key is "id".
      const key = this.#token === undefined ? undefined : keyText(this.#token)
      this.#readingId = key === 'id'
      if (key === 'method') this.#method = true
      this.#value = []
      this.#token = undefined
    } else if (byte === 0x2c) {
      if (this.#readingId) this.#endValue()
    } else if (this.#readingId && byte > 0x20) this.#keep(this.#value, byte)
  }

  #keep(into: number[], byte: number): void {
    if (into.length < MAX_TOKEN_BYTES) into.push(byte)
    else if (into === this.#value) this.#readingId = false
    else this.#token = undefined
  }

  #endValue(): void {
    this.#readingId = false
    try {
      const value: unknown = JSON.parse(Buffer.from(this.#value).toString('utf8'))
      if (typeof value === 'string' || typeof value === 'number') this.#id = value
    } catch {
      // Not an id JSON-RPC allows: none.
    }
  }
}

/** A key's bytes as JSON reads them (`"i\u0064"` is `"id"`). */
function keyText(bytes: number[]): string | undefined {
  try {
    return JSON.parse(`"${Buffer.from(bytes).toString('utf8')}"`) as string
  } catch {
    return undefined
  }
}

/**
 * How many times `maxMessageBytes` a skipped line may run before the upstream is taken for
 * broken: a line that never ends (a server streaming one answer forever) would otherwise hold
 * every later answer inside it, each later call timing out at `callTimeoutMs`.
 */
const MAX_SKIPPED_LINE_FACTOR = 16

/**
 * Thrown by `BoundedReadBuffer.append` once a skipped line runs past `MAX_SKIPPED_LINE_FACTOR`
 * times the limit: the SDK's stdio transport closes on an error from its read buffer, so the
 * calls in flight fail at once and the gateway reconnects with a new process.
 */
export class UpstreamLineRunaway extends Error {
  constructor(maxMessageBytes: number) {
    super(
      `an upstream line ran past ${MAX_SKIPPED_LINE_FACTOR} x gateway.maxMessageBytes (${(MAX_SKIPPED_LINE_FACTOR * maxMessageBytes).toLocaleString('en-US')} bytes) without its end: the connection is closed and made again`,
    )
    this.name = 'UpstreamLineRunaway'
  }
}

/**
 * The default of `gateway.maxServerMessagesPerSecond`: most messages of the server's own
 * (notifications, requests, and answers to requests never sent or already answered: none
 * answers a request of ours) one upstream may send in a second.
 * A real server sends a few (list_changed, progress, log lines); one sending 50 a millisecond
 * held a core (80-88% CPU, the SDK reading and validating each; answers to ids never sent ~40%,
 * the SDK dropping each with an error) for as long as it went on. Counted as they are read, so a
 * gateway that stalled reads a backlog at once: generous enough that a server sending 100 a
 * second trips it only after a 50 s stall.
 */
export const MAX_SERVER_MESSAGES_PER_SECOND = 5000

/**
 * Most ids of requests sent and not answered yet that are remembered (`BoundedReadBuffer.sent`);
 * past it the oldest is forgotten (its late answer then counts as one of the server's own).
 */
const MAX_REQUESTS_IN_FLIGHT = 10_000

/**
 * Thrown by `OwnMessageCount.read` (`BoundedReadBuffer.readMessage` for a stdio upstream) once an
 * upstream sent messages of its own faster than `gateway.maxServerMessagesPerSecond` for as long
 * as its reserve of that many lasts: the gateway closes the connection (what comes after is
 * dropped unread) and reconnects on its backoff.
 */
export class UpstreamMessageFlood extends Error {
  constructor(perSecond: number) {
    const cap = perSecond.toLocaleString('en-US')
    super(
      `the upstream sent messages of its own (notifications, requests, answers to requests never sent) faster than ${cap} a second until its reserve of ${cap} ran out (gateway.maxServerMessagesPerSecond): the connection is closed and made again`,
    )
    this.name = 'UpstreamMessageFlood'
  }
}

/**
 * Thrown by a stdio transport's `send` while more than `gateway.maxMessageBytes` already wait to
 * be written to the process's stdin: a server that stops reading its input (hung, or hostile)
 * made the SDK's `send` queue every later message in our memory (the socket and the process's
 * stream hold a few hundred KiB; node's stream took the rest, however much), each call only
 * timing out. The request is not sent and fails at once; the server is marked slow, not
 * dropped (a live one reading a large call's arguments can hold a backlog for a moment).
 */
export class UpstreamInputBacklog extends Error {
  constructor(waiting: number, maxMessageBytes: number) {
    super(
      `the upstream is not reading its input: ${waiting.toLocaleString('en-US')} bytes wait to be written to its stdin, over gateway.maxMessageBytes (${maxMessageBytes.toLocaleString('en-US')}); the request was not sent`,
    )
    this.name = 'UpstreamInputBacklog'
  }
}

/**
 * Why a stdio server whose stdin held a backlog (UpstreamInputBacklog, or any after a call timed
 * out) was dropped: not one byte of it was read for `windowMs` (`gateway.callTimeoutMs`). Until round 37 such a server stayed
 * `slow` for good, every later call refused at once; now it is closed and made again with the
 * usual backoff (a new process). One that reads again, however slowly, is kept.
 */
export class UpstreamInputStalled extends Error {
  constructor(waiting: number, maxMessageBytes: number, windowMs: number) {
    super(
      `the upstream read none of its input for ${windowMs.toLocaleString('en-US')} ms (gateway.callTimeoutMs): ${waiting.toLocaleString('en-US')} bytes wait to be written to its stdin${waiting > maxMessageBytes ? `, over gateway.maxMessageBytes (${maxMessageBytes.toLocaleString('en-US')})` : ''}; the connection is closed and made again`,
    )
    this.name = 'UpstreamInputStalled'
  }
}

/**
 * Counts an upstream's own messages (notifications, requests, answers to no request in flight)
 * against `gateway.maxServerMessagesPerSecond`; told the ids of the requests sent (`sent`). One per
 * connection, stdio (in its read buffer) or HTTP (on its transport's `onmessage`).
 *
 * A token bucket: a reserve of `perSecond` messages, refilled at `perSecond` a second, one taken
 * per message; the flood is the message that finds it empty. So over any t seconds at most
 * `perSecond` x (t + 1) are read: a steady rate under the cap never trips however it is spaced
 * (bursts, or a backlog read at once after a stall), and a rate over it trips once the reserve is
 * spent (10 x the cap within 0.11 s, 2 x within 1 s, 1.2 x within 5 s). Before round 36 it was a
 * one-second window from the first message after the last one: a server steady at 98% of the cap
 * in bursts of 490 every 100 ms was closed 1-2 times in 20 s when read jitter put 11 bursts
 * within a second (an exact sliding window would trip on those too).
 */
export class OwnMessageCount {
  /** Messages left in the reserve (fractional: it refills continuously), as of `#at` (ms). */
  #reserve: number
  #at: number
  /** The ids (as text: the SDK matches `Number(id)`) of requests sent and not answered yet. */
  readonly #inFlight = new Set<string>()
  readonly #perSecond: number
  readonly #now: () => number

  /** `perSecond`: `gateway.maxServerMessagesPerSecond`; `now`: a clock in ms (tests). */
  constructor(
    perSecond = MAX_SERVER_MESSAGES_PER_SECOND,
    now: () => number = () => performance.now(),
  ) {
    this.#perSecond = perSecond
    this.#now = now
    this.#reserve = perSecond
    this.#at = now()
  }

  /** Request `id` was sent: its answer is not one of the server's own messages. */
  sent(id: MessageId): void {
    if (this.#inFlight.size >= MAX_REQUESTS_IN_FLIGHT)
      this.#inFlight.delete(this.#inFlight.values().next().value!)
    this.#inFlight.add(String(Number(id)))
  }

  /** Whether `id` names a request sent and not answered yet; it is answered from now on. */
  answered(id: unknown): boolean {
    return (
      (typeof id === 'string' || typeof id === 'number') &&
      this.#inFlight.delete(String(Number(id)))
    )
  }

  /**
   * Counts `message` when it is one of the server's own (a request or notification of the
   * server's, or an answer to no request in flight); with the reserve spent throws
   * UpstreamMessageFlood.
   */
  read(message: JSONRPCMessage): void {
    if (!('method' in message) && this.answered(message.id)) return
    const now = this.#now()
    const refilled = this.#reserve + ((now - this.#at) * this.#perSecond) / 1000
    this.#at = now
    this.#reserve = Math.min(this.#perSecond, refilled) - 1
    if (this.#reserve < 0) throw new UpstreamMessageFlood(this.#perSecond)
  }
}

/**
 * The SDK's `ReadBuffer` (`append`, `readMessage`, `clear`) with `maxMessageBytes` per line
 * instead of per buffer: a line over it is skipped (never buffered past the limit) and
 * `onOversize` told the id of the request the line answered (undefined: it answered none). The SDK's errors and closes the transport instead,
 * failing every call in flight, and also trips on several small messages that arrive together.
 */
export class BoundedReadBuffer {
  readonly #maxMessageBytes: number
  readonly #onOversize: (id: MessageId | undefined) => void
  #buffer: Buffer | undefined
  /** The line being skipped, when one is. */
  #skipping: TopLevelId | undefined
  /** Bytes of the line being skipped so far. */
  #skipped = 0
  /** Set once a line ran away or the server flooded: what comes after is dropped. */
  #broken = false
  /** The server's own messages, counted as they are read. */
  readonly count: OwnMessageCount

  constructor(
    maxMessageBytes: number,
    onOversize: (id: MessageId | undefined) => void,
    count = new OwnMessageCount(),
  ) {
    this.#maxMessageBytes = maxMessageBytes
    this.#onOversize = onOversize
    this.count = count
  }

  append(chunk: Buffer): void {
    if (this.#broken) return
    let rest = chunk
    if (this.#skipping) {
      const end = rest.indexOf(NEWLINE)
      this.#skipping.feed(end === -1 ? rest : rest.subarray(0, end))
      if (end === -1) {
        this.#skipped += rest.length
        if (this.#skipped <= MAX_SKIPPED_LINE_FACTOR * this.#maxMessageBytes) return
        this.clear()
        this.#broken = true
        throw new UpstreamLineRunaway(this.#maxMessageBytes)
      }
      const { answers } = this.#skipping
      this.#skipping = undefined
      this.count.answered(answers)
      this.#onOversize(answers)
      rest = rest.subarray(end + 1)
    }
    if (rest.length === 0) return
    const buffer = this.#buffer ? Buffer.concat([this.#buffer, rest]) : rest
    // The line without its newline yet: skipped from here on once it is over the limit.
    const lineStart = buffer.lastIndexOf(NEWLINE) + 1
    if (buffer.length - lineStart > this.#maxMessageBytes) {
      this.#skipping = new TopLevelId()
      this.#skipping.feed(buffer.subarray(lineStart))
      this.#skipped = buffer.length - lineStart
      this.#buffer = lineStart > 0 ? buffer.subarray(0, lineStart) : undefined
    } else {
      this.#buffer = buffer
    }
  }

  readMessage(): JSONRPCMessage | null {
    while (this.#buffer) {
      const end = this.#buffer.indexOf(NEWLINE)
      if (end === -1) return null
      const line = this.#buffer.subarray(0, end)
      this.#buffer = end + 1 < this.#buffer.length ? this.#buffer.subarray(end + 1) : undefined
      if (line.length > this.#maxMessageBytes) {
        // A whole line over the limit that came in one chunk.
        const scanner = new TopLevelId()
        scanner.feed(line)
        this.count.answered(scanner.answers)
        this.#onOversize(scanner.answers)
        continue
      }
      const message = deserializeMessage(line.toString('utf8').replace(/\r$/, ''))
      try {
        this.count.read(message)
      } catch (error) {
        // The flood: what comes after is dropped unread.
        this.clear()
        this.#broken = true
        throw error
      }
      return message
    }
    return null
  }

  clear(): void {
    this.#buffer = undefined
    this.#skipping = undefined
  }
}
