/**
 * What each client (API key) may index into new scoped views: a client chooses its scope with
 * each request (`/mcp?servers=…&tags=…`), and every union of real servers or tags it has not
 * asked for lately builds its own BM25 index (~0.11 ms of CPU a tool plus ~50 ms, bench/README
 * round 27), so one client naming a new union of 40 servers with each request kept a core busy.
 * Each key has a bucket of `mcp.scopeViewToolsPerMinute` tools, refilled at that rate; a new view
 * is built while the bucket holds anything and takes the tools it indexes (at least
 * MIN_VIEW_CHARGE) from it, so one view larger than the bucket is still built and the key then
 * waits. A scope whose view is cached costs nothing. A bucket belongs to a key, not to its name
 * (round 33: keys given one name, or a read key named "admin", shared one before); the admin key
 * has its own; without keys every caller is the one anonymous client. Each `--workers` worker
 * keeps its own buckets (and views). MCP over stdio (one client per process) has none.
 * @module
 */
import { ToolselError } from '../errors.ts'
import { TokenBuckets } from '../token-buckets.ts'

/** Whose bucket: one object per API key (its principal), named in the RATE_LIMITED message. */
export interface BudgetClient {
  readonly name: string
}

/** The least a new view takes from the bucket, for its fixed cost (~50 ms of CPU ~ 450 tools). */
export const MIN_VIEW_CHARGE = 1000

export class ViewBudget {
  readonly #perMinute: number
  readonly #buckets: TokenBuckets<BudgetClient>

  /** `perMinute`: tools a key may index into new views a minute; 0 = no limit. */
  constructor(perMinute: number) {
    this.#perMinute = perMinute
    this.#buckets = new TokenBuckets(perMinute)
  }

  /**
   * Takes a new view of `tools` tools from `client`'s bucket, or throws RATE_LIMITED (nothing
   * taken) when the bucket is empty.
   */
  take(client: BudgetClient, tools: number, now = performance.now()): void {
    const seconds = this.#buckets.take(client, Math.max(tools, MIN_VIEW_CHARGE), now)
    if (seconds > 0) {
      throw new ToolselError(
        'RATE_LIMITED',
        `Too many new scopes: "${client.name}" has had new scoped views of ${this.#perMinute.toLocaleString('en-US')} tools built in the last minute (mcp.scopeViewToolsPerMinute). A scope asked for before still answers; a new one can be asked for in about ${seconds} s.`,
        { details: { retryAfterSeconds: seconds } },
      )
    }
  }
}
