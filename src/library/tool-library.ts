/**
 * A named, immutable set of tools with a content hash. Indexes are built from a library and
 * record its hash, so a changed library is detected at load time.
 * @module
 */
import { ToolselError } from '../errors.ts'
import { sha256, toolContentHash, type Tool } from './tool.ts'

/** Library names become directory names under `indexes/` and URL path segments. */
export const LIBRARY_NAME_PATTERN = /^[a-zA-Z0-9][a-zA-Z0-9._-]{0,63}$/

export function assertLibraryName(name: string): void {
  if (!LIBRARY_NAME_PATTERN.test(name)) {
    throw new ToolselError(
      'INVALID_INPUT',
      `Library name "${name}" is invalid: use 1-64 letters, digits, ".", "_" or "-", starting with a letter or digit.`,
      { details: { library: name } },
    )
  }
}

export class ToolLibrary {
  readonly name: string
  readonly tools: readonly Tool[]
  readonly #byId: Map<string, Tool>
  #contentHash: string | undefined
  #toolHashes: Map<string, string> | undefined

  /** Throws DUPLICATE_TOOL_ID when two tools share an id. */
  constructor(name: string, tools: readonly Tool[]) {
    assertLibraryName(name)
    this.name = name
    this.tools = tools
    this.#byId = new Map()
    for (const [position, tool] of tools.entries()) {
      const previous = this.#byId.get(tool.id)
      if (previous) {
        throw new ToolselError(
          'DUPLICATE_TOOL_ID',
          `Library "${name}": tool id "${tool.id}" appears twice (positions ${tools.indexOf(previous)} and ${position}).`,
          { details: { library: name, id: tool.id } },
        )
      }
      this.#byId.set(tool.id, tool)
    }
  }

  get size(): number {
    return this.tools.length
  }

  get(id: string): Tool | undefined {
    return this.#byId.get(id)
  }

  has(id: string): boolean {
    return this.#byId.has(id)
  }

  /** Like `get`, but throws UNKNOWN_TOOL naming the library. */
  require(id: string): Tool {
    const tool = this.#byId.get(id)
    if (!tool) {
      throw new ToolselError('UNKNOWN_TOOL', `Library "${this.name}" has no tool "${id}".`, {
        details: { library: this.name, id },
      })
    }
    return tool
  }

  /** Per-tool content hashes (id → hash), computed once. */
  get toolHashes(): ReadonlyMap<string, string> {
    this.#toolHashes ??= new Map(this.tools.map((tool) => [tool.id, toolContentHash(tool)]))
    return this.#toolHashes
  }

  /** Hash over all tools' content hashes in id order: independent of the order of the input. */
  get contentHash(): string {
    if (this.#contentHash === undefined) {
      const entries = [...this.toolHashes.entries()].sort(([a], [b]) =>
        a < b ? -1 : a > b ? 1 : 0,
      )
      this.#contentHash = sha256(entries.map(([id, hash]) => `${id}\t${hash}`).join('\n'))
    }
    return this.#contentHash
  }
}
