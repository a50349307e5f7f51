/**
 * A typed client for the toolsel HTTP API. Request and response types are the server's own zod
 * schemas (`src/server/schemas.ts`), the same ones `/openapi.json` is generated from, so the
 * client cannot drift from the API; `test/client/` checks every operation of `/openapi.json` has a
 * method here and that real responses validate against the published schemas.
 *
 * @example
 * const toolsel = new ToolselClient({ baseUrl: 'http://localhost:8080' })
 * const { tools, steps } = await toolsel.select('email Ann the weather in Paris')
 * // tools: [{id: 'weather.get_forecast', name, description, parameters}, …]
 * @module
 */
import type { z } from 'zod'
import type { ErrorCode } from '../errors.ts'
import type {
  ImportFormat,
  OnDuplicate,
  ProviderNames,
} from '../library/importers/import-formats.ts'
import type { ProviderTool, ProviderToolFormat, ToolFormat } from '../library/provider-tools.ts'
import type { RESPONSE_SCHEMAS, RequestSchemas } from '../server/schemas.ts'
import type { CaCertificates } from './https-fetch.ts'
import { isSendableApiKey } from './api-key.ts'
import { ToolselClientError } from './toolsel-client-error.ts'

type Responses = typeof RESPONSE_SCHEMAS

export type SelectToolsRequest = z.input<RequestSchemas['selectTools']>
type SelectToolsAnswer = z.output<Responses['selectTools']>
export type SelectedTool = z.output<Responses['selectedTool']>
/**
 * A `select` answer: with `toolFormat` toolsel (the default) its tools are `SelectedTool`s; with a
 * provider's format they are that provider's tool definitions, and `toolIds` maps their names
 * back to tool ids.
 */
export type SelectToolsResponse<F extends ToolFormat = 'toolsel'> = Omit<
  SelectToolsAnswer,
  'tools' | 'toolIds'
> &
  (F extends ProviderToolFormat
    ? { tools: ProviderTool<F>[]; toolIds: Record<string, string> }
    : { tools: SelectedTool[] })
/** Tools by id in a provider's shape (`getProviderTools`), with provider name → tool id. */
export interface ProviderTools<F extends ProviderToolFormat = ProviderToolFormat> {
  tools: ProviderTool<F>[]
  toolIds: Record<string, string>
}
export type SearchToolsRequest = z.input<RequestSchemas['searchTools']>
export type SearchToolsResponse = z.output<Responses['searchTools']>
export type LibraryInfo = z.output<Responses['library']>
export type PutLibraryResponse = z.output<Responses['putLibrary']>
export type ServedTool = z.output<Responses['servedTool']>
export type ComponentsResponse = z.output<Responses['components']>
export type SnapshotResponse = z.output<Responses['snapshot']>
export type ReadyResponse = z.output<Responses['readyz']>
export type PlannerRewardRequest = z.input<RequestSchemas['rewardsPlanner']>
export type PlannerRewardResponse = z.output<Responses['rewardsPlanner']>
export type SelectorRewardRequest = z.input<RequestSchemas['rewardsSelector']>
export type SelectorRewardResponse = z.output<Responses['rewardsSelector']>
export type AddExamplesRequest = z.input<RequestSchemas['addExamples']>
export type FeedbackRequest = z.input<RequestSchemas['feedback']>
export type AddExamplesResponse = z.output<Responses['addExamples']>

export interface ToolselClientOptions {
  /** Where the service listens, e.g. `http://localhost:8080` (a path prefix is kept). */
  baseUrl: string
  /** Sent as `Authorization: Bearer <apiKey>` when the service requires a key. */
  apiKey?: string
  /** Per-request time limit in milliseconds; CLIENT_TIMEOUT when exceeded. Default 30000. */
  timeoutMs?: number
  /** Extra headers for every request. */
  headers?: Record<string, string>
  /** The fetch to use (a test double, a proxy-aware fetch). Default: the global fetch. */
  fetch?: typeof fetch
  /**
   * The CA certificates (PEM text or bytes, one or several) to trust for an `https://` baseUrl
   * served with a private CA's certificate, e.g. `ca: readFileSync('ca.pem')`; they replace
   * Node's built-in roots for this client (as `tls.connect`'s `ca`). Requests then go through
   * the `undici` package's fetch with an Agent trusting them (Node only), kept alive. Without
   * it the global fetch trusts Node's roots and `NODE_EXTRA_CA_CERTS`.
   */
  ca?: CaCertificates
  /**
   * The most bytes of an answer's body the client reads (an error's body: at most 1 MiB); a
   * larger one, or one whose Content-Length says so, is BAD_RESPONSE, not read further.
   * Default 64 MiB.
   */
  maxResponseBytes?: number
}

/** Per-call options. */
export interface CallOptions {
  /** Aborting it rejects the call with CLIENT_ABORTED. */
  signal?: AbortSignal
  /** Overrides the client's `timeoutMs` for this call. */
  timeoutMs?: number
}

export interface PutLibraryOptions extends CallOptions {
  /** The body's format; default: detected by the server. */
  format?: ImportFormat
  /** Tool ids become `namespace.name`. */
  namespace?: string
  /** Two records with one id: `error` (default), `rename`, `first` or `last`. */
  onDuplicate?: OnDuplicate
  /**
   * openai / anthropic bodies: tool names toolsel wrote (`sms--send_sms`) are read back as tool
   * ids (`decode`, default; only when the body shows it is toolsel's export) or kept (`keep`).
   */
  providerNames?: ProviderNames
  /**
   * Retriever parts to build, a comma list whose first is the library's default: `bm25`
   * (default), `dense`, `hybrid`, `regex`, `dense:<embedder>`, `hybrid:<part>+<part>`.
   */
  retriever?: 'bm25' | 'dense' | 'hybrid' | 'regex' | (string & {})
  /** The library's usage examples: `keep` (default; minus ids the new tools lack) or `drop`. */
  examples?: 'keep' | 'drop'
  /** Build and save even when the saved index already holds these tools (default: unchanged). */
  rebuild?: boolean
}

/** Each method and the operation of `/openapi.json` it calls (checked by the client test). */
export const CLIENT_OPERATIONS = {
  select: 'POST /v1/select-tools',
  search: 'POST /v1/search-tools',
  listLibraries: 'GET /v1/libraries',
  getLibrary: 'GET /v1/libraries/{library}',
  putLibrary: 'PUT /v1/libraries/{library}',
  deleteLibrary: 'DELETE /v1/libraries/{library}',
  getTool: 'GET /v1/libraries/{library}/tools/{id}',
  getTools: 'POST /v1/libraries/{library}/tools/batch',
  getProviderTools: 'POST /v1/libraries/{library}/tools/batch',
  addExamples: 'POST /v1/libraries/{library}/examples',
  feedback: 'POST /v1/feedback',
  plannerRewards: 'POST /v1/rewards/planner',
  selectorRewards: 'POST /v1/rewards/selector',
  components: 'GET /v1/components',
  health: 'GET /healthz',
  ready: 'GET /readyz',
  metrics: 'GET /metrics',
  snapshot: 'POST /v1/snapshots',
} as const

const DEFAULT_TIMEOUT_MS = 30_000
/** What `maxResponseBytes` defaults to: far above any answer of the service (a 10k-tool list). */
export const DEFAULT_MAX_RESPONSE_BYTES = 64 * 1024 ** 2
/** The service's error bodies are a code and a message: a larger one is not the service's. */
const MAX_ERROR_BODY_BYTES = 1024 ** 2

export class ToolselClient {
  readonly #baseUrl: string
  readonly #options: ToolselClientOptions
  #caFetch: Promise<typeof fetch> | undefined

  constructor(options: ToolselClientOptions) {
    if (!/^https?:\/\//.test(options.baseUrl)) {
      throw new TypeError(
        `ToolselClient: baseUrl must be an http(s) URL such as http://localhost:8080, got "${options.baseUrl}"`,
      )
    }
    const limit = options.maxResponseBytes
    if (limit !== undefined && !(Number.isSafeInteger(limit) && limit > 0)) {
      throw new TypeError(
        `ToolselClient: maxResponseBytes must be a positive whole number of bytes, got ${limit}`,
      )
    }
    if (options.apiKey !== undefined && !isSendableApiKey(options.apiKey)) {
      throw new TypeError(
        "ToolselClient: apiKey holds a character an Authorization header can't carry (a space, a line break, a letter beyond ASCII): API keys are visible ASCII (the key is not shown)",
      )
    }
    if (options.ca !== undefined) checkCa(options)
    this.#baseUrl = options.baseUrl.replace(/\/+$/, '')
    this.#options = options
  }

  /** `options.fetch`, the https fetch of `options.ca` (loaded on the first call), or fetch. */
  #fetch(): typeof fetch | Promise<typeof fetch> {
    const { ca } = this.#options
    if (ca === undefined) return this.#options.fetch ?? fetch
    this.#caFetch ??= import('./https-fetch.ts').then(
      ({ httpsFetch }) => httpsFetch(ca),
      (error: unknown) => {
        // An install without toolsel's dependencies (dist/ copied alone, a bundle leaving it out).
        throw new ToolselClientError(
          'NETWORK',
          `ToolselClient: the ca option needs the undici package, a dependency of toolsel, which could not be loaded (${(error as Error).message?.split('\n')[0]}): install toolsel's dependencies`,
          { cause: error },
        )
      },
    )
    return this.#caFetch
  }

  /**
   * Plans, retrieves and selects the tools for an instruction (`POST /v1/select-tools`).
   * `toolFormat: 'openai' | 'openai-responses' | 'anthropic'` returns the tools as that API takes
   * them, with `toolIds` (provider tool name → tool id).
   */
  select<F extends ToolFormat = 'toolsel'>(
    request: string | (SelectToolsRequest & { toolFormat?: F }),
    options?: CallOptions,
  ): Promise<SelectToolsResponse<F>> {
    const body = typeof request === 'string' ? { instruction: request } : request
    return this.#request('POST', '/v1/select-tools', { body, ...options })
  }

  /** Ranked tools for a query, without planning or selection (`POST /v1/search-tools`). */
  search(
    request: string | SearchToolsRequest,
    options?: CallOptions,
  ): Promise<SearchToolsResponse> {
    const body = typeof request === 'string' ? { query: request } : request
    return this.#request('POST', '/v1/search-tools', { body, ...options })
  }

  /** Full definitions (with parameters) of tools by id, in the order asked. */
  async getTools(
    library: string,
    ids: readonly string[],
    options?: CallOptions,
  ): Promise<ServedTool[]> {
    const path = `/v1/libraries/${encodeURIComponent(library)}/tools/batch`
    const result = await this.#request<{ tools: ServedTool[] }>('POST', path, {
      body: { ids },
      ...options,
    })
    return result.tools
  }

  /**
   * Tools by id in the shape a model API takes (`openai`, `openai-responses`, `anthropic`), in
   * the order asked, with `toolIds`: provider tool name → tool id.
   */
  getProviderTools<F extends ProviderToolFormat>(
    library: string,
    ids: readonly string[],
    toolFormat: F,
    options?: CallOptions,
  ): Promise<ProviderTools<F>> {
    const path = `/v1/libraries/${encodeURIComponent(library)}/tools/batch`
    return this.#request('POST', path, { body: { ids, toolFormat }, ...options })
  }

  /** One tool's full definition. */
  async getTool(library: string, id: string, options?: CallOptions): Promise<ServedTool> {
    const path = `/v1/libraries/${encodeURIComponent(library)}/tools/${encodeURIComponent(id)}`
    return (await this.#request<{ tool: ServedTool }>('GET', path, options)).tool
  }

  async listLibraries(options?: CallOptions): Promise<LibraryInfo[]> {
    return (await this.#request<{ libraries: LibraryInfo[] }>('GET', '/v1/libraries', options))
      .libraries
  }

  getLibrary(name: string, options?: CallOptions): Promise<LibraryInfo> {
    return this.#request('GET', `/v1/libraries/${encodeURIComponent(name)}`, options)
  }

  /**
   * Creates or replaces a library from tools in any supported format: a string is sent as it is
   * (JSON, JSON Lines, CSV, OpenAPI YAML), anything else as JSON.
   */
  putLibrary(
    name: string,
    tools: string | object,
    options: PutLibraryOptions = {},
  ): Promise<PutLibraryResponse> {
    const { format, namespace, onDuplicate, providerNames, retriever, examples, rebuild, ...call } =
      options
    const query = new URLSearchParams()
    const fields = {
      format,
      namespace,
      onDuplicate,
      providerNames,
      retriever,
      examples,
      rebuild: rebuild === undefined ? undefined : String(rebuild),
    }
    for (const [key, value] of Object.entries(fields)) {
      if (value !== undefined) query.set(key, value)
    }
    const search = query.size > 0 ? `?${query}` : ''
    const body = typeof tools === 'string' ? tools : JSON.stringify(tools)
    return this.#request('PUT', `/v1/libraries/${encodeURIComponent(name)}${search}`, {
      rawBody: body,
      ...call,
    })
  }

  async deleteLibrary(name: string, options?: CallOptions): Promise<void> {
    await this.#request('DELETE', `/v1/libraries/${encodeURIComponent(name)}`, options)
  }

  /** Adds usage examples `{instruction, tools}` to a library (`POST /v1/libraries/:library/examples`). */
  addExamples(
    library: string,
    examples: AddExamplesRequest['examples'],
    options?: CallOptions,
  ): Promise<AddExamplesResponse> {
    const path = `/v1/libraries/${encodeURIComponent(library)}/examples`
    return this.#request('POST', path, { body: { examples }, ...options })
  }

  /** Records the tools an agent really called for an instruction (`POST /v1/feedback`). */
  feedback(request: FeedbackRequest, options?: CallOptions): Promise<AddExamplesResponse> {
    return this.#request('POST', '/v1/feedback', { body: request, ...options })
  }

  /** The paper's planner reward of each completion (`POST /v1/rewards/planner`), for RL training. */
  plannerRewards(
    request: PlannerRewardRequest,
    options?: CallOptions,
  ): Promise<PlannerRewardResponse> {
    return this.#request('POST', '/v1/rewards/planner', { body: request, ...options })
  }

  /** 1 for each completion that names the gold tool, else 0 (`POST /v1/rewards/selector`). */
  selectorRewards(
    request: SelectorRewardRequest,
    options?: CallOptions,
  ): Promise<SelectorRewardResponse> {
    return this.#request('POST', '/v1/rewards/selector', { body: request, ...options })
  }

  /** The planners, retrievers, rerankers and selectors the service can run, with defaults. */
  components(options?: CallOptions): Promise<ComponentsResponse> {
    return this.#request('GET', '/v1/components', options)
  }

  /** Liveness: resolves when the process answers. */
  async health(options?: CallOptions): Promise<void> {
    await this.#request('GET', '/healthz', options)
  }

  /**
   * Readiness: once libraries and models are loaded, the report (libraries, `failedIndexes`, the
   * model components that fall back now, `degraded`, the gateway's `upstreams` and `firstSync`
   * counts); NOT_READY (503) before.
   */
  ready(options?: CallOptions): Promise<ReadyResponse> {
    return this.#request('GET', '/readyz', options)
  }

  /** Writes a snapshot of every saved library on the server (`POST /v1/snapshots`, admin key). */
  snapshot(options?: CallOptions): Promise<SnapshotResponse> {
    return this.#request('POST', '/v1/snapshots', options)
  }

  /** Prometheus metrics, as text (`GET /metrics`; a read key when keys are configured). */
  metrics(options?: CallOptions): Promise<string> {
    return this.#request('GET', '/metrics', { ...options, text: true })
  }

  async #request<T>(
    method: string,
    path: string,
    options: CallOptions & { body?: unknown; rawBody?: string; text?: boolean } = {},
  ): Promise<T> {
    const timeoutMs = options.timeoutMs ?? this.#options.timeoutMs ?? DEFAULT_TIMEOUT_MS
    const timeout = AbortSignal.timeout(timeoutMs)
    const signal = options.signal ? AbortSignal.any([options.signal, timeout]) : timeout
    const headers: Record<string, string> = {
      accept: options.text ? 'text/plain' : 'application/json',
      ...this.#options.headers,
    }
    if (this.#options.apiKey) headers.authorization = `Bearer ${this.#options.apiKey}`
    let body: string | undefined
    if (options.rawBody !== undefined) {
      body = options.rawBody
      headers['content-type'] ??= /^\s*[[{]/.test(body) ? 'application/json' : 'text/plain'
    } else if (options.body !== undefined) {
      body = JSON.stringify(options.body)
      headers['content-type'] = 'application/json'
    }
    const url = `${this.#baseUrl}${path}`
    const send = await this.#fetch()
    let response: Response
    try {
      // redirect: 'manual': a redirect is reported, never followed. Following one would send the
      // body (a library's tools) and the `headers` (a gateway's key) to wherever it points.
      response = await send(url, {
        method,
        headers,
        body,
        signal,
        redirect: 'manual',
      })
    } catch (error) {
      throw this.#transportError(error, method, path, timeoutMs, options.signal, timeout)
    }
    if (response.status >= 300 && response.status < 400) {
      await response.body?.cancel().catch(() => {})
      const location = response.headers.get('location') ?? '(no Location header)'
      throw new ToolselClientError(
        'BAD_RESPONSE',
        `${method} ${path}: the service answered a ${response.status} redirect to ${location.slice(0, 500)}; the client does not follow redirects (the API key and the request would go along): set baseUrl to where the service really is`,
        { status: response.status },
      )
    }
    const limit = response.ok
      ? (this.#options.maxResponseBytes ?? DEFAULT_MAX_RESPONSE_BYTES)
      : Math.min(MAX_ERROR_BODY_BYTES, this.#options.maxResponseBytes ?? Infinity)
    const text = await readBounded(response, limit).catch((error: unknown) => {
      if (error instanceof ToolselClientError) {
        throw new ToolselClientError(
          'BAD_RESPONSE',
          `${method} ${path}: the service answered ${response.status} with a body ${error.message}${response.ok ? ' (maxResponseBytes)' : ' (an error body of the service is far smaller)'}`,
          { status: response.status },
        )
      }
      throw this.#transportError(error, method, path, timeoutMs, options.signal, timeout)
    })
    if (!response.ok) throw errorFromResponse(response.status, text, method, path)
    if (options.text) return text as T
    if (text === '') return undefined as T
    try {
      return JSON.parse(text) as T
    } catch (error) {
      throw new ToolselClientError(
        'BAD_RESPONSE',
        `${method} ${path}: the service answered ${response.status} with a body that is not JSON: ${text.slice(0, 100)}`,
        { status: response.status, cause: error },
      )
    }
  }

  #transportError(
    error: unknown,
    method: string,
    path: string,
    timeoutMs: number,
    callerSignal: AbortSignal | undefined,
    timeout: AbortSignal,
  ): ToolselClientError {
    if (callerSignal?.aborted) {
      return new ToolselClientError(
        'CLIENT_ABORTED',
        `${method} ${path} was aborted by the caller`,
        {
          cause: error,
        },
      )
    }
    if (timeout.aborted) {
      return new ToolselClientError(
        'CLIENT_TIMEOUT',
        `${method} ${path} took longer than ${timeoutMs} ms; raise timeoutMs or check the service`,
        { cause: error },
      )
    }
    return new ToolselClientError(
      'NETWORK',
      `${method} ${this.#baseUrl}${path} failed: ${networkReason(error, this.#baseUrl)}`,
      { cause: error },
    )
  }
}

/** A `ca` option the client can use: with an https baseUrl, without `fetch`, PEM certificates. */
function checkCa({ ca, baseUrl, fetch }: ToolselClientOptions): void {
  if (!baseUrl.startsWith('https://')) {
    throw new TypeError(`ToolselClient: ca is for an https:// baseUrl, got "${baseUrl}"`)
  }
  if (fetch) {
    throw new TypeError(
      'ToolselClient: give ca or fetch, not both (a fetch of your own brings its own TLS settings)',
    )
  }
  const all: ReadonlyArray<unknown> = Array.isArray(ca) ? ca : [ca]
  for (const pem of all) {
    const text =
      typeof pem === 'string'
        ? pem
        : pem instanceof Uint8Array
          ? new TextDecoder().decode(pem)
          : undefined
    if (text?.includes('-----BEGIN CERTIFICATE-----')) continue
    throw new TypeError(
      `ToolselClient: ca must be PEM certificates (a CA file's contents: "-----BEGIN CERTIFICATE-----…"), got ${
        typeof text === 'string' ? `"${text.slice(0, 60)}"` : typeof pem
      }${typeof pem === 'string' && !text!.includes('\n') ? ' (a file name? pass its contents: readFileSync(name))' : ''}`,
    )
  }
}

/**
 * Why a request failed before an answer: what the global fetch wraps as "fetch failed" is in its
 * `cause`. A certificate that is not trusted, or not for this host, says what to change.
 */
function networkReason(error: unknown, baseUrl: string): string {
  const outer = error as Error & { code?: unknown; cause?: { message?: unknown; code?: unknown } }
  const inner =
    typeof outer.cause?.message === 'string'
      ? { message: outer.cause.message, code: outer.cause.code }
      : outer
  const detail = inner === outer ? outer.message : `${outer.message}: ${inner.message}`
  const code = typeof inner.code === 'string' ? inner.code : ''
  if (code === 'ERR_TLS_CERT_ALTNAME_INVALID') {
    return `${detail}; the service's certificate is for another host name: use the name it was issued for in baseUrl`
  }
  if (/CERT|ISSUER|UNABLE_TO_VERIFY/.test(code)) {
    return `${detail} (${code}); the service's certificate is not trusted: pass its CA as the ca option (PEM: ca: readFileSync('ca.pem')), or start Node with NODE_EXTRA_CA_CERTS=<CA file>`
  }
  return `${detail}; is toolsel serving at ${baseUrl}?`
}

/**
 * The body as text, read until `limit` bytes at most: a larger body (by its Content-Length, or
 * as it arrives) is cancelled and rejected with a ToolselClientError saying so. The fetch's
 * signal still aborts the read (the time limit covers a body that drips).
 */
async function readBounded(response: Response, limit: number): Promise<string> {
  const tooLarge = () => new ToolselClientError('BAD_RESPONSE', `larger than ${limit} bytes`)
  const declared = Number(response.headers.get('content-length') ?? Number.NaN)
  if (declared > limit) {
    await response.body?.cancel().catch(() => {})
    throw tooLarge()
  }
  if (!response.body) return ''
  const reader = response.body.getReader()
  const decoder = new TextDecoder()
  let text = ''
  let size = 0
  for (;;) {
    const { done, value } = await reader.read()
    if (done) break
    size += value.byteLength
    if (size > limit) {
      await reader.cancel().catch(() => {})
      throw tooLarge()
    }
    text += decoder.decode(value, { stream: true })
  }
  return text + decoder.decode()
}

function errorFromResponse(
  status: number,
  text: string,
  method: string,
  path: string,
): ToolselClientError {
  try {
    const { error } = JSON.parse(text) as { error?: { code?: string; message?: string } }
    if (error && typeof error.code === 'string' && typeof error.message === 'string') {
      return new ToolselClientError(error.code as ErrorCode, error.message, { status })
    }
  } catch {
    // Not the service's error shape (a proxy's page, say): reported below as BAD_RESPONSE.
  }
  return new ToolselClientError(
    'BAD_RESPONSE',
    `${method} ${path}: HTTP ${status} without a toolsel error body: ${text.slice(0, 100)}`,
    { status },
  )
}
