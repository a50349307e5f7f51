/**
 * A running server picks up what other processes commit to its index directory (`toolsel index`,
 * `toolsel libraries delete`, another server on the same directory): `server.indexWatchMs`.
 *
 * Mechanism: a poll, not fs.watch (which misses changes on network file systems and in some
 * containers' overlay mounts, and whose events differ by platform). Every commit of a library
 * renames a directory inside the index directory (save: `<name>` out, `.tmp-…` in; delete:
 * `<name>` out), which changes that directory's modification time. So each tick is one stat of
 * the index directory; only when it changed (or changed so recently that a second change could
 * share its timestamp: SETTLE_MS) does the poll read the directory and stat each library's
 * manifest (its inode, size and times: a commit writes a new one), and report the names whose
 * manifest appeared, changed or went away. Idle cost at 1 and at 1,000 libraries:
 * bench/index-watch-idle.ts. Edits made inside a library's directory in place (not a commit) are
 * not seen.
 *
 * What a reported name becomes (`pickUpCommits`) goes through `syncSavedLibrary`, as a change
 * relayed between the workers of `serve --workers N` does: loaded with the same checks, swapped in
 * under the library's lock (in-flight requests finish on the old version), or dropped; a version
 * the server serves already (its own PUT) is not loaded again. With `--workers N` the primary
 * polls and relays the names to every worker (service/cluster-sync.ts).
 *
 * A commit that fails to load (a file briefly unreadable, EMFILE, a network mount half-synced) is
 * loaded again on a backoff, `retryBackoffMs` (2 s, 4 s, 8 s, … then every minute),
 * `server.indexRetryLimit` times (default RETRY_LIMIT, 10: about 6 minutes) while it stays the commit there and fails; the failure is logged once
 * per commit, its last try's failure too ("gave up"), and `/readyz` failedIndexes lists it until a
 * try, a new commit or a restart loads it. Indexes skipped at start-up are tried the same way.
 * @module
 */
import { readdir, stat, writeFile } from 'node:fs/promises'
import { join, resolve } from 'node:path'
import { testSwitch, testSwitchMs } from '../config/env-vars.ts'
import type { Config } from '../config/schema.ts'
import { LIBRARY_NAME_PATTERN } from '../library/tool-library.ts'
import type { Logger } from '../log.ts'
import { MANIFEST_FILE } from '../store/manifest.ts'
import {
  recoverIndexDir,
  syncSavedLibrary,
  type IndexedLibrary,
} from '../store/library-lifecycle.ts'
import { parseJournalEntry } from '../store/index-dir-claims.ts'
import type { LibraryRegistry } from './library-registry.ts'
import { failedIndex, type FailedIndex } from './load-libraries.ts'

/**
 * A change of the index directory whose timestamp is this recent may share it with a later one
 * (file systems keep times at a few ms, some at 1-2 s): the directory is read again next tick
 * until its timestamp is older than this.
 */
export const SETTLE_MS = 2500

/** The wait before the first try of a commit that failed to load (retryBackoffMs). */
const RETRY_BASE_MS = 2000

/**
 * The wait before the `n`th try of a commit that failed to load (n from 1): `baseMs` (2 s),
 * doubled each try, at most a minute (a failing commit costs one load a minute, not one a poll).
 */
export function retryBackoffMs(n: number, baseMs: number = RETRY_BASE_MS): number {
  return Math.min(baseMs * 2 ** (n - 1), 60_000)
}

/** The bounds of TOOLSEL_TEST_INDEX_RETRY_BASE_MS: it can only shorten the first wait. */
const TEST_RETRY_BASE_MS = { min: 100, max: RETRY_BASE_MS }

/**
 * What the test-only switches make of a server's poller (config/env-vars.ts TEST_SWITCHES; none
 * set: `{}`, the defaults): TOOLSEL_TEST_INDEX_RETRY_BASE_MS, the first wait of the backoff (an
 * integer 100-2,000; another value is an error, not ignored), and
 * TOOLSEL_TEST_INDEX_RETRY_HOLD_FILE, a file whose existence holds the tries back (a poll that
 * holds them writes `held` into it). So that a test of the retries waits tenths of a second, not
 * the 2, 6 and 14 s a failure's first tries take.
 */
export function retryTestOptions(): Pick<PollerOptions, 'retryBaseMs' | 'holdRetries'> {
  const options: Pick<PollerOptions, 'retryBaseMs' | 'holdRetries'> = {}
  const base = testSwitchMs(
    'TOOLSEL_TEST_INDEX_RETRY_BASE_MS',
    TEST_RETRY_BASE_MS.min,
    TEST_RETRY_BASE_MS.max,
  )
  if (base !== undefined) options.retryBaseMs = base
  const hold = testSwitch('TOOLSEL_TEST_INDEX_RETRY_HOLD_FILE')
  // Written only where it exists (r+): the test sees that a poll held the tries back, and as
  // polls run one at a time, that none is under way.
  if (hold !== undefined)
    options.holdRetries = () =>
      writeFile(hold, 'held', { flag: 'r+' }).then(
        () => true,
        () => false,
      )
  return options
}

/** IndexDirPoller's options. */
export interface PollerOptions {
  /** Tries again of a failed commit before giving up (default RETRY_LIMIT). */
  retryLimit?: number
  /** retryBackoffMs's first wait (default RETRY_BASE_MS; tests only: retryTestOptions). */
  retryBaseMs?: number
  /**
   * Asked at a poll that has tries due: while it answers true they wait, untried and uncounted
   * (tests only: retryTestOptions).
   */
  holdRetries?: () => Promise<boolean>
}

/**
 * Tries after the first failure of a commit by default (`server.indexRetryLimit`;
 * `retryBackoffMs`: 2 s … 32 s, then a minute each, about 6 minutes in all); a commit that still
 * fails then is not tried again until it is committed anew (or the server restarts):
 * `failedIndexes` keeps it.
 */
export const RETRY_LIMIT = 10

/**
 * What the poll hands `onChange`: `retry` when the names are failed commits tried again,
 * `lastTry` when this is their last (the poller's retry limit).
 */
export interface ChangeBatch {
  retry: boolean
  lastTry?: boolean
}

/** Manifests stat'ed at once by a scan. */
const STAT_BATCH = 64

/** What the poll compares: the index directory's identity, and each library's manifest's. */
type Identity = string

/** `path`'s identity and modification time (ms); undefined when it is not there. */
async function identityOf(
  path: string,
): Promise<{ identity: Identity; mtimeMs: number } | undefined> {
  try {
    const found = await stat(path, { bigint: true })
    return {
      identity: `${found.dev}:${found.ino}:${found.size}:${found.mtimeNs}:${found.ctimeNs}`,
      mtimeMs: Number(found.mtimeNs / 1_000_000n),
    }
  } catch {
    return undefined
  }
}

/**
 * Polls `indexDir` every `intervalMs` and calls `onChange` with the names of the libraries whose
 * committed index appeared, changed or went away since the last poll (one call at a time: the
 * next poll waits for it). `onChange` answers the names that failed to load: each is handed to it
 * again (`retry: true`) after `retryBackoffMs`, until it loads or is committed anew.
 */
export class IndexDirPoller {
  readonly #indexDir: string
  readonly #intervalMs: number
  readonly #onChange: (names: string[], batch: ChangeBatch) => Promise<readonly string[] | void>
  /** Names whose commit failed to load: tries so far and when the next is due (ms). */
  readonly #retries = new Map<string, { tries: number; dueAt: number }>()
  #dir: Identity | undefined
  /** The directory's modification time (ms) at the last scan; NaN before one. */
  #scannedMtimeMs = Number.NaN
  #manifests = new Map<string, Identity>()
  /** Whether the last scan saw a snapshot restore's journal (store/restore-journal.ts). */
  #journal = false
  #timer: NodeJS.Timeout | undefined
  #stopped = false
  /** Polls so far and scans among them (for the bench and the tests). */
  readonly counts = { polls: 0, scans: 0 }
  /** Tries again of a failed commit before giving up (`server.indexRetryLimit`). */
  readonly retryLimit: number
  readonly #retryBaseMs: number
  readonly #holdRetries: (() => Promise<boolean>) | undefined

  constructor(
    indexDir: string,
    intervalMs: number,
    onChange: (names: string[], batch: ChangeBatch) => Promise<readonly string[] | void>,
    options: PollerOptions = {},
  ) {
    this.#indexDir = indexDir
    this.#intervalMs = intervalMs
    this.#onChange = onChange
    this.retryLimit = options.retryLimit ?? RETRY_LIMIT
    this.#retryBaseMs = options.retryBaseMs ?? RETRY_BASE_MS
    this.#holdRetries = options.holdRetries
  }

  /** Reads what is committed now without reporting it (call before the libraries load). */
  async baseline(): Promise<void> {
    await this.#changes()
  }

  /** Polls every `intervalMs` from now on, until `stop`. */
  start(): void {
    if (this.#stopped || this.#timer) return
    const tick = async () => {
      try {
        await this.poll()
      } finally {
        if (!this.#stopped) this.#timer = setTimeout(() => void tick(), this.#intervalMs).unref()
      }
    }
    this.#timer = setTimeout(() => void tick(), this.#intervalMs).unref()
  }

  stop(): void {
    this.#stopped = true
    clearTimeout(this.#timer)
  }

  /**
   * Tries `names` again after the first backoff (indexes that failed to load at start-up: the
   * baseline holds their manifests, so no change would report them).
   */
  retryLater(names: Iterable<string>): void {
    if (this.retryLimit === 0) return
    for (const name of names)
      if (!this.#retries.has(name))
        this.#retries.set(name, {
          tries: 1,
          dueAt: Date.now() + retryBackoffMs(1, this.#retryBaseMs),
        })
  }

  /** The names waiting for another try (for the tests). */
  retrying(): string[] {
    return [...this.#retries.keys()].sort()
  }

  /**
   * One poll: the changed names (reported to `onChange` when there are any), then the failed
   * commits whose next try is due (reported apart, `retry: true`).
   */
  async poll(): Promise<string[]> {
    const names = await this.#changes()
    if (names.length > 0 && !this.#stopped) {
      // A new commit (or a deletion) starts its backoff afresh.
      for (const name of names) this.#retries.delete(name)
      this.#scheduleRetries(names, await this.#onChange(names, { retry: false }))
    }
    const now = Date.now()
    let due = [...this.#retries].filter(([, retry]) => retry.dueAt <= now).sort()
    if (due.length > 0 && (await this.#holdRetries?.())) due = []
    for (const lastTry of [false, true]) {
      const batch = due
        .filter(([, retry]) => retry.tries >= this.retryLimit === lastTry)
        .map(([name]) => name)
      if (batch.length > 0 && !this.#stopped)
        this.#scheduleRetries(batch, await this.#onChange(batch, { retry: true, lastTry }))
    }
    return names
  }

  /** After `tried` went to `onChange`: the `failed` ones wait for their next try, the rest none. */
  #scheduleRetries(tried: readonly string[], failed: readonly string[] | void): void {
    const failing = new Set(failed ?? [])
    for (const name of tried) {
      if (!failing.has(name)) {
        this.#retries.delete(name)
        continue
      }
      const tries = (this.#retries.get(name)?.tries ?? 0) + 1
      // Its last try failed: given up on until a new commit.
      if (tries > this.retryLimit) this.#retries.delete(name)
      else
        this.#retries.set(name, {
          tries,
          dueAt: Date.now() + retryBackoffMs(tries, this.#retryBaseMs),
        })
    }
  }

  async #changes(): Promise<string[]> {
    this.counts.polls += 1
    // A snapshot restore's journal seen at the last scan: undone here once its process is gone
    // (killed between its renames; recoverIndexDir leaves a live one alone), so that a running
    // server does not serve its half until a restart. Its renames then change the directory.
    if (this.#journal) await recoverIndexDir(this.#indexDir).catch(() => undefined)
    const dir = await identityOf(this.#indexDir)
    const settled = Date.now() - this.#scannedMtimeMs > SETTLE_MS
    if (dir?.identity === this.#dir && settled) return []
    this.counts.scans += 1
    this.#dir = dir?.identity
    // No directory: nothing to settle.
    this.#scannedMtimeMs = dir?.mtimeMs ?? 0
    const manifests = await this.#scan()
    const changed: string[] = []
    for (const [name, identity] of manifests)
      if (this.#manifests.get(name) !== identity) changed.push(name)
    for (const name of this.#manifests.keys()) if (!manifests.has(name)) changed.push(name)
    this.#manifests = manifests
    return changed.sort()
  }

  /** Each library's manifest identity: one readdir and one stat per library. */
  async #scan(): Promise<Map<string, Identity>> {
    const entries = await readdir(this.#indexDir).catch(() => [] as string[])
    this.#journal = entries.some((entry) => parseJournalEntry(entry)?.partial === false)
    const names = entries.filter((entry) => LIBRARY_NAME_PATTERN.test(entry)).sort()
    const manifests = new Map<string, Identity>()
    for (let at = 0; at < names.length; at += STAT_BATCH) {
      const batch = names.slice(at, at + STAT_BATCH)
      const found = await Promise.all(
        batch.map((name) => identityOf(join(this.#indexDir, name, MANIFEST_FILE))),
      )
      batch.forEach((name, index) => {
        if (found[index] !== undefined) manifests.set(name, found[index].identity)
      })
    }
    return manifests
  }
}

/** What `pickUpCommits` reads and changes: a service's libraries. */
export interface PickUpTarget {
  readonly config: Config
  readonly logger: Logger
  readonly libraries: LibraryRegistry
  readonly defaultLibraryName: string
  /** Saved indexes that failed to load (`/readyz` failedIndexes): updated here. */
  readonly failedIndexes: FailedIndex[]
}

/**
 * Makes what `target` serves as each of `names` what is committed under `library.indexDir` now,
 * for the libraries a restart would serve from there: one served from that very directory, or
 * (`library.loadAll`) any saved there. Not touched: a library served from memory only (a tool
 * file, the demo, the gateway's) or from another directory, and the default library when its
 * index is deleted (it stays served; a warning says so). Returns one line per library that could
 * not be loaded (its previous version stays served; `failedIndexes` lists it until a later
 * commit loads); `registry` changes are marked `replicated` when `replicated` is given.
 */
export async function pickUpCommits(
  target: PickUpTarget,
  names: readonly string[],
  options: { replicated?: boolean } = {},
): Promise<string[]> {
  const { config, logger, libraries } = target
  const indexDir = config.library.indexDir
  const marked = { replicated: options.replicated ?? false }
  // A failure is forgotten in the same step as the swap that ends it: syncSavedLibrary returns
  // only after the library's lock is released, and a request in between must not see the new
  // version served and the old failure still listed (/readyz failedIndexes).
  const slots = {
    get: (name: string) => libraries.get(name),
    set: (indexed: IndexedLibrary) => {
      libraries.set(indexed, marked)
      forget(target.failedIndexes, indexed.library.name)
    },
    delete: (name: string) => {
      libraries.delete(name, marked)
      forget(target.failedIndexes, name)
    },
  }
  const failures: string[] = []
  for (const name of names) {
    const dir = join(indexDir, name)
    const served = libraries.get(name)
    if (served !== undefined && (served.dir === undefined || resolve(served.dir) !== resolve(dir)))
      continue
    if (served === undefined && !config.library.loadAll) continue
    if (served !== undefined && name === target.defaultLibraryName) {
      const there = await identityOf(join(dir, MANIFEST_FILE))
      if (there === undefined) {
        logger.warn(
          `Library "${name}" (the default) was deleted from ${indexDir} by another process; still serving the version loaded before. Restart with another default (library.default) to stop serving it.`,
        )
        continue
      }
    }
    try {
      await syncSavedLibrary(slots, name, indexDir, config, logger)
      forget(target.failedIndexes, name)
      const now = libraries.get(name)
      if (now !== served)
        logger.info(
          `Library "${name}" ${now === undefined ? 'dropped: deleted' : served === undefined ? 'added: saved' : 'replaced: saved anew'} in ${indexDir} by another process`,
          ...(now === undefined ? [] : [{ tools: now.library.size }]),
        )
    } catch (error) {
      const message = (error as Error).message
      forget(target.failedIndexes, name)
      target.failedIndexes.push(await failedIndex(name, error, indexDir))
      failures.push(
        `library "${name}" committed in ${indexDir} by another process not loaded${served === undefined ? '' : ' (the previous version stays served)'}: ${message}`,
      )
    }
  }
  return failures
}

function forget(failed: FailedIndex[], name: string): void {
  const at = failed.findIndex((entry) => entry.name === name)
  if (at !== -1) failed.splice(at, 1)
}
