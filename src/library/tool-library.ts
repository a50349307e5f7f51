/**
 * A named, immutable set of tools with a content hash. Indexes are built from a library and
 * record its hash, so a changed library is detected at load time.
 *
 * The tools are held one of three ways behind one interface: as objects (a library just
 * imported); as JSON lines in one buffer with line offsets (`fromJsonLines`); or, for a library
 * loaded from its index, in the index's open `tools.jsonl`, read by offset (`fromLineIndex`,
 * tools-file.ts). The last two parse a tool only when asked for (a bounded cache keeps the
 * recently used ones). At 100k tools the objects take hundreds of MiB of JS heap that every
 * garbage collection walks; a buffer lies outside the heap, the open file takes no memory at all
 * (the OS page cache keeps what is read often), and a request touches a few dozen tools.
 * @module
 */
import { ToolselError } from '../errors.ts'
import { createHash } from 'node:crypto'
import { idArray, IdTable, type BuiltIdTable, type IdList } from './id-table.ts'
import { MAX_TOOL_LINE_BYTES, toolContentHash, type Tool } from './tool.ts'
import { runSteps, runStepsSliced, type Steps } from '../time-slicer.ts'
import { ToolsFile } from './tools-file.ts'
import { ToolNameTable } from './tool-name-table.ts'
import { toolIdOfProviderName } from './provider-tools.ts'
import { shownName } from './name-characters.ts'

/** Library names become directory names under `indexes/` and URL path segments. */
export const LIBRARY_NAME_PATTERN = /^[a-zA-Z0-9][a-zA-Z0-9._-]{0,63}$/
/** LIBRARY_NAME_PATTERN in words, for the messages that refuse a name. */
export const LIBRARY_NAME_RULE =
  '1-64 letters, digits, ".", "_" or "-", starting with a letter or digit'

export function assertLibraryName(name: string): void {
  if (!LIBRARY_NAME_PATTERN.test(name)) {
    throw new ToolselError(
      'INVALID_INPUT',
      `Library name "${name}" is invalid: use ${LIBRARY_NAME_RULE}.`,
      { details: { library: name } },
    )
  }
}

/**
 * Most tools whose name table (hints for unknown ids) is made at once, on the request that first
 * needs it; a larger library makes it in slices of the event loop.
 */
const SYNC_NAME_TABLE_TOOLS = 100_000

/** Parsed tools a buffer-backed library keeps (the most recently used). */
const PARSED_CACHE_SIZE = 4096

/** Bytes of tools a whole-library scan reads at once. */
const SCAN_BLOCK_BYTES = 1 << 20

/**
 * Most bytes of tools (as JSON) one answer of tools by id holds: `tools/batch`, MCP
 * `get_tool_schemas`. Answering is reading (JSON.parse) and writing (JSON.stringify) every tool
 * in one piece of the event loop: four tools of 7.9 MB (one upload within the body limit) held
 * it ~700 ms in `tools/batch` and ~1,400 ms in `get_tool_schemas` (which sends the text twice),
 * for any client that may read the library (bench/README round 23). The size of the largest
 * tool an upload takes (MAX_TOOL_LINE_BYTES); real batches of real tools are far under it.
 */
export const MAX_ANSWER_TOOL_BYTES = MAX_TOOL_LINE_BYTES

/**
 * Bytes of each tool read from a library of lines as JSON (its saved line, from the line index),
 * by tool object; a tool held as an object is measured once (`toolJsonBytes`).
 */
const jsonBytesOf = new WeakMap<Tool, number>()

/**
 * Bytes of `tool` as JSON: the length of its saved line for a tool read from a library of lines
 * (known from the line index, nothing serialised), else `JSON.stringify` of it, measured once per
 * tool object.
 */
function toolJsonBytes(tool: Tool): number {
  let bytes = jsonBytesOf.get(tool)
  if (bytes === undefined) {
    bytes = Buffer.byteLength(JSON.stringify(tool))
    jsonBytesOf.set(tool, bytes)
  }
  return bytes
}

/**
 * The tools of a selection's answer (distinct, in answer order) whose schemas it leaves out:
 * an answer holds at most MAX_ANSWER_TOOL_BYTES of tools with their schemas, the first tool
 * always, each next one when it still fits with those before it (a small tool after a large one
 * keeps its schema). Judged from `toolJsonBytes` before any schema is written; empty for every
 * ordinary answer. Two selected tools of 7.9 MB made one `/v1/select-tools` answer of 15.8 MB
 * (427 ms of the event loop; MCP `select_tools` 31.6 MB, 568 ms: bench/README round 23).
 */
export function schemasPastBudget(tools: readonly Tool[]): Tool[] {
  const left: Tool[] = []
  // One tool is always answered whole: most answers are measured not at all.
  if (tools.length < 2) return left
  let bytes = toolJsonBytes(tools[0])
  for (let index = 1; index < tools.length; index += 1) {
    const size = toolJsonBytes(tools[index])
    if (bytes + size > MAX_ANSWER_TOOL_BYTES) left.push(tools[index])
    else bytes += size
  }
  return left
}

/**
 * `tools` less `left` (`schemasPastBudget`'s): what an answer whose tool format needs every
 * schema (a provider's, MCP's) lists; `tools` itself when nothing was left out.
 */
export function toolsWithinBudget(tools: readonly Tool[], left: readonly Tool[]): readonly Tool[] {
  return left.length === 0 ? tools : tools.filter((tool) => !left.includes(tool))
}

/** Ids named in a `schemasLeftOutWarning`; the rest are counted. */
const NAMED_LEFT_OUT = 10

/**
 * The warning of an answer that left the schemas of `left` out (`schemasPastBudget`): names the
 * tools (the first NAMED_LEFT_OUT) and says how to fetch them (`fetch`: the surface's way).
 */
export function schemasLeftOutWarning(left: readonly Tool[], fetch: string): string {
  const named = left
    .slice(0, NAMED_LEFT_OUT)
    .map((tool) => `${shownName(tool.id)} (${toolJsonBytes(tool).toLocaleString('en-US')} bytes)`)
  const more = left.length > NAMED_LEFT_OUT ? ` and ${left.length - NAMED_LEFT_OUT} more` : ''
  return `Schemas left out for ${left.length === 1 ? '1 tool' : `${left.length} tools`}: ${named.join(', ')}${more}. An answer holds at most ${MAX_ANSWER_TOOL_BYTES.toLocaleString('en-US')} bytes of tools with their schemas (the first selected tool always); ${fetch}.`
}

/** Bytes of one tool's content hash (`toolContentHash`: a sha256) in `toolHashBytes`. */
export const TOOL_HASH_BYTES = 32

/** The hex content hash of the tool at `position` in `toolHashBytes`' layout. */
function hashHexAt(bytes: Uint8Array, position: number): string {
  const start = bytes.byteOffset + position * TOOL_HASH_BYTES
  return Buffer.from(bytes.buffer, start, TOOL_HASH_BYTES).toString('hex')
}

/** `toolHashBytes` back into the id → hex hash map of `toolHashes`. */
function unpackToolHashes(ids: IdList, bytes: Uint8Array): Map<string, string> {
  const hashes = new Map<string, string>()
  for (let position = 0; position < ids.length; position += 1) {
    hashes.set(ids.at(position)!, hashHexAt(bytes, position))
  }
  return hashes
}

/** What `hold` returns for a library with nothing to keep open (tools in memory). */
const noHold = (): void => undefined

/**
 * Tools as JSON lines, in one buffer or in an open tools file; tool `p` is bytes starts[p] …
 * ends[p]-1 and has the id ids[p].
 */
class ToolLines {
  readonly #source: Buffer | ToolsFile
  readonly #starts: Float64Array
  readonly #ends: Float64Array
  readonly #ids: IdList
  readonly #library: string
  readonly #cache = new Map<number, Tool>()

  constructor(
    source: Buffer | ToolsFile,
    starts: Float64Array,
    ends: Float64Array,
    ids: IdList,
    library: string,
  ) {
    this.#source = source
    this.#starts = starts
    this.#ends = ends
    this.#ids = ids
    this.#library = library
  }

  get file(): ToolsFile | undefined {
    return this.#source instanceof ToolsFile ? this.#source : undefined
  }

  /** Bytes of the line of the tool at `position` (without its newline), read from the index. */
  lineBytes(position: number): number {
    return this.#ends[position] - this.#starts[position]
  }

  /**
   * The open tools file and each line's place in it, when a load checked it (`ToolsFile.vouch`):
   * what a save copies (`ToolLibrary.checkedToolsFile`).
   */
  checkedFile(): CheckedLines | undefined {
    const source = this.#source
    if (!(source instanceof ToolsFile) || source.checked === undefined) return undefined
    return { file: source, starts: this.#starts, ends: this.#ends, ids: this.#ids }
  }

  /** Every line's bytes when they are in memory (`toJsonLines`); a file's are read by `chunks`. */
  get buffer(): Buffer | undefined {
    const source = this.#source
    return source instanceof ToolsFile ? undefined : source
  }

  /** Every line's bytes: the buffer as one chunk, or the file in blocks read asynchronously. */
  async chunks(abort?: Pick<AbortSignal, 'aborted' | 'reason'>): Promise<Buffer[]> {
    const source = this.#source
    return source instanceof ToolsFile ? source.chunks(abort) : [source]
  }

  at(position: number): Tool {
    let tool = this.#cache.get(position)
    if (tool !== undefined) {
      // A Map iterates in insertion order: re-inserting keeps the least recently used first.
      this.#cache.delete(position)
      this.#cache.set(position, tool)
      return tool
    }
    const source = this.#source
    tool = this.#parse(
      position,
      source instanceof ToolsFile
        ? source.text(this.#starts[position], this.#ends[position])
        : source.toString('utf8', this.#starts[position], this.#ends[position]),
    )
    if (this.#cache.size >= PARSED_CACHE_SIZE)
      this.#cache.delete(this.#cache.keys().next().value as number)
    this.#cache.set(position, tool)
    jsonBytesOf.set(tool, this.lineBytes(position))
    return tool
  }

  /** The tool at `position` as a fresh object, not cached. */
  read(position: number): Tool {
    const source = this.#source
    const start = this.#starts[position]
    const end = this.#ends[position]
    return this.#parse(
      position,
      source instanceof ToolsFile ? source.text(start, end) : source.toString('utf8', start, end),
    )
  }

  /**
   * Every tool in order, one at a time, as fresh objects (not cached, none kept): lines are read
   * in blocks of about SCAN_BLOCK_BYTES, so a whole file is never in memory at once.
   */
  scan(visit: (tool: Tool, position: number) => void): void {
    const count = this.#ids.length
    const source = this.#source
    let first = 0
    while (first < count) {
      let last = first
      while (last + 1 < count && this.#ends[last + 1] - this.#starts[first] <= SCAN_BLOCK_BYTES)
        last += 1
      const start = this.#starts[first]
      const end = this.#ends[last]
      const text =
        source instanceof ToolsFile ? source.text(start, end) : source.toString('utf8', start, end)
      // Lines are separated by one or more line feeds (empty lines are not tools).
      const lines = text.split('\n').filter((line) => line.length > 0)
      for (let position = first; position <= last; position += 1) {
        const line = lines.length === last - first + 1 ? lines[position - first] : undefined
        visit(line === undefined ? this.read(position) : this.#parse(position, line), position)
      }
      first = last + 1
    }
  }

  /**
   * Every tool as fresh objects, not cached (whole-library walks): read in blocks (`scan`), never
   * the whole file into one buffer.
   */
  all(): Tool[] {
    const tools: Tool[] = []
    this.scan((tool) => void tools.push(tool))
    return tools
  }

  /**
   * The tool on a line, which must be a JSON object with the id `tools.idx` gives it: a tools
   * file damaged or changed since its index was saved fails here (INDEX_CORRUPT), not later.
   */
  #parse(position: number, line: string): Tool {
    let tool: unknown
    try {
      tool = JSON.parse(line)
    } catch {
      tool = undefined
    }
    const id = this.#ids.at(position)
    if (typeof tool !== 'object' || tool === null || (tool as Tool).id !== id) {
      const where = this.file ? `the tools file ${this.file.path}` : 'its tools'
      throw new ToolselError(
        'INDEX_CORRUPT',
        `Library "${this.#library}": line ${position + 1} of ${where} is not a valid tool ${shownName(id)} (damaged or changed since the index was saved). Rebuild the index with: toolsel index <file> --name ${this.#library}.`,
        { details: { library: this.#library, id, line: position + 1 } },
      )
    }
    return tool as Tool
  }
}

/** Id → position; DUPLICATE_TOOL_ID when two tools share an id. */
function positionsOf(name: string, ids: readonly string[]): Map<string, number> {
  const positions = new Map<string, number>()
  for (const [position, id] of ids.entries()) {
    const previous = positions.get(id)
    if (previous !== undefined) {
      throw new ToolselError(
        'DUPLICATE_TOOL_ID',
        `Library "${name}": tool id ${shownName(id)} appears twice (positions ${previous} and ${position}).`,
        { details: { library: name, id } },
      )
    }
    positions.set(id, position)
  }
  return positions
}

const ID_PREFIX = Buffer.from('{"id":"')

/**
 * The id of the tool on bytes start…end-1. Saved tools start with their id (`{"id":"…`), read
 * here without parsing the line; any other line is parsed.
 */
function idOfLine(buffer: Buffer, start: number, end: number): string {
  if (end - start > ID_PREFIX.length && buffer.compare(ID_PREFIX, 0, 7, start, start + 7) === 0) {
    let at = start + 7
    let escaped = false
    while (at < end && buffer[at] !== 0x22) {
      if (buffer[at] === 0x5c) {
        escaped = true
        at += 1
      }
      at += 1
    }
    if (at < end && !escaped) return buffer.toString('utf8', start + 7, at)
    if (at < end) return JSON.parse(buffer.toString('utf8', start + 6, at + 1)) as string
  }
  return (JSON.parse(buffer.toString('utf8', start, end)) as Tool).id
}

/**
 * Tools by position, read when asked for (`ToolLibrary.walk`); an array of tools is one too. A
 * whole-library build reads each once and keeps none.
 */
export interface ToolSequence {
  readonly length: number
  at(position: number): Tool | undefined
}

/**
 * A library's tools file as its load checked it (`ToolsFile.vouch`) and each tool's line in it
 * (tool p is bytes starts[p] … ends[p]-1): `ToolLibrary.checkedToolsFile`.
 */
export interface CheckedLines {
  file: ToolsFile
  starts: Float64Array
  ends: Float64Array
  /** The ids by position, as the load read them (`tools.idx`'s ids section). */
  ids: IdList
  /** The id table the load read over `ids` (`tools.idx`'s), when the library serves with it. */
  table?: BuiltIdTable
}

export interface JsonLinesOptions {
  /** The tools' content hash when the caller has verified it (an index's manifest and file hash). */
  contentHash?: string
}

/** The lines of a JSON-lines buffer (tool p is bytes starts[p] … ends[p]-1) and its id lookup. */
export interface ToolLineIndex {
  starts: Float64Array
  ends: Float64Array
  ids: IdList
  /** `buildIdTable(ids)`, or a table saved before round 56 (its `key` names its hash). */
  table: BuiltIdTable
  /**
   * Each tool's content hash in `toolHashBytes`' layout, when the index holds them (saved since
   * round 24): `toolHashes` then reads no tool.
   */
  toolHashes?: Uint8Array
}

/**
 * Where the non-empty lines of `bytes` start and end (the end excludes the line feed); chunks
 * count as their concatenation, a line may span two.
 */
export function jsonLineSpans(bytes: Buffer | readonly Buffer[]): {
  starts: Float64Array
  ends: Float64Array
} {
  const chunks = Buffer.isBuffer(bytes) ? [bytes] : bytes
  let starts: Float64Array = new Float64Array(1024)
  let ends: Float64Array = new Float64Array(1024)
  let count = 0
  let start = 0
  let offset = 0
  const add = (end: number) => {
    if (end > start) {
      if (count === starts.length) {
        starts = grown(starts)
        ends = grown(ends)
      }
      starts[count] = start
      ends[count] = end
      count += 1
    }
    start = end + 1
  }
  for (const chunk of chunks) {
    for (let end = chunk.indexOf(10); end !== -1; end = chunk.indexOf(10, end + 1)) {
      add(offset + end)
    }
    offset += chunk.length
  }
  if (offset > start) add(offset)
  return { starts: starts.slice(0, count), ends: ends.slice(0, count) }
}

function grown(array: Float64Array): Float64Array {
  const larger = new Float64Array(array.length * 2)
  larger.set(array)
  return larger
}

export class ToolLibrary {
  readonly name: string
  /** Tool ids by position (see `ids`). */
  readonly idList: IdList
  #ids: readonly string[] | undefined
  readonly #tools: readonly Tool[] | undefined
  readonly #lines: ToolLines | undefined
  /** A view's tools: those of `parent` at `positions` (see `subset`). */
  #subset: { parent: ToolLibrary; positions: Int32Array } | undefined
  #released = false
  readonly #positions: Map<string, number> | IdTable
  #contentHash: string | undefined
  #toolHashes: Map<string, string> | undefined
  /** `toolHashBytes` made elsewhere (an upload's import worker), unpacked by `toolHashes`. */
  #hashBytes: Uint8Array | undefined
  /** `toJsonLines` of a library of tool objects, made and not yet taken by a save. */
  #madeLines: Buffer | undefined
  /** The name table (tool-name-table.ts), or its sliced build while a large one is made. */
  #names: ToolNameTable | Promise<void> | undefined

  /** Throws DUPLICATE_TOOL_ID when two tools share an id. */
  constructor(
    name: string,
    tools: readonly Tool[],
    lines?: ToolLines,
    lineIds?: IdList,
    table?: IdTable,
  ) {
    assertLibraryName(name)
    this.name = name
    this.#tools = lines ? undefined : tools
    this.#lines = lines
    this.idList = lineIds ?? tools.map((tool) => tool.id)
    this.#positions = table ?? positionsOf(name, this.ids)
  }

  /**
   * A library over JSON lines (one tool per line; an index's `tools.jsonl`) kept as bytes: see
   * the module comment. Empty lines are skipped.
   */
  static fromJsonLines(name: string, buffer: Buffer, options: JsonLinesOptions = {}): ToolLibrary {
    const { starts, ends } = jsonLineSpans(buffer)
    const ids = Array.from(starts, (start, line) => idOfLine(buffer, start, ends[line]))
    const library = new ToolLibrary(name, [], new ToolLines(buffer, starts, ends, ids, name), ids)
    library.#contentHash = options.contentHash
    return library
  }

  /**
   * A library over JSON lines whose line index (`lineIndex`, from a `tools.idx` made by
   * `jsonLineSpans` and `buildIdTable`) and content hash were made elsewhere, so nothing is
   * scanned, parsed or hashed per tool here; `contentHash` is the caller's to vouch for. The lines
   * are an index's open tools file, read by offset when a tool is asked for (closed by `release`
   * or when the library is garbage-collected: tools-file.ts), or the bytes of the tools file in
   * memory (an upload imported in a worker thread hands over both, and its tools' hashes:
   * `toolHashBytes`, so that `toolHashes` reads no tool either). Without `toolHashBytes`, those
   * of the line index when it has them (a saved index's `tools.idx`).
   */
  static fromLineIndex(
    name: string,
    source: ToolsFile | Buffer,
    lineIndex: ToolLineIndex,
    contentHash: string,
    toolHashBytes = lineIndex.toolHashes,
  ): ToolLibrary {
    const { starts, ends, ids, table } = lineIndex
    const lines = new ToolLines(source, starts, ends, ids, name)
    const library = new ToolLibrary(name, [], lines, ids, new IdTable(ids, table))
    library.#contentHash = contentHash
    if (toolHashBytes !== undefined) {
      if (toolHashBytes.length !== ids.length * TOOL_HASH_BYTES)
        throw new Error(
          `library "${name}": ${toolHashBytes.length} bytes of tool hashes for ${ids.length} tools`,
        )
      library.#hashBytes = toolHashBytes
    }
    return library
  }

  /**
   * The tools of `parent` at `positions` (ascending), under the parent's name, read from the
   * parent when asked for instead of copied: a scoped view of a large library holds its tools'
   * positions and ids, not their objects. `contentHash`: the subset's, when the caller has it.
   * The view reads through `parent`, so it must not outlive the parent's release.
   */
  static subset(parent: ToolLibrary, positions: Int32Array, contentHash?: string): ToolLibrary {
    const ids = Array.from(positions, (position) => parent.idList.at(position)!)
    const library = new ToolLibrary(parent.name, [], undefined, ids)
    library.#subset = { parent, positions }
    library.#contentHash = contentHash
    return library
  }

  /**
   * This version is no longer served (replaced or deleted): a library read from an open tools
   * file closes it `graceMs` from now, once what still holds this version is done with it. A
   * library held in memory has nothing to free.
   */
  release(graceMs: number): void {
    this.#released = true
    this.#lines?.file?.release(graceMs)
  }

  /** True once `release` was called: this version is no longer served. */
  get released(): boolean {
    return this.#released
  }

  /**
   * Keeps this version readable until the returned function is called, even when it is released
   * meanwhile and its grace runs out: a request or build takes it while it uses the library.
   */
  hold(): () => void {
    // A view reads its parent's file.
    if (this.#subset) return this.#subset.parent.hold()
    return this.#lines?.file?.hold() ?? noHold
  }

  /**
   * Tool ids by position, as an array: made on first use from `idList` when that holds an index's
   * ids as bytes (whole-library work; a request uses `idList`, `has` and `get`).
   */
  get ids(): readonly string[] {
    this.#ids ??= idArray(this.idList)
    return this.#ids
  }

  get size(): number {
    return this.idList.length
  }

  /**
   * Every tool, in order. A buffer-backed library parses them all (fresh objects each call): for
   * builds, exports and whole-library scans, not per request.
   */
  get tools(): readonly Tool[] {
    if (this.#subset)
      return Array.from(this.#subset.positions, (at) => this.#subset!.parent.#fresh(at))
    return this.#tools ?? this.#lines!.all()
  }

  /**
   * The tools by position, each read when asked for and kept by nobody (a buffer-backed library
   * parses it afresh): a sliced whole-library build that holds one tool at a time. An upload's
   * BM25 build used to parse all 90k tools into one array first, which the collector then copied
   * and compacted in pauses of 30-35 ms of main-thread CPU (bench/README round 16).
   */
  get walk(): ToolSequence {
    const length = this.size
    return {
      length,
      at: (position) =>
        Number.isInteger(position) && position >= 0 && position < length
          ? this.#fresh(position)
          : undefined,
    }
  }

  /**
   * Calls `visit` with every tool in order, one at a time (a buffer-backed library parses each
   * afresh and keeps none): a whole-library walk that never holds every tool at once.
   */
  scan(visit: (tool: Tool, position: number) => void): void {
    if (this.#lines) return this.#lines.scan(visit)
    if (this.#subset) {
      const { parent, positions } = this.#subset
      positions.forEach((at, position) => visit(parent.#fresh(at), position))
      return
    }
    this.#tools!.forEach(visit)
  }

  /** The tool at `position`, not cached by a buffer-backed library (for whole-library walks). */
  #fresh(position: number): Tool {
    if (this.#lines) return this.#lines.read(position)
    if (this.#subset) return this.#subset.parent.#fresh(this.#subset.positions[position])
    return this.#tools![position]
  }

  /**
   * The open tools file of a library loaded from its index, with each tool's line in it, when
   * the load checked the file against its index (`ToolsFile.vouch`): a save copies those bytes
   * (index-store.ts) instead of reading them into memory. Undefined for any other library.
   */
  checkedToolsFile(): CheckedLines | undefined {
    const checked = this.#lines?.checkedFile()
    const positions = this.#positions
    return checked && positions instanceof IdTable
      ? { ...checked, table: positions.built }
      : checked
  }

  /**
   * The tools as JSON lines (each line ending with a newline), as an index stores them. Those of
   * a library of tool objects are kept until `toJsonLineChunksSliced` takes them: the in-process
   * import measures them (server.maxLibraryToolsBytes) and its save writes them, made once. A
   * library read from its tools file has none in memory: INTERNAL (`toJsonLineChunksSliced` reads
   * them in blocks).
   */
  toJsonLines(): Buffer {
    if (this.#lines) {
      const { buffer } = this.#lines
      // Until round 54 the whole file in one synchronous read (79 MB at 100k tools), for no caller.
      if (buffer === undefined) {
        throw new ToolselError(
          'INTERNAL',
          `Library "${this.name}" is read from its tools file: its JSON lines are read in blocks (toJsonLineChunksSliced), never whole.`,
        )
      }
      return buffer
    }
    this.#madeLines ??= runSteps(this.#jsonLinesSteps())
    return this.#madeLines
  }

  /**
   * `toJsonLines` in chunks of 256 lines, yielding to the event loop every few milliseconds (an
   * upload's save: 0.8 s of JSON.stringify at 90k tools); the same bytes, never concatenated
   * (the save writes them in turn: a Buffer.concat of the whole tools file was one turn of its
   * own, as for examples.jsonl in round 51). A library over bytes hands them back as one chunk.
   */
  async toJsonLineChunksSliced(abort?: Pick<AbortSignal, 'aborted' | 'reason'>): Promise<Buffer[]> {
    if (this.#lines) return this.#lines.chunks(abort)
    const made = this.#madeLines
    if (made !== undefined) {
      this.#madeLines = undefined
      return [made]
    }
    return runStepsSliced(this.#jsonLineChunkSteps(), abort)
  }

  *#jsonLinesSteps(): Steps<Buffer> {
    return Buffer.concat(yield* this.#jsonLineChunkSteps())
  }

  *#jsonLineChunkSteps(): Steps<Buffer[]> {
    const chunks: Buffer[] = []
    let lines: string[] = []
    for (let position = 0; position < this.size; position += 1) {
      lines.push(`${JSON.stringify(this.#fresh(position))}\n`)
      if (lines.length === 256) {
        chunks.push(Buffer.from(lines.join('')))
        lines = []
      }
      yield
    }
    if (lines.length > 0) chunks.push(Buffer.from(lines.join('')))
    return chunks
  }

  /** The tool at a position (0 … size-1). */
  at(position: number): Tool {
    if (this.#lines) return this.#lines.at(position)
    if (this.#subset) return this.#subset.parent.at(this.#subset.positions[position])
    return this.#tools![position]
  }

  get(id: string): Tool | undefined {
    const position = this.#positions.get(id)
    return position === undefined ? undefined : this.at(position)
  }

  has(id: string): boolean {
    return this.#positions.has(id)
  }

  /** The position of tool `id` (0 … size-1), or undefined when the library has none. */
  positionOf(id: string): number | undefined {
    return this.#positions.get(id)
  }

  /**
   * Bytes of the tool at `position` as JSON (its saved line): for a library of lines, from the
   * line index, without reading the tool.
   */
  jsonBytes(position: number): number {
    if (this.#lines) return this.#lines.lineBytes(position)
    if (this.#subset) return this.#subset.parent.jsonBytes(this.#subset.positions[position])
    return toolJsonBytes(this.#tools![position])
  }

  /**
   * PAYLOAD_TOO_LARGE when the distinct tools among `ids` that the library has are more than
   * MAX_ANSWER_TOOL_BYTES as JSON together; a single tool is always answered. Judged from the
   * line index before any tool is read.
   */
  assertAnswerBytes(ids: readonly string[]): void {
    const distinct = new Set(ids)
    if (distinct.size < 2) return
    let bytes = 0
    for (const id of distinct) {
      const position = this.#positions.get(id)
      if (position !== undefined) bytes += this.jsonBytes(position)
    }
    if (bytes > MAX_ANSWER_TOOL_BYTES) {
      throw new ToolselError(
        'PAYLOAD_TOO_LARGE',
        `The ${distinct.size} tools asked for are ${bytes.toLocaleString('en-US')} bytes as JSON together, more than ${MAX_ANSWER_TOOL_BYTES.toLocaleString('en-US')} an answer holds; ask for fewer ids at once (one tool is always answered).`,
        { details: { library: this.name, bytes, maxBytes: MAX_ANSWER_TOOL_BYTES } },
      )
    }
  }

  /** Like `get`, but throws UNKNOWN_TOOL naming the library (and the id it may have meant). */
  require(id: string): Tool {
    const tool = this.get(id)
    if (!tool) {
      throw new ToolselError(
        'UNKNOWN_TOOL',
        `Library "${this.name}" has no tool ${shownName(id)}.${this.unknownIdsHint([id])}`,
        { details: { library: this.name, id } },
      )
    }
    return tool
  }

  /**
   * Ids of this library an unknown `id` may have meant, at most `limit`: the one whose provider
   * tool name it is (`sms--send_sms`), then those whose last part is it as a name (`send_sms`,
   * `SMS.Send_SMS` and `mail.send_sms` → `sms.send_sms`; tool-name-table.ts). `accept` leaves out
   * ids the caller may not see (a key's scope). The name table is made on the first call.
   */
  suggestIds(id: string, limit = 3, accept: (id: string) => boolean = () => true): string[] {
    const suggested: string[] = []
    const decoded = toolIdOfProviderName(id)
    if (decoded !== undefined && decoded !== id && this.has(decoded) && accept(decoded))
      suggested.push(decoded)
    const names = this.#nameTable()
    if (names === undefined) return suggested
    const named = names.matches(id, limit - suggested.length, (at) => {
      const candidate = this.idList.at(at)!
      return candidate !== id && !suggested.includes(candidate) && accept(candidate)
    })
    return [...suggested, ...named.map((at) => this.idList.at(at)!)]
  }

  /**
   * The name table: made at once for up to SYNC_NAME_TABLE_TOOLS tools, else started in slices
   * of the event loop (undefined until it is made; a failure leaves the hints out).
   */
  #nameTable(): ToolNameTable | undefined {
    if (this.#names instanceof ToolNameTable) return this.#names
    if (this.#names !== undefined) return undefined
    if (this.size <= SYNC_NAME_TABLE_TOOLS) {
      this.#names = runSteps(ToolNameTable.build(this.idList))
      return this.#names
    }
    this.#names = runStepsSliced(ToolNameTable.build(this.idList)).then(
      (table) => void (this.#names = table),
      () => undefined,
    )
    return undefined
  }

  /**
   * A sentence for an UNKNOWN_TOOL message about `missing` ids (the first 3 are looked up):
   * ` Did you mean "sms.send_sms" (for "send_sms")? Tools are named by their ids.`, or '' when
   * none of them looks like a name or provider name of a tool `accept` lets through.
   */
  unknownIdsHint(missing: readonly string[], accept?: (id: string) => boolean): string {
    const hints: string[] = []
    for (const id of missing.slice(0, 3)) {
      const suggested = this.suggestIds(id, 3, accept)
      if (suggested.length === 0) continue
      const options = suggested.map(shownName).join(' or ')
      hints.push(missing.length === 1 ? options : `${options} for ${shownName(id)}`)
    }
    return hints.length === 0
      ? ''
      : ` Did you mean ${hints.join(', ')}? Tools are called by their ids, not their names.`
  }

  /**
   * Per-tool content hashes (id → hash), computed once, or unpacked from the bytes an upload's
   * import worker made (`fromLineIndex`): hashing means parsing and serialising every tool, ~130
   * ms for one real tool of 5.5 MB (Google Chat's), on whichever thread asks first.
   */
  get toolHashes(): ReadonlyMap<string, string> {
    this.#toolHashes ??=
      this.#hashBytes === undefined
        ? runSteps(this.#toolHashesSteps())
        : unpackToolHashes(this.idList, this.#hashBytes)
    return this.#toolHashes
  }

  /**
   * The content hash of the tool at `position`: from the import worker's bytes or `toolHashes`
   * when there, else hashed now (that tool alone: a whole-library walk that yields between tools,
   * where `toolHashes` would hash every tool in one piece).
   */
  toolHashAt(position: number): string {
    if (this.#hashBytes !== undefined) return hashHexAt(this.#hashBytes, position)
    return (
      this.#toolHashes?.get(this.idList.at(position)!) ?? toolContentHash(this.#fresh(position))
    )
  }

  /**
   * `toolHashBytes` when they are known without hashing a tool (an import worker's, a saved
   * index's, or `toolHashes` made already), else undefined: what a save writes into `tools.idx`.
   */
  knownToolHashBytes(): Uint8Array | undefined {
    if (this.#hashBytes !== undefined) return this.#hashBytes
    return this.#toolHashes === undefined ? undefined : this.toolHashBytes()
  }

  /**
   * `toolHashes` in position order, TOOL_HASH_BYTES (the sha256) each: what an import worker
   * hands back with the tools file (`fromLineIndex`).
   */
  toolHashBytes(): Buffer {
    const hashes = this.toolHashes
    const bytes = Buffer.alloc(this.size * TOOL_HASH_BYTES)
    for (let position = 0; position < this.size; position += 1) {
      bytes.write(hashes.get(this.idList.at(position)!)!, position * TOOL_HASH_BYTES, 'hex')
    }
    return bytes
  }

  /** Hash over all tools' content hashes in id order: independent of the order of the input. */
  get contentHash(): string {
    this.#contentHash ??= runSteps(this.#contentHashSteps())
    return this.#contentHash
  }

  /**
   * `contentHash`, yielding to the event loop every few milliseconds (an upload's build: about
   * 0.9 s at 90k tools); the same hash, cached for the getter.
   */
  async contentHashSliced(abort?: Pick<AbortSignal, 'aborted' | 'reason'>): Promise<string> {
    this.#contentHash ??= await runStepsSliced(this.#contentHashSteps(), abort)
    return this.#contentHash
  }

  *#toolHashesSteps(): Steps<Map<string, string>> {
    const hashes = new Map<string, string>()
    for (let position = 0; position < this.size; position += 1) {
      const tool = this.#fresh(position)
      hashes.set(tool.id, toolContentHash(tool))
      yield
    }
    return hashes
  }

  *#contentHashSteps(): Steps<string> {
    const hashes = (this.#toolHashes ??= yield* this.#toolHashesSteps())
    // sha256 of the lines `id\thash` joined by `\n`, in id order (UTF-16 code units, which is
    // what the default sort compares; ids are unique), fed to the hash in slices: a million
    // tools would make one string of 100 MB.
    const ids = [...hashes.keys()].sort()
    yield
    const hash = createHash('sha256')
    const SLICE = 4096
    for (let start = 0; start < ids.length; start += SLICE) {
      const lines = ids.slice(start, start + SLICE).map((id) => `${id}\t${hashes.get(id)}`)
      hash.update(`${start === 0 ? '' : '\n'}${lines.join('\n')}`)
      yield
    }
    return hash.digest('hex')
  }
}
