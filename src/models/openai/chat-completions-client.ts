/**
 * POST /chat/completions to an OpenAI-compatible server with `fetch`: a time limit per attempt,
 * bounded retries with exponential backoff on 429, 5xx and network errors (never on other 4xx,
 * which a retry can't fix; within the request's shared budget, request-retries.ts), and every failure mapped to a ToolselError that keeps the raw body.
 * Its messages (the log, `components.fallbacks`, `/readyz` `degraded`) show the URL without its
 * user info and the API key as `***`, also where the endpoint's answer echoes it: the answer is
 * rewritten so as it is read, completions included.
 * @module
 */
import { ToolselError, throwIfAborted } from '../../errors.ts'
import { SILENT_LOGGER, type Logger } from '../../log.ts'
import type { RetryBudget } from '../../contracts.ts'
import { ChatCompletionSchema, type ChatCompletion } from './chat-completion-schema.ts'
import { readResponseText } from './read-response-text.ts'
import { shownMessage } from './shown-message.ts'
import { sleepAtLeast } from '../../timer-at-least.ts'

export interface ChatCompletionsClientOptions {
  /** The server's OpenAI API root, e.g. `http://localhost:8000/v1`. `/chat/completions` is appended. */
  baseUrl: string
  /** Sent as `Authorization: Bearer <apiKey>`. Default none (local servers usually need none). */
  apiKey?: string
  /** Time limit per attempt in ms; a timed-out attempt is not retried. Default 30,000. */
  timeoutMs?: number
  /** Retries after the first attempt, on 429, 5xx and network errors. Default 2. Sensible 0-5. */
  maxRetries?: number
  /** First backoff in ms, doubled per retry; a longer `Retry-After` wins (up to 30 s). Default 500. */
  retryDelayMs?: number
  /**
   * Retries that all the calls of one request may make together (request-retries.ts), on top of
   * each call's `maxRetries`. Default 2.
   */
  maxRetriesPerRequest?: number
  /** The fetch to use (a proxy-aware one, a test double). Default the global `fetch`. */
  fetch?: typeof fetch
  logger?: Logger
}

/** Longest wait between attempts, whatever `Retry-After` says. */
const MAX_RETRY_DELAY_MS = 30_000
/** Raw bodies kept on errors are cut here so one bad response can't flood the logs. */
const MAX_RAW_CHARS = 8_000
/**
 * Longest answer read (8 MiB): a chat completion, even with top_logprobs for every choice, is a
 * few KiB; past this the rest is not read and the call fails (MODEL_CALL_FAILED, not retried).
 */
export const MAX_COMPLETION_BYTES = 8 * 1024 * 1024

type Attempt =
  | { ok: true; completion: ChatCompletion; raw: string }
  | { ok: false; error: ToolselError; retryAfterMs?: number }

export class ChatCompletionsClient {
  readonly url: string
  /** `url` without its user info and query (`***`), for messages. */
  readonly shownUrl: string
  /** Hides the URL's secrets and the API key in a message (shown-message.ts). */
  readonly #shown: (message: string) => string
  readonly #options: Required<Omit<ChatCompletionsClientOptions, 'apiKey'>> & { apiKey?: string }

  constructor(options: ChatCompletionsClientOptions) {
    this.url = `${options.baseUrl.replace(/\/+$/, '')}/chat/completions`
    this.#shown = shownMessage(this.url, options.apiKey ?? '')
    this.shownUrl = this.#shown(this.url)
    this.#options = {
      timeoutMs: 30_000,
      maxRetries: 2,
      retryDelayMs: 500,
      maxRetriesPerRequest: 2,
      fetch: globalThis.fetch,
      logger: SILENT_LOGGER,
      ...options,
    }
  }

  /**
   * Sends `body` and returns the parsed completion with the raw body (kept for error details).
   * Throws TIMEOUT, ABORTED, MODEL_CALL_FAILED or UPSTREAM_UNAVAILABLE.
   */
  async create(
    body: Record<string, unknown>,
    signal?: AbortSignal,
    retries?: RetryBudget,
  ): Promise<{ completion: ChatCompletion; raw: string }> {
    for (let attempt = 0; ; attempt++) {
      const result = await this.#attempt(body, signal)
      if (result.ok) return { completion: result.completion, raw: result.raw }
      const retryable = result.error.code === 'UPSTREAM_UNAVAILABLE'
      if (!retryable || attempt >= this.#options.maxRetries) throw result.error
      const limit = this.#options.maxRetriesPerRequest
      if (retries !== undefined && !retries.take(limit)) {
        throw new ToolselError(
          result.error.code,
          `${result.error.message} Not retried: this request's ${limit} ${limit === 1 ? 'retry is' : 'retries are'} spent (models.openai.maxRetriesPerRequest).`,
          { cause: result.error, details: result.error.details },
        )
      }
      const delay = Math.min(
        MAX_RETRY_DELAY_MS,
        Math.max(this.#options.retryDelayMs * 2 ** attempt, result.retryAfterMs ?? 0),
      )
      this.#options.logger.warn('Retrying chat completion', {
        url: this.shownUrl,
        attempt: attempt + 1,
        delayMs: delay,
        reason: result.error.message,
      })
      // At least the delay (a Retry-After is a minimum), not a timer that may end early.
      await sleepAtLeast(delay, { signal })
    }
  }

  async #attempt(body: Record<string, unknown>, signal: AbortSignal | undefined): Promise<Attempt> {
    throwIfAborted(signal)
    // A bound, not a minimum, so AbortSignal.timeout and not timer-at-least.ts (decided in round
    // 45): `timeoutMs` caps how long a call may hold its request, and a timer that ends up to a
    // millisecond early only caps it a millisecond sooner. The waits that promise a minimum, the
    // backoff and a server's `Retry-After`, use sleepAtLeast (create).
    const timeout = AbortSignal.timeout(this.#options.timeoutMs)
    const combined = signal ? AbortSignal.any([signal, timeout]) : timeout
    let status = 0
    let raw = ''
    let cut = false
    let retryAfterMs: number | undefined
    let contentType = ''
    try {
      const response = await this.#options.fetch(this.url, {
        method: 'POST',
        headers: {
          'content-type': 'application/json',
          ...(this.#options.apiKey ? { authorization: `Bearer ${this.#options.apiKey}` } : {}),
        },
        body: JSON.stringify(body),
        signal: combined,
      })
      status = response.status
      retryAfterMs = parseRetryAfter(response.headers.get('retry-after'))
      contentType = response.headers.get('content-type') ?? ''
      const answer = await readResponseText(response, MAX_COMPLETION_BYTES)
      // The key (and the URL's secrets) out of the answer as soon as it is read, before anything
      // quotes or cuts it: a message quoting its start left the part of an echoed key before
      // the cut, and a completion's own text (plan steps, a selector's answer, PLAN_UNPARSABLE's
      // quote in components.fallbacks) was never hidden at all (round 42, hard35).
      raw = this.#shown(answer.text)
      cut = answer.cut
    } catch (error) {
      throwIfAborted(signal)
      if (timeout.aborted) {
        throw new ToolselError(
          'TIMEOUT',
          `${this.shownUrl} did not answer within ${this.#options.timeoutMs} ms (models.openai.timeoutMs; a call that times out is not retried). Check the server or raise models.openai.timeoutMs.`,
          { cause: error, details: { url: this.shownUrl, timeoutMs: this.#options.timeoutMs } },
        )
      }
      const reason =
        error instanceof Error
          ? error.cause instanceof Error
            ? error.cause.message
            : error.message
          : String(error)
      return {
        ok: false,
        error: this.#error(
          'UPSTREAM_UNAVAILABLE',
          `${this.url} is unreachable: ${reason}.`,
          0,
          '',
          error,
        ),
      }
    }
    if (cut) {
      return {
        ok: false,
        error: this.#error(
          'MODEL_CALL_FAILED',
          `${this.url} answered HTTP ${status} with more than ${MAX_COMPLETION_BYTES.toLocaleString('en-US')} bytes; a chat completion is far smaller, so the rest was not read. Check models.openai.baseUrl.`,
          status,
          raw,
        ),
      }
    }
    if (status === 429 || status >= 500) {
      const error = this.#error(
        'UPSTREAM_UNAVAILABLE',
        `${this.url} answered HTTP ${status}.`,
        status,
        raw,
      )
      return { ok: false, error, retryAfterMs }
    }
    if (status < 200 || status >= 300) {
      const hint = failureHint(status, raw, body.model)
      return {
        ok: false,
        error: this.#error(
          'MODEL_CALL_FAILED',
          `${this.url} answered HTTP ${status}: ${raw.slice(0, 300)}${hint}`,
          status,
          raw,
        ),
      }
    }
    return this.#parse(raw, status, contentType)
  }

  #parse(raw: string, status: number, contentType: string): Attempt {
    let json: unknown
    try {
      json = JSON.parse(raw)
    } catch (error) {
      return {
        ok: false,
        error: this.#error(
          'MODEL_CALL_FAILED',
          `${this.url} answered with invalid JSON${notJsonHint(contentType, raw)}.`,
          status,
          raw,
          error,
        ),
      }
    }
    const parsed = ChatCompletionSchema.safeParse(json)
    if (!parsed.success) {
      const issue = parsed.error.issues[0]
      const where = issue
        ? `${issue.path.join('.') || '(root)'}: ${issue.message}`
        : 'unknown shape'
      return {
        ok: false,
        error: this.#error(
          'MODEL_CALL_FAILED',
          `${this.url} answered something that is not a chat completion (${where}).`,
          status,
          raw,
        ),
      }
    }
    return { ok: true, completion: parsed.data, raw }
  }

  #error(
    code: 'MODEL_CALL_FAILED' | 'UPSTREAM_UNAVAILABLE',
    message: string,
    status: number,
    raw: string,
    cause?: unknown,
  ): ToolselError {
    // The message quotes the URL (and fetch's error may quote it whole, user info and all). `raw`,
    // and what the message quotes of it, had the key hidden when the answer was read (d8d109d).
    return new ToolselError(code, this.#shown(message), {
      cause,
      details: { url: this.shownUrl, status, raw: raw.slice(0, MAX_RAW_CHARS) },
    })
  }
}

/**
 * What an answer that is not JSON looks like, where it tells: a stream of server-sent events
 * (toolsel asks for none: a proxy or gateway that streams every answer), or a web page (a login
 * page or another site at models.openai.baseUrl). Before round 42 the message said "invalid JSON"
 * only, for an answer the message does not quote (it stays in `details.raw`).
 */
function notJsonHint(contentType: string, raw: string): string {
  const type = contentType.split(';')[0].trim().toLowerCase()
  const start = raw.trimStart().slice(0, 15).toLowerCase()
  if (type === 'text/event-stream' || start.startsWith('data:'))
    return ` (${type || 'no content-type'}: a stream of server-sent events, though toolsel asks for none; point models.openai.baseUrl at the server itself, not a proxy that streams every answer)`
  if (type === 'text/html' || start.startsWith('<!doctype html') || start.startsWith('<html'))
    return ` (${type || 'no content-type'}: a web page, not the API; check models.openai.baseUrl, the API root such as http://localhost:8000/v1, and any login page or proxy in front of it)`
  return type && type !== 'application/json'
    ? ` (content-type ${JSON.stringify(type.slice(0, 100))})`
    : ''
}

/** `Retry-After` in ms: delta-seconds or an HTTP date (RFC 9110 section 10.2.3). */
function parseRetryAfter(value: string | null): number | undefined {
  if (value === null) return undefined
  const seconds = Number(value)
  if (Number.isFinite(seconds)) return Math.max(0, seconds * 1000)
  const date = Date.parse(value)
  return Number.isNaN(date) ? undefined : Math.max(0, date - Date.now())
}

/**
 * What to check for a refused call, where the status and answer tell: the key (401/403); the
 * model name or the base URL (404: vLLM answers it for a model it does not serve, by its
 * --served-model-name, not the Hugging Face id); the thinking switch (400 naming
 * chat_template_kwargs: api.openai.com refuses fields it does not know).
 */
function failureHint(status: number, raw: string, model: unknown): string {
  if (status === 401 || status === 403) return ' Check the API key.'
  if (status === 404)
    return ` Check the model name (${JSON.stringify(String(model)).slice(0, 200)}: the name the server serves it by; \`toolsel models check openai:<model>\` lists them) and models.openai.baseUrl (the API root, e.g. http://localhost:8000/v1).`
  if (status === 400 && raw.includes('chat_template_kwargs'))
    return " The server refuses chat_template_kwargs (Qwen3's thinking switch): set models.openai.sendThinkingSwitch to false (TOOLSEL_OPENAI_SEND_THINKING_SWITCH=false)."
  return ''
}
