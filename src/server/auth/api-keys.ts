/**
 * API keys: the admin key and read keys from the config, looked up in constant time (every key is
 * compared, with `timingSafeEqual` over SHA-256 digests, whatever matches). Keys are never logged:
 * a principal carries the key's name only.
 * @module
 */
import { createHash, timingSafeEqual } from 'node:crypto'
import { MAX_API_KEY_CHARS, type AuthConfig } from '../../config/schema.ts'
import { ToolselError } from '../../errors.ts'

/** Who is calling. `open`: authentication is off (no key configured). */
export interface Principal {
  role: 'admin' | 'read' | 'open'
  /** The key's name (`admin`, `read-1`, a configured name); never the key. */
  name: string
  /** Libraries the caller may use; empty = all. */
  libraries: readonly string[]
  /** MCP servers (tool namespaces) the caller may see; empty = all. */
  servers: readonly string[]
  /** Tags the caller may see; empty = all. */
  tags: readonly string[]
}

export const OPEN_PRINCIPAL: Principal = Object.freeze({
  role: 'open',
  name: 'anonymous',
  libraries: [],
  servers: [],
  tags: [],
})

/**
 * A caller without a valid key on a public route (`/healthz`, `/readyz`, the playground page)
 * while keys are configured: compared by identity, so a key named "public" is not taken for it.
 */
export const PUBLIC_PRINCIPAL: Principal = Object.freeze({
  role: 'read',
  name: 'public',
  libraries: [],
  servers: [],
  tags: [],
})

/** Whether `principal` is limited to some libraries, MCP servers or tags. */
export function isLimited(principal: Principal): boolean {
  return principal.libraries.length > 0 || principal.servers.length > 0 || principal.tags.length > 0
}

const digest = (key: string) => createHash('sha256').update(key, 'utf8').digest()

export class ApiKeys {
  readonly #entries: Array<{ digest: Buffer; principal: Principal }> = []

  constructor(auth: AuthConfig) {
    if (auth.adminKey) {
      this.#entries.push({
        digest: digest(auth.adminKey),
        principal: { role: 'admin', name: 'admin', libraries: [], servers: [], tags: [] },
      })
    }
    for (const key of auth.readKeys) {
      this.#entries.push({
        digest: digest(key.key),
        principal: {
          role: 'read',
          name: key.name ?? 'read',
          libraries: key.libraries,
          servers: key.servers,
          tags: key.tags,
        },
      })
    }
  }

  /** True when any key is configured (authentication on). */
  get enabled(): boolean {
    return this.#entries.length > 0
  }

  /** The principal of `key`, or undefined. Compares against every key. */
  lookup(key: string): Principal | undefined {
    const wanted = digest(key)
    let found: Principal | undefined
    for (const entry of this.#entries) {
      if (timingSafeEqual(entry.digest, wanted) && found === undefined) found = entry.principal
    }
    return found
  }
}

const BEARER_HEADER = new RegExp(`^Bearer[ \\t]+(\\S{1,${MAX_API_KEY_CHARS}})[ \\t]*$`, 'i')

/** The key of an `Authorization: Bearer <key>` header, else undefined. */
export function bearerKey(header: string | undefined): string | undefined {
  if (!header) return undefined
  const match = BEARER_HEADER.exec(header)
  return match?.[1]
}

/** Whether `principal` may use library `name`. */
export function canUseLibrary(principal: Principal, name: string): boolean {
  return principal.libraries.length === 0 || principal.libraries.includes(name)
}

/**
 * The library a call that names none uses: the server's default when `key` may use it, else the
 * key's first library (in its configured order). A key limited to no library: the default.
 */
export function keyDefaultLibrary(
  key: { libraries: readonly string[] },
  serverDefault: string,
): string {
  const { libraries } = key
  return libraries.length === 0 || libraries.includes(serverDefault) ? serverDefault : libraries[0]
}

/** The loaded libraries, as the service's registry holds them. */
export interface LoadedLibraries {
  get(name: string): unknown
  names(): readonly string[]
}

/**
 * For a key limited to libraries: FORBIDDEN for a library outside them, and, when `loaded` is
 * given and `name` is one of them but not loaded, UNKNOWN_LIBRARY naming only those the key may
 * use (the registry's own message lists every loaded library, other tenants' too). Nothing for a
 * key limited to no library.
 */
export function assertKeyLibrary(
  key: { name: string; libraries: readonly string[] },
  name: string,
  loaded?: LoadedLibraries,
): void {
  if (key.libraries.length === 0) return
  if (!key.libraries.includes(name)) {
    throw new ToolselError(
      'FORBIDDEN',
      `The API key "${key.name}" may not use library "${name}" (allowed: ${key.libraries.join(', ')}).`,
    )
  }
  if (loaded === undefined || loaded.get(name) !== undefined) return
  const usable = loaded.names().filter((loadedName) => key.libraries.includes(loadedName))
  throw new ToolselError(
    'UNKNOWN_LIBRARY',
    `No library named "${name}" is loaded (available to the API key "${key.name}": ${usable.length > 0 ? usable.join(', ') : 'none'}).`,
    { details: { library: name } },
  )
}
