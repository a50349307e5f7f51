/**
 * An upstream's health as `list_servers` and `/readyz` report it, and the error a call to an
 * unavailable upstream fails with.
 * @module
 */
import { z } from 'zod'
import type { UpstreamKind } from './upstream-redaction.ts'

/**
 * `connecting`: first connection in progress. `connected`: answering within `gateway.slowMs`.
 * `slow`: connected, but the last request took longer or timed out. `down`: unreachable, waiting
 * for the next reconnect attempt (`attempt`, at `nextRetryAt`). `reconnecting`: down, with
 * reconnect attempt `attempt` running (counted since the server last stayed up
 * `reconnectMaxMs`, as the backoff is). Down or reconnecting, its last known tools stay searchable.
 */
export const UPSTREAM_STATUSES = [
  'connecting',
  'connected',
  'slow',
  'reconnecting',
  'down',
] as const
export type UpstreamStatus = (typeof UPSTREAM_STATUSES)[number]

const nullable = <T extends z.ZodType>(schema: T, description: string) =>
  schema.nullable().describe(description)

/** One upstream as `list_servers` and `/readyz` (`upstreams`) report it. */
export const UpstreamStateSchema = z.object({
  name: z.string(),
  transport: z.enum(['stdio', 'http']),
  target: z
    .string()
    .describe(
      'URL (without user info; a query shows as ?***), or command line (credential flag values as ***, URLs in it as above); never headers or env.',
    ),
  status: z
    .enum(UPSTREAM_STATUSES)
    .describe(
      'connecting (first connection), connected, slow (last request slow or timed out), reconnecting (down, a reconnect attempt running), down (waiting for the next attempt).',
    ),
  tags: z.array(z.string()),
  toolCount: z.number().describe('Tools from the last successful tools/list (kept while down).'),
  lastSyncAt: nullable(z.string(), 'ISO time of the last successful tools/list.'),
  lastLatencyMs: nullable(z.number(), 'Milliseconds the last successful request took.'),
  lastError: nullable(z.string(), 'The last failure, with what timed out and which setting.'),
  downSince: nullable(z.string(), 'ISO time the server went down; null while it is up.'),
  downForMs: nullable(z.number(), 'Milliseconds it has been down; null while it is up.'),
  attempt: z
    .number()
    .describe(
      'Reconnect attempt (1 = the first) since the server last stayed up gateway.reconnectMaxMs: the one running while reconnecting, the next one while down; 0 while up or connecting for the first time. It counts on over connections that end sooner (a crash or a flood after each start), as the backoff does: attempt n waits about reconnectInitialMs x 2^(n-1) (at most reconnectMaxMs).',
    ),
  outages: z
    .number()
    .describe(
      'Times the server went down since the gateway started (a first connect that failed counts), each outage once however many attempts it took; 0 = never.',
    ),
  nextRetryAt: nullable(
    z.string(),
    'ISO time of the next reconnect attempt while down; null otherwise (none is planned).',
  ),
})

export type UpstreamState = z.infer<typeof UpstreamStateSchema>

/** Where the gateway's first sync stands, as `/readyz` (`firstSync`) reports it. */
export const FirstSyncCountsSchema = z.object({
  upstreams: z.number().int().describe('Enabled upstream servers.'),
  done: z
    .number()
    .int()
    .describe('Upstreams whose first connect attempt is over (connected, slow or down).'),
  connecting: z
    .number()
    .int()
    .describe('Upstreams running their first connect attempt (pastSlot of them outside the pool).'),
  pastSlot: z
    .number()
    .int()
    .describe(
      'Of connecting: attempts running past gateway.connectSlotMs, which gave their connect slot to the next in line.',
    ),
  waiting: z.number().int().describe('Upstreams waiting for a connect slot.'),
  connectConcurrency: z.number().int().describe('gateway.connectConcurrency: the connect slots.'),
})

export type FirstSyncCounts = z.infer<typeof FirstSyncCountsSchema>

export interface UpstreamFacts {
  name: string
  transport: UpstreamKind
  target: string
  status: UpstreamStatus
  tags: readonly string[]
  toolCount: number
  lastSyncAt?: number
  lastLatencyMs?: number
  lastError?: string
  downSince?: number
  attempt?: number
  outages?: number
  nextRetryAt?: number
}

const iso = (time: number | undefined) => (time === undefined ? null : new Date(time).toISOString())

export function upstreamState(facts: UpstreamFacts, now = Date.now()): UpstreamState {
  return {
    name: facts.name,
    transport: facts.transport,
    target: facts.target,
    status: facts.status,
    tags: [...facts.tags],
    toolCount: facts.toolCount,
    lastSyncAt: iso(facts.lastSyncAt),
    lastLatencyMs: facts.lastLatencyMs ?? null,
    lastError: facts.lastError ?? null,
    downSince: iso(facts.downSince),
    downForMs: facts.downSince === undefined ? null : now - facts.downSince,
    attempt: facts.attempt ?? 0,
    outages: facts.outages ?? 0,
    nextRetryAt: iso(facts.nextRetryAt),
  }
}

/** `42 s`, `3 min 5 s`, `2 h 1 min`. */
export function formatDuration(milliseconds: number): string {
  const seconds = Math.max(0, Math.round(milliseconds / 1000))
  if (seconds < 60) return `${seconds} s`
  const minutes = Math.floor(seconds / 60)
  if (minutes < 60) return `${minutes} min ${seconds % 60} s`
  return `${Math.floor(minutes / 60)} h ${minutes % 60} min`
}
