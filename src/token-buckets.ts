/**
 * Token buckets, one per client: each holds up to `perMinute` tokens and refills at that rate
 * (so a client may spend a whole minute's worth at once, then `perMinute` a minute). A charge is
 * taken while the bucket holds a token, even one larger than what it holds (the bucket then owes
 * it, and the client waits longer). Used by the MCP scoped views' budget
 * (mcp/view-budget.ts) and the HTTP request-rate limit (server/rate-limit.ts).
 *
 * `maxClients` bounds the map (clients may be the peers' addresses): past it the client seen
 * least recently is forgotten (its next request finds a full bucket), so a million addresses
 * hold at most `maxClients` buckets.
 * @module
 */

const MINUTE_MS = 60_000

interface Bucket {
  tokens: number
  /** When `tokens` was last brought up to date (`performance.now()`). */
  at: number
}

export class TokenBuckets<Client> {
  readonly #perMinute: number
  readonly #maxClients: number
  /** In order of last use (a used bucket is moved to the end): the first is forgotten first. */
  readonly #buckets = new Map<Client, Bucket>()

  /** `perMinute`: tokens a client may take a minute; 0 = no limit (nothing is kept). */
  constructor(perMinute: number, { maxClients = Infinity }: { maxClients?: number } = {}) {
    this.#perMinute = perMinute
    this.#maxClients = maxClients
  }

  /** The clients that have a bucket now (at most `maxClients`). */
  get size(): number {
    return this.#buckets.size
  }

  /**
   * The tokens `client` holds at `now` (a client with no bucket: a full one), changing nothing;
   * below 0 when it owes some.
   */
  tokens(client: Client, now = performance.now()): number {
    const bucket = this.#buckets.get(client)
    return bucket === undefined ? this.#perMinute : this.#refilled(bucket, now)
  }

  /** What `bucket` holds at `now`: its tokens plus the refill since `bucket.at`, at most full. */
  #refilled(bucket: Bucket, now: number): number {
    return Math.min(
      this.#perMinute,
      bucket.tokens + ((now - bucket.at) * this.#perMinute) / MINUTE_MS,
    )
  }

  /**
   * Takes `cost` tokens from `client`'s bucket and returns 0, or, when it holds less than one,
   * takes nothing and returns the whole seconds (at least 1) until it holds one again.
   */
  take(client: Client, cost: number, now = performance.now()): number {
    const perMinute = this.#perMinute
    if (perMinute === 0) return 0
    let bucket = this.#buckets.get(client)
    if (bucket === undefined) {
      if (this.#buckets.size >= this.#maxClients) {
        this.#buckets.delete(this.#buckets.keys().next().value as Client)
      }
      bucket = { tokens: perMinute, at: now }
    } else this.#buckets.delete(client)
    this.#buckets.set(client, bucket)
    bucket.tokens = this.#refilled(bucket, now)
    bucket.at = now
    if (bucket.tokens < 1) {
      return Math.max(1, Math.ceil(((1 - bucket.tokens) * MINUTE_MS) / perMinute / 1000))
    }
    bucket.tokens -= cost
    return 0
  }
}
