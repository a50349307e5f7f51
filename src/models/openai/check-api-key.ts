/**
 * The start-up check of `toolsel serve` when a configured planner or selector is an `openai:`
 * model: one `GET <baseUrl>/models` with the configured key. A 401 or 403 means every call of the
 * model would fail and fall back (the request still answers 200, `components.fallbacks` says so),
 * so the server refuses to start with the status and the endpoint instead. Anything else the check
 * can't confirm (unreachable, no answer in time, another status: some servers have no `/models`) is
 * a warning only: the endpoint may come up later, and the fallbacks cover it meanwhile. A model
 * list that lacks a configured model name warns too (each call would answer 404), and so does a 2xx
 * answer that is no model list or too large to read (no name checked). `toolsel models check
 * openai:<model>` sends the same request (`probeOpenAiEndpoint`).
 * @module
 */
import { ToolselError } from '../../errors.ts'
import type { Logger } from '../../log.ts'
import { readResponseText } from './read-response-text.ts'
import { shownMessage } from './shown-message.ts'

/** The check waits at most this long (or `timeoutMs`, if shorter) before warning and starting. */
export const API_KEY_CHECK_MAX_MS = 5_000
/** Characters of the endpoint's answer kept in the message. */
const MAX_BODY_CHARS = 200

export interface ApiKeyCheckOptions {
  baseUrl: string
  apiKey: string
  timeoutMs: number
  /** The configured ids that call the endpoint, named in the message. */
  users: string[]
  /**
   * How each of `users` is used (`modelUses`): per stage, whether a failing call of it falls
   * back (and to what) or fails the request. A warning says what is true of each use; a user
   * not here is said to fall back.
   */
  uses?: Readonly<Record<string, readonly ModelUse[]>>
  logger: Logger
  fetch?: typeof fetch
}

/** One use of a configured model: in which stage, and what a failing call of it does there. */
export interface ModelUse {
  stage: 'planner' | 'selector'
  /** The configured planner or selector (false: an entry of that stage's fallback list). */
  configured: boolean
  /** The component that stands in when its call fails; absent: the request fails. */
  fallback?: string
}

/** The planner/selector ids (configured and fallbacks) that are `openai:` models. */
export function openAiModelUsers(ids: Array<string | undefined>): string[] {
  const users = ids.filter(
    (id): id is string => id !== undefined && /^(llm:)?openai:/.test(id.trim()),
  )
  return [...new Set(users)]
}

/** What one `GET <baseUrl>/models` with the key found (see `probeOpenAiEndpoint`). */
export interface EndpointProbe {
  /**
   * `ok`: a 2xx answer that is an OpenAI model list (`models`); `refused`: 401 or 403 (the key is
   * wrong or missing); `unreachable`: no answer (connection failed, or none within the time; also
   * a 2xx whose model list was still arriving when the time ran out, or broke off: `status` then
   * says which); `status`: another HTTP status (404 where a server has no `/models`);
   * `too-large`: a 2xx answer over MAX_MODELS_BYTES, not read further (no model checked);
   * `not-a-list`: a complete 2xx answer that is no OpenAI model list (`{"data": [{"id": …}]}`):
   * `detail` quotes its start. Before round 44 both were `ok` with no `models`.
   */
  outcome: 'ok' | 'refused' | 'unreachable' | 'status' | 'too-large' | 'not-a-list'
  /** The URL asked, with user info, query and key shown as `***`. */
  url: string
  /** The HTTP status (0 when none came). */
  status: number
  /**
   * `unreachable`: why; `refused`: the start of the endpoint's answer (may be empty);
   * `not-a-list`: the start of the answer, quoted as JSON (`"<!DOCTYPE html>…"`).
   */
  detail: string
  /** `ok`: the model ids the answer lists (`data[].id`). */
  models?: string[]
  /** Rewrites a message for the log or an error: hides the key and the URL's secrets. */
  shown: (message: string) => string
  /** How long it waited at most. */
  limitMs: number
}

/** Bytes of a 2xx `/models` answer read for its model list (vLLM lists a few hundred bytes each). */
export const MAX_MODELS_BYTES = 1 << 20
/** Characters of a 2xx answer that is no model list quoted in `detail`. */
const MAX_NOT_A_LIST_CHARS = 80

/**
 * One `GET <baseUrl>/models` with the key (at most min(timeoutMs, 5 s)): what `toolsel serve`'s
 * start-up check and `toolsel models check openai:<model>` both judge.
 */
export async function probeOpenAiEndpoint(
  options: Omit<ApiKeyCheckOptions, 'users' | 'logger'>,
): Promise<EndpointProbe> {
  const url = `${options.baseUrl.replace(/\/+$/, '')}/models`
  const shown = shownMessage(url, options.apiKey)
  const limitMs = Math.min(options.timeoutMs, API_KEY_CHECK_MAX_MS)
  const base = { url: shown(url), shown, limitMs }
  let response: Response
  const signal = AbortSignal.timeout(limitMs)
  try {
    response = await (options.fetch ?? globalThis.fetch)(url, {
      headers: options.apiKey ? { authorization: `Bearer ${options.apiKey}` } : {},
      signal,
    })
  } catch (error) {
    const reason =
      error instanceof Error && error.name === 'TimeoutError'
        ? `no answer within ${limitMs} ms`
        : error instanceof Error && error.cause instanceof Error
          ? error.cause.message
          : String(error)
    return { ...base, outcome: 'unreachable', status: 0, detail: shown(reason) }
  }
  const { status } = response
  // Only a refusal's answer is quoted, and only its start: a body that never ends (or ends
  // after gigabytes) must neither fill the memory nor hide the status it came with.
  if (status === 401 || status === 403) {
    // Hidden before it is cut: cut first, an echoed key across the cut was left half there.
    const body = await leadingText(response, MAX_BODY_CHARS, shown)
    return { ...base, outcome: 'refused', status, detail: body.replace(/\s+/g, ' ').trim() }
  }
  if (status < 200 || status >= 300) {
    await response.body?.cancel().catch(() => {})
    return { ...base, outcome: 'status', status, detail: '' }
  }
  const list = await modelIds(response)
  // A 200 whose body was still arriving when the time ran out (or broke off) told nothing of the
  // models: before round 43 it was read as a list of none, "ok" (models check: exit 0, the model
  // "not confirmed"). It is no full answer within the time, as one whose status came too late.
  if ('error' in list) {
    const reason = signal.aborted
      ? `did not arrive in full within ${limitMs} ms`
      : `broke off (${errorReason(list.error)})`
    return {
      ...base,
      outcome: 'unreachable',
      status,
      detail: shown(`its answer (HTTP ${status}) ${reason}, so no model was confirmed`),
    }
  }
  if ('tooLarge' in list)
    return {
      ...base,
      outcome: 'too-large',
      status,
      detail: `its answer (HTTP ${status}) is over ${MAX_MODELS_BYTES.toLocaleString('en-US')} bytes, so it was not read as a model list`,
    }
  if ('notAList' in list) {
    // Quoted as JSON: an HTML page's newlines or a hostile body's control characters stay escaped.
    // Hidden before it is cut, as a refusal's body: a key echoed across the cut at 80 characters
    // was left there in part (round 44, hard41); hidden again once quoted.
    const start = shown(list.notAList).replace(/\s+/g, ' ').trim()
    const quoted = JSON.stringify(
      start.length > MAX_NOT_A_LIST_CHARS ? `${start.slice(0, MAX_NOT_A_LIST_CHARS)}…` : start,
    )
    return { ...base, outcome: 'not-a-list', status, detail: shown(quoted) }
  }
  return { ...base, outcome: 'ok', status, detail: '', models: list.models }
}

/** A failed read's reason: fetch's cause when it has one (`other side closed`). */
function errorReason(error: unknown): string {
  if (!(error instanceof Error)) return String(error)
  return error.cause instanceof Error ? error.cause.message : error.message
}

/** A configured model that the start-up check found failing: each call of it would fall back. */
export interface StartupFailure {
  /** The configured id (one of `users`). */
  user: string
  /** What its calls would fail with: UPSTREAM_UNAVAILABLE (unreachable) or MODEL_CALL_FAILED. */
  code: 'UPSTREAM_UNAVAILABLE' | 'MODEL_CALL_FAILED'
  /** The HTTP status its calls would get (404 for a model the endpoint does not list). */
  status?: number
  message: string
}

/**
 * Throws INVALID_CONFIG when the endpoint answers 401 or 403; warns when it can't tell, and when
 * its model list lacks a configured model (each call of it would answer 404 and fall back).
 * Returns the HTTP status it got (0 when none) and the users it found failing (unreachable, or
 * a model the list lacks: `/readyz` `degraded` starts with them; an endpoint with no `/models`
 * is not counted as failing).
 */
export async function checkOpenAiApiKey(
  options: ApiKeyCheckOptions,
): Promise<{ status: number; failing: StartupFailure[] }> {
  const probe = await probeOpenAiEndpoint(options)
  const { shown, url, status } = probe
  const users = options.users.join(', ')
  switch (probe.outcome) {
    case 'unreachable': {
      options.logger.warn(
        shown(
          `Could not check the OpenAI-compatible endpoint of ${users}: GET ${url}: ${probe.detail}. Starting anyway; its calls fall back while it fails.`,
        ),
      )
      const message = shown(
        `The start-up check ${probe.status > 0 ? 'got no full answer from' : 'could not reach'} the OpenAI-compatible endpoint: GET ${url}: ${probe.detail}.`,
      )
      return {
        status: 0,
        failing: options.users.map((user) => ({ user, code: 'UPSTREAM_UNAVAILABLE', message })),
      }
    }
    case 'refused': {
      const key = options.apiKey ? 'refuses the API key' : 'wants an API key and none is set'
      throw new ToolselError(
        'INVALID_CONFIG',
        shown(
          `The OpenAI-compatible endpoint of ${users} ${key}: GET ${url} answered HTTP ${status}${probe.detail ? ` (${probe.detail})` : ''}. Set models.openai.apiKey or TOOLSEL_OPENAI_API_KEY to a key it accepts; every call would fail and fall back.`,
        ),
        { details: { url, status, users: options.users } },
      )
    }
    case 'status':
      options.logger.warn(
        shown(
          `Could not check the API key of the OpenAI-compatible endpoint of ${users}: GET ${url} answered HTTP ${status}. Starting anyway.${status === 404 || status === 405 ? ` Many OpenAI-compatible servers serve no /models: \`toolsel models check ${options.users[0]} --chat\` checks the key and the model with one chat call (a few tokens).` : ''}`,
        ),
      )
      return { status, failing: [] }
    case 'too-large':
    case 'not-a-list':
      // The key was taken (a 2xx), but no model name was checked; nothing counts as failing.
      options.logger.warn(
        shown(
          `Could not check the model names of ${users}: GET ${url}${probe.outcome === 'too-large' ? `: ${probe.detail}` : ` answered HTTP ${status} with no OpenAI-compatible model list (it starts ${probe.detail})`}. Starting anyway.`,
        ),
      )
      return { status, failing: [] }
    case 'ok': {
      const failing: StartupFailure[] = []
      for (const user of options.users) {
        const message = unlistedModel(probe, modelOf(user), options.uses?.[user])
        if (!message) continue
        options.logger.warn(shown(`${user}: ${message} Starting anyway.`))
        failing.push({
          user,
          code: 'MODEL_CALL_FAILED',
          status: 404,
          message: shown(`The start-up check: ${message}`),
        })
      }
      return { status, failing }
    }
  }
}

/** The served model name of an `openai:<model>` or `llm:openai:<model>` id. */
export function modelOf(id: string): string {
  return id.trim().replace(/^(llm:)?openai:/, '')
}

/**
 * Why `model` looks wrong for an endpoint whose `/models` answered `probe`: it lists models, none
 * of them `model` (a chat call would answer 404). Undefined when it is listed or there is no list.
 * `uses`: what a failing call of it does in each stage that uses it (none given: falls back).
 */
export function unlistedModel(
  probe: EndpointProbe,
  model: string,
  uses?: readonly ModelUse[],
): string | undefined {
  if (!probe.models || probe.models.includes(model)) return undefined
  // The endpoint names them: each is cut, so its answer (up to 1 MiB) can't make one log line,
  // `/readyz` message or error of that size.
  const listed = probe.models.slice(0, 10).map(shownModelId)
  const more = probe.models.length > 10 ? ` and ${probe.models.length - 10} more` : ''
  return `GET ${probe.url} lists no model "${model}" (it serves ${listed.join(', ') || 'none'}${more}): its calls would answer 404${whatFailureDoes(uses)}. Use the name the server gives it (vLLM: --served-model-name).`
}

/**
 * What a failing call does, true of every use in `uses`: fall back (all do), the request fails
 * (it is the last fallback of each list that has it), or, when that differs by use (a model last
 * in one list and in the middle of the other, a configured one with no fallback), each use's.
 * Before round 43 a model last in one list was said to fail the request for both lists.
 */
function whatFailureDoes(uses: readonly ModelUse[] | undefined): string {
  if (!uses || uses.every((use) => use.fallback !== undefined)) return ' and fall back'
  if (uses.every((use) => !use.configured && use.fallback === undefined))
    return ', and a request falling back to it would fail'
  const each = uses.map(
    (use) =>
      `as the ${use.stage}${use.configured ? '' : "'s fallback"} they ${use.fallback === undefined ? 'fail the request' : `fall back to ${use.fallback}`}`,
  )
  return ` (${each.join('; ')})`
}

/** Characters of each model id the endpoint lists that a message quotes (vLLM's are paths). */
const MAX_SHOWN_MODEL_ID_CHARS = 200

/** `id` quoted (JSON), cut at MAX_SHOWN_MODEL_ID_CHARS with `…` and its length when longer. */
function shownModelId(id: string): string {
  if (id.length <= MAX_SHOWN_MODEL_ID_CHARS) return JSON.stringify(id)
  const cut = JSON.stringify(`${id.slice(0, MAX_SHOWN_MODEL_ID_CHARS)}…`)
  return `${cut} (${id.length.toLocaleString('en-US')} characters)`
}

/**
 * `models`: the `data[].id` of an OpenAI model list; `tooLarge`: the body is over
 * MAX_MODELS_BYTES (the rest is not read); `notAList`: a complete body that is no such list (its
 * text); `error`: the body did not arrive in full (the probe's time ran out, the connection broke).
 */
async function modelIds(
  response: Response,
): Promise<{ models: string[] } | { tooLarge: true } | { notAList: string } | { error: unknown }> {
  const read = await readResponseText(response, MAX_MODELS_BYTES, { partial: true })
  if ('error' in read) return { error: read.error }
  if (read.cut) return { tooLarge: true }
  const notAList = { notAList: read.text.slice(0, MAX_NOT_A_LIST_CHARS * 4) }
  try {
    const parsed: unknown = JSON.parse(read.text)
    const data = (parsed as { data?: unknown })?.data
    if (!Array.isArray(data)) return notAList
    const ids = data.map((entry) => (entry as { id?: unknown })?.id)
    return ids.every((id) => typeof id === 'string') ? { models: ids } : notAList
  } catch {
    return notAList
  }
}

/**
 * The first `maxChars` characters of `response`'s body as `shown` rewrites it (at most 4 bytes
 * each are read), then the rest is cancelled; what arrived before a failed or timed-out read,
 * never an error.
 */
async function leadingText(
  response: Response,
  maxChars: number,
  shown: (text: string) => string,
): Promise<string> {
  const { text } = await readResponseText(response, maxChars * 4, { partial: true })
  return shown(text).slice(0, maxChars)
}
