/**
 * An upstream's health as `list_servers` and `/readyz` report it, and the error a call to an
 * unavailable upstream fails with.
 * @module
 */
import { ToolselError } from '../../errors.ts'
import { describeUpstreamError } from './classify-upstream-error.ts'
import type { UpstreamKind } from './create-upstream-transport.ts'

/**
 * `connecting`: first connection in progress. `connected`: answering within `gateway.slowMs`.
 * `slow`: connected, but the last request took longer or timed out. `down`: unreachable;
 * reconnecting with backoff, last known tools still searchable.
 */
export const UPSTREAM_STATUSES = ['connecting', 'connected', 'slow', 'down'] as const
export type UpstreamStatus = (typeof UPSTREAM_STATUSES)[number]

export interface UpstreamState {
  name: string
  transport: UpstreamKind
  /** URL, or command line (never headers or env, which may hold secrets). */
  target: string
  status: UpstreamStatus
  tags: string[]
  /** Tools from the last successful tools/list (kept while down). */
  toolCount: number
  /** ISO time of the last successful tools/list, or null. */
  lastSyncAt: string | null
  /** Milliseconds the last successful request took, or null. */
  lastLatencyMs: number | null
  lastError: string | null
  /** ISO time the server went down, or null when it is up. */
  downSince: string | null
  /** Milliseconds it has been down, or null. */
  downForMs: number | null
  /** ISO time of the next reconnect attempt, or null. */
  nextRetryAt: string | null
}

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

/** UPSTREAM_UNAVAILABLE naming the server, how long it has been down, why, and what to do. */
export function unavailableError(state: UpstreamState, cause?: unknown): ToolselError {
  const details = {
    server: state.name,
    status: state.status,
    downForMs: state.downForMs,
    lastError: state.lastError,
  }
  const retry = state.nextRetryAt
    ? ` Next reconnect attempt in ${formatDuration(Date.parse(state.nextRetryAt) - Date.now())}.`
    : ''
  let what: string
  if (state.status === 'down') {
    what = `is down (for ${formatDuration(state.downForMs ?? 0)}; last error: ${state.lastError ?? 'unknown'}).`
  } else if (state.status === 'connecting') {
    what = 'is still connecting; retry in a few seconds.'
  } else {
    what = `did not answer in time (${cause === undefined ? state.lastError : describeUpstreamError(cause)}); it is marked slow. Retry later or raise gateway.callTimeoutMs.`
  }
  return new ToolselError(
    'UPSTREAM_UNAVAILABLE',
    `Upstream server "${state.name}" ${what}${retry} Its tools stay searchable; see list_servers for its status.`,
    { cause, details },
  )
}
