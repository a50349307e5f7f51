/**
 * `/openapi.json`, generated from the same zod schemas the routes validate with.
 * @module
 */
import { z } from 'zod'
import { RESPONSE_SCHEMAS, type RequestSchemas } from './schemas.ts'
import { ToolIdSchema } from '../library/tool-id-limit.ts'

const json = (schema: z.ZodType) => ({
  'application/json': { schema: z.toJSONSchema(schema, { io: 'input', unrepresentable: 'any' }) },
})

function errors(...statuses: number[]) {
  return Object.fromEntries(
    statuses.map((status) => [
      String(status),
      { description: 'Error', content: json(RESPONSE_SCHEMAS.error) },
    ]),
  )
}

/**
 * What a write (an index save, a snapshot) answers when its files can't be written: 500
 * (`INDEX_WRITE_FAILED`, an I/O error; a snapshot's `INTERNAL`) and 507 (`INSUFFICIENT_STORAGE`,
 * no space left on the index directory's disk, or on `library.snapshotDir`'s for a snapshot).
 * Nothing was changed (README, "HTTP API").
 */
const writeErrors = {
  500: {
    description: 'The files could not be written (INDEX_WRITE_FAILED); nothing was changed',
    content: json(RESPONSE_SCHEMAS.error),
  },
  507: {
    description: 'No space left on the disk written to (INSUFFICIENT_STORAGE); nothing was changed',
    content: json(RESPONSE_SCHEMAS.error),
  },
}

/**
 * A path parameter with the bounds its route checks: a library name's pattern and 64 characters,
 * a tool id's 500 (a longer one is a 400 naming it, not looked up).
 */
function pathParameter(name: string, schema: z.ZodType) {
  const { $schema: _, ...bounds } = z.toJSONSchema(schema)
  return { name, in: 'path', required: true, schema: bounds }
}

/**
 * What the middleware in front of every route answers (src/server/app.ts): 403 from the
 * Host/Origin check (middleware/host-check.ts) on every route, the probes included, and, where an
 * API key is required once keys are configured (every route not marked `security: []`), 401 for
 * a missing or unknown key and 403 for a key that may not do this; and, on every route, the 429 of
 * a connection past `server.maxConnectionsPerAddress` (src/server/connection-limits.ts, round 36)
 * or a client past its request rate (src/server/rate-limit.ts, round 41; not on the public routes)
 * and the 408 and 431 of a request Node's parser rejects (src/server/client-error.ts), and the 501
 * of a transfer coding other than chunked (middleware/transfer-coding.ts, round 48).
 */
const SHARED_ERRORS = {
  401: 'Unauthorized: no valid API key (only when keys are configured)',
  403: 'Forbidden: the Host or Origin is not allowed (server.allowedHosts, server.corsOrigins), or the API key may not do this',
  408: 'Request Timeout (TIMEOUT): the request not received in time (server.headersTimeoutMs, server.requestReceiveTimeoutMs); the connection closes',
  429: 'Too many requests (RATE_LIMITED): a connection past server.maxConnectionsPerAddress (Retry-After: 1, Connection: close), or a client past server.readsPerMinute or server.writesPerMinute (Retry-After: the seconds until its next request; RateLimit and RateLimit-Policy, as on every answer of a limited class); the request is not served',
  431: "Request Header Fields Too Large (PAYLOAD_TOO_LARGE): the request line and headers over Node's 16 KiB",
  501: 'Not Implemented (NOT_IMPLEMENTED): a Transfer-Encoding other than chunked alone (e.g. gzip, chunked); the body is not read and the connection closes',
} as const

/**
 * The response fields of the request-rate limit (src/server/rate-limit.ts; the IETF draft
 * draft-ietf-httpapi-ratelimit-headers-11), as `components.headers`. The limited routes (every
 * one that takes a key) send `RateLimit` and `RateLimit-Policy` on every answer that passed the
 * limit's check (not on the 401 and 403 of the key and Host checks before it, nor the 408 and
 * 431 of Node's parser), and on the 429 it answers itself, with `Retry-After`. A 429 of the
 * connection limit has `Retry-After: 1` only. None is sent while `server.readsPerMinute` or
 * `server.writesPerMinute` (the route's class) is 0.
 */
const RATE_LIMIT_HEADERS = {
  RateLimit: {
    description:
      'Where this client stands in its route class: `"<class>";r=<whole requests left>;t=<seconds until one more>`, class `read` or `write` (absent when that limit is 0)',
    schema: { type: 'string', examples: ['"read";r=599;t=1'] },
  },
  'RateLimit-Policy': {
    description:
      'The limit of the route class: `"<class>";q=<requests>;w=60` (server.readsPerMinute, server.writesPerMinute; absent when it is 0)',
    schema: { type: 'string', examples: ['"write";q=120;w=60'] },
  },
  'Retry-After': {
    description:
      'Seconds to wait before the next request: until the client has one more in its class (server.readsPerMinute, server.writesPerMinute), 1 for a connection past server.maxConnectionsPerAddress',
    schema: { type: 'integer', minimum: 1 },
  },
} as const

const headerRef = (name: keyof typeof RATE_LIMIT_HEADERS) => ({
  $ref: `#/components/headers/${name}`,
})

/** Answered before the rate limit's check: none of its fields on them (RATE_LIMIT_HEADERS). */
const BEFORE_RATE_LIMIT = new Set(['401', '403', '408', '431', '501'])

interface Operation {
  security?: unknown[]
  responses: Record<string, { headers?: Record<string, unknown>; [field: string]: unknown }>
}

/**
 * Adds SHARED_ERRORS to every operation of `paths` that does not list them itself (401 where
 * keyed), and to the keyed (rate-limited) ones' answers the fields of RATE_LIMIT_HEADERS they
 * carry: `Retry-After` on every 429.
 */
function withSharedErrors<T extends Record<string, Record<string, unknown>>>(paths: T): T {
  for (const item of Object.values(paths)) {
    for (const [method, operation] of Object.entries(item)) {
      if (method === 'parameters') continue
      const { security, responses } = operation as Operation
      const keyed = security === undefined || security.length > 0
      const statuses = [
        ...(keyed ? [401 as const] : []),
        403 as const,
        408 as const,
        429 as const,
        431 as const,
        501 as const,
      ]
      for (const status of statuses) {
        responses[status] ??= {
          description: SHARED_ERRORS[status],
          content: json(RESPONSE_SCHEMAS.error),
        }
      }
      for (const [status, response] of Object.entries(responses)) {
        const limited = keyed && !BEFORE_RATE_LIMIT.has(status)
        if (!limited && status !== '429') continue
        responses[status] = {
          ...response,
          headers: {
            ...response.headers,
            ...(limited && {
              RateLimit: headerRef('RateLimit'),
              'RateLimit-Policy': headerRef('RateLimit-Policy'),
            }),
            ...(status === '429' && { 'Retry-After': headerRef('Retry-After') }),
          },
        }
      }
    }
  }
  return paths
}

/** The optional query parameters of `query`, one per field, with their descriptions. */
function queryParameters(query: z.ZodObject) {
  return Object.entries(query.shape).map(([name, schema]) => ({
    name,
    in: 'query',
    required: false,
    ...(schema.description ? { description: schema.description } : {}),
    schema: z.toJSONSchema(schema),
  }))
}

export function createOpenApiDocument(schemas: RequestSchemas, version: string) {
  const ok = (schema: z.ZodType, description = 'OK') => ({ description, content: json(schema) })
  const libraryParameter = pathParameter('library', schemas.libraryParam.shape.library)
  return {
    openapi: '3.1.0',
    info: {
      title: 'toolsel',
      version,
      description:
        'Selects the tools an agent needs from a large tool library (Plan-Retrieve-Select).',
    },
    components: {
      securitySchemes: { bearer: { type: 'http', scheme: 'bearer' } },
      headers: RATE_LIMIT_HEADERS,
    },
    // A read key for queries, the admin key for writes (README, Security); none for the probes.
    security: [{ bearer: [] }],
    paths: withSharedErrors({
      '/v1/select-tools': {
        post: {
          summary: 'Plan, retrieve and select the tools for an instruction',
          requestBody: { required: true, content: json(schemas.selectTools) },
          responses: { 200: ok(RESPONSE_SCHEMAS.selectTools), ...errors(400, 404, 413, 503, 504) },
        },
      },
      '/v1/search-tools': {
        post: {
          summary: 'Search a library: names, one-line descriptions and scores only',
          requestBody: { required: true, content: json(schemas.searchTools) },
          responses: { 200: ok(RESPONSE_SCHEMAS.searchTools), ...errors(400, 404, 413, 503, 504) },
        },
      },
      '/v1/feedback': {
        post: {
          summary:
            'Record the tools an agent really called for an instruction; stored as a usage example of the library',
          requestBody: { required: true, content: json(schemas.feedback) },
          responses: {
            200: ok(RESPONSE_SCHEMAS.addExamples),
            ...errors(400, 404, 413, 503, 504),
            ...writeErrors,
          },
        },
      },
      '/v1/rewards/planner': {
        post: {
          summary:
            "The paper's planner reward of each completion: parsed as the LLM planner parses, steps retrieved by the library's retriever",
          requestBody: { required: true, content: json(schemas.rewardsPlanner) },
          responses: {
            200: ok(RESPONSE_SCHEMAS.rewardsPlanner),
            ...errors(400, 404, 413, 503, 504),
          },
        },
      },
      '/v1/rewards/selector': {
        post: {
          summary: 'The selector reward of each completion: 1 when it names the gold tool, else 0',
          requestBody: { required: true, content: json(schemas.rewardsSelector) },
          responses: { 200: ok(RESPONSE_SCHEMAS.rewardsSelector), ...errors(400, 413, 503) },
        },
      },
      '/v1/libraries': {
        get: {
          summary: 'List loaded libraries',
          responses: { 200: ok(z.object({ libraries: z.array(RESPONSE_SCHEMAS.library) })) },
        },
      },
      '/v1/libraries/{library}': {
        parameters: [libraryParameter],
        get: {
          summary: 'Describe a library',
          responses: { 200: ok(RESPONSE_SCHEMAS.library), ...errors(404) },
        },
        put: {
          summary:
            'Create or replace a library from tools in any supported format; swapped in atomically',
          parameters: queryParameters(schemas.putLibraryQuery),
          requestBody: {
            required: true,
            content: {
              'application/json': {},
              'application/x-ndjson': {},
              'application/yaml': {},
              'text/csv': {},
            },
          },
          responses: {
            200: ok(RESPONSE_SCHEMAS.putLibrary, 'Replaced'),
            201: ok(RESPONSE_SCHEMAS.putLibrary, 'Created'),
            ...errors(400, 413, 503, 504),
            ...writeErrors,
          },
        },
        delete: {
          summary: 'Delete a library',
          responses: { 204: { description: 'Deleted' }, ...errors(400, 404) },
        },
      },
      '/v1/libraries/{library}/examples': {
        parameters: [libraryParameter],
        post: {
          summary:
            'Add usage examples {instruction, tools}: stored with the index (atomic, versioned, capped, de-duplicated), used as BM25 expansion and nearest-example memory',
          requestBody: { required: true, content: json(schemas.addExamples) },
          responses: {
            200: ok(RESPONSE_SCHEMAS.addExamples),
            ...errors(400, 404, 413, 503, 504),
            ...writeErrors,
          },
        },
      },
      '/v1/libraries/{library}/tools/{id}': {
        parameters: [libraryParameter, pathParameter('id', ToolIdSchema)],
        get: {
          summary: "Load one tool's full schema",
          parameters: queryParameters(schemas.toolQuery),
          responses: { 200: ok(RESPONSE_SCHEMAS.tool), ...errors(400, 404) },
        },
      },
      '/v1/libraries/{library}/tools/batch': {
        parameters: [libraryParameter],
        post: {
          summary: "Load several tools' full schemas",
          requestBody: { required: true, content: json(schemas.batchTools) },
          responses: { 200: ok(RESPONSE_SCHEMAS.tools), ...errors(400, 404, 413) },
        },
      },
      '/v1/components': {
        get: {
          summary:
            'The planners, retriever kinds, rerankers and selectors this service can run, with their defaults',
          responses: { 200: ok(RESPONSE_SCHEMAS.components), ...errors(503) },
        },
      },
      '/healthz': {
        get: {
          summary: 'Liveness',
          security: [],
          responses: { 200: ok(z.object({ status: z.literal('ok') }), 'Alive') },
        },
      },
      '/readyz': {
        get: {
          summary:
            'Readiness: 503 until libraries, models and the gateway first sync are done; lists libraries, failedIndexes and upstreams (with API keys configured: only to a caller with a key, as far as the key may use them)',
          security: [],
          responses: {
            200: ok(RESPONSE_SCHEMAS.readyz, 'Ready'),
            503: ok(RESPONSE_SCHEMAS.readyzStarting, 'Starting'),
          },
        },
      },
      '/v1/snapshots': {
        post: {
          summary:
            'Write a snapshot of every saved library into a new directory under library.snapshotDir (admin key); answers its name there; restore with toolsel snapshot restore <library.snapshotDir>/<name>. A snapshot whose client goes away is finished all the same (its log line names it); only a stopping server abandons one',
          responses: {
            201: ok(RESPONSE_SCHEMAS.snapshot, 'Written'),
            429: {
              description:
                "Too many requests (RATE_LIMITED): a snapshot is being written already (one at a time, round 55: each copies every saved library; ask again when it has ended), or the shared limits' 429",
              content: json(RESPONSE_SCHEMAS.error),
            },
            ...errors(503, 504),
            ...writeErrors,
          },
        },
      },
      '/metrics': {
        get: {
          summary:
            'Prometheus metrics: requests and latency per route and status, pipeline stages, libraries, upstreams, models, event-loop lag',
          responses: {
            200: {
              description: 'Prometheus text format 0.0.4',
              content: { 'text/plain': { schema: { type: 'string' } } },
            },
          },
        },
      },
    }),
  }
}
