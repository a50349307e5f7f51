/**
 * `tools.idx`: where each tool's line is in `tools.jsonl`, the tool ids by position, and the id →
 * position table (`buildIdTable`), written when an index is saved, so that loading a library
 * neither scans its tools file for ids nor fills a map of them (1M tools: about 3 s of start-up).
 * Optional: an index without one (saved before it, manifest `toolsIndexFile` absent) is scanned
 * as before.
 *
 * A section file (section-file.ts): magic `TSLTIDX\n`, version `TOOLS_INDEX_FILE_VERSION`,
 * header `{tools, tableSize, tableHash, tableKey, toolsFileHash, toolsFileBytes, toolsFileCrc32,
 * sections}`:
 * `toolsFileHash` is the manifest's sha256 of the `tools.jsonl` it describes (an index file
 * naming another is refused); a load checks the tools file's size against `toolsFileBytes` and
 * its CRC-32 against `toolsFileCrc32` (a streamed read, about 0.14 s of CPU at a million tools,
 * where a sha256 of every load would cost several times that), so a tools file altered since the
 * save is INDEX_CORRUPT at load, even when its size is unchanged. The tools stay unread (read by
 * offset when needed, each line checked then: ToolLibrary.fromLineIndex). Then:
 *
 * | section | content |
 * |---|---|
 * | in this order | `starts`, `ends`: float64 per tool, its line is bytes `starts[p]…ends[p]-1`; `table`: int32 × tableSize (a power of two), slot → position or -1; `ids`: the ids by position, a JSON array (UTF-8); `ranks` (written since round 11, optional): int32 per tool, its id's rank in JavaScript string order (`idRanks`) |
 *
 * `ranks` lets BM25 break ties of scores by id with two array reads (PackedIds.after) instead of
 * comparing the two ids' bytes (at 100k tools, ~10% of BM25's search: bench/README.md, round
 * 11). A file without it (saved before it) loads as before and compares the bytes; a reader from
 * before it skips the section. The file's version stays 1: the section is an addition that both
 * sides read past, so no index needs a rebuild either way. A `ranks` section that is not a
 * permutation of the positions is INDEX_CORRUPT.
 *
 * `tableHash`, `tableKey` (since round 56): the table's hash, `"halfsiphash-2-4"` (a keyed
 * pseudo-random function: `tableHash`, id-table.ts), and its 64-bit key as two 32-bit words,
 * drawn from the ids by each build (`idTableKeys`), so that ids made to share a slot (hash
 * flooding: tool names of an MCP upstream, a library PUT) do not make the build, the load's check
 * and each lookup walk one long cluster. Files saved before are read with the hash they were
 * written with, and their table is built again, with round 56's hash, by the next save: round
 * 55's have `tableSeed` (FNV-1a from a seeded basis: ids built offline as FNV-1a multicollisions
 * still shared its slots), earlier ones neither (the unkeyed FNV-1a). The version stays 1; a
 * reader from before round 56 finds such a file's table not matching its ids (INDEX_CORRUPT,
 * rebuild), and an unknown `tableHash` is INDEX_CORRUPT here.
 *
 * The `table` is checked at load against the ids (`isIdTableSteps`, sliced: ~4 ms of CPU at 100k
 * tools, bench/resave-parts-cost.ts; since round 54): every position in one slot, reachable from its id's hash slot, no id
 * twice; otherwise INDEX_CORRUPT. A misplaced slot made that id's lookups miss, and a re-save of
 * the loaded library writes the loaded table again (`KnownToolLines.ids`) instead of building one.
 *
 * `hashes` (written since round 24 when the saving library knows them without hashing a tool,
 * optional): each tool's content hash (`toolContentHash`, a sha256: TOOL_HASH_BYTES per tool,
 * in position order). A library loaded with them serves `toolHashes` (MCP token counts, the
 * gateway's diff) without parsing and hashing every tool on the event loop the first time; one
 * without them (saved before, or by a library that had not hashed its tools) hashes them when
 * first asked, as before. An addition like `ranks`: the version stays 1. A section of the wrong
 * length is INDEX_CORRUPT.
 * @module
 */
import { isAscii } from 'node:buffer'
import { crc32 } from 'node:zlib'
import type { ToolsFile } from '../library/tools-file.ts'
import {
  buildIdTable,
  idArray,
  isIdTableSteps,
  UNKEYED,
  type BuiltIdTable,
  type IdList,
  type TableKey,
} from '../library/id-table.ts'
import { idRanks, isPermutationSteps, PackedIds } from '../library/packed-ids.ts'
import { jsonLineSpans, TOOL_HASH_BYTES, type ToolLineIndex } from '../library/tool-library.ts'
import { ToolselError } from '../errors.ts'
import type { IndexFileBound } from './index-file-read.ts'
import { runStepsSliced, type Steps } from '../time-slicer.ts'
import {
  bytesOf,
  parseSectionFile,
  readSectionFile,
  sectionFileBytes,
  writeSectionFile,
  type SectionFile,
  type SectionFileKind,
} from './section-file.ts'

export const TOOLS_INDEX_FILE_VERSION = 1

const KIND: SectionFileKind = {
  magic: Buffer.from('TSLTIDX\n', 'latin1'),
  version: TOOLS_INDEX_FILE_VERSION,
  title: 'tools index file',
  kind: 'tools index file',
}

interface Header {
  tools: number
  tableSize: number
  /** The id table's hash (`TableKey`), since round 56: "halfsiphash-2-4"; absent: older ones. */
  tableHash?: string
  /** Its key, `[k0, k1]` (since round 56). */
  tableKey?: [number, number]
  /** Round 55's hash seed (FNV-1a, keyed basis); absent without `tableHash`: the unkeyed hash. */
  tableSeed?: number
  toolsFileHash: string
  toolsFileBytes: number
  toolsFileCrc32: number
}

/** `tools.idx` made beforehand for the tools file `toolLines` (`toolsIndexFileBytes`) and its sha256. */
export interface PreparedToolsIndex {
  toolLines: Buffer
  toolsFileHash: string
  bytes: Buffer
}

/**
 * What `tools.idx` records of its tools file, known without reading it: a file a load checked
 * (`ToolsFile.vouch`) and copied whole, its lines where the load's index put them.
 */
export interface KnownToolLines {
  starts: Float64Array
  ends: Float64Array
  /** The file's size in bytes. */
  bytes: number
  crc32: number
  /**
   * The ids the load read with it (`list`, the saving library's `idList`) and the id table it read
   * over them (`ToolLibrary.checkedToolsFile`): written as they are, with the ids' section and
   * ranks when the load kept them (`PackedIds.saved`), so that a re-save neither decodes 100k ids
   * nor rebuilds the table and sorts them for the ranks (bench/README round 54, lib59).
   */
  ids?: { list: IdList; table: BuiltIdTable }
}

/** The spans, size and CRC-32 of the tools file `chunks` (its bytes in order). */
function knownToolLines(chunks: readonly Buffer[]): KnownToolLines {
  return {
    ...jsonLineSpans(chunks),
    bytes: chunks.reduce((bytes, chunk) => bytes + chunk.length, 0),
    crc32: chunks.reduce((crc, chunk) => crc32(chunk, crc), 0),
  }
}

/**
 * The header fields and sections of the index of `toolLines` (the tools file's bytes, or its
 * chunks in order: a save's, never concatenated; or what is known of them); `toolHashes`: the
 * tools' content hashes (`ToolLibrary.knownToolHashBytes`), when known.
 */
function toolsIndexParts(
  ids: IdList,
  toolLines: Buffer | readonly Buffer[] | KnownToolLines,
  toolsFileHash: string,
  toolHashes: Uint8Array | undefined,
): { fields: Record<string, unknown>; payloads: Record<string, Buffer> } {
  const known =
    'crc32' in toolLines
      ? toolLines
      : knownToolLines(Buffer.isBuffer(toolLines) ? [toolLines] : toolLines)
  const { starts, ends } = known
  // The loaded table and ids section of these very ids, else made from the ids. A table loaded
  // from an index saved before round 56 (another hash: `TableKey`) is built again.
  const loaded = known.ids?.list === ids ? known.ids : undefined
  const saved = ids instanceof PackedIds ? ids.saved : undefined
  let decoded: readonly string[] | undefined
  const array = () => (decoded ??= idArray(ids))
  const table =
    loaded?.table.key.hash === 'halfsiphash-2-4'
      ? { slots: loaded.table.slots, key: loaded.table.key }
      : buildIdTable(array())
  if (starts.length !== ids.length || !('slots' in table)) {
    throw new ToolselError(
      'INTERNAL',
      `The tools file has ${starts.length} lines for ${ids.length} tools, or repeats an id.`,
    )
  }
  if (toolHashes !== undefined && toolHashes.length !== ids.length * TOOL_HASH_BYTES) {
    throw new ToolselError(
      'INTERNAL',
      `${toolHashes.length} bytes of tool hashes for ${ids.length} tools.`,
    )
  }
  const header: Header = {
    tools: ids.length,
    tableSize: table.slots.length,
    tableHash: table.key.hash,
    tableKey: [table.key.k0, table.key.k1],
    toolsFileHash,
    toolsFileBytes: known.bytes,
    toolsFileCrc32: known.crc32,
  }
  return {
    fields: { ...header },
    payloads: {
      starts: bytesOf(starts),
      ends: bytesOf(ends),
      table: bytesOf(table.slots),
      ids: (loaded && saved?.json) ?? Buffer.from(JSON.stringify(array()), 'utf8'),
      ranks: bytesOf((loaded && saved?.ranks) ?? idRanks(array())),
      ...(toolHashes !== undefined && { hashes: bytesOf(toolHashes) }),
    },
  }
}

/** Whether `value` is a whole number of 32 bits, unsigned (a CRC-32, a hash key's word). */
function isUint32(value: unknown): value is number {
  return Number.isInteger(value) && (value as number) >= 0 && (value as number) <= 0xffffffff
}

/**
 * The id table's hash a header names, or undefined when it names none it knows. A save writes
 * round 56's (`tableHash`, `tableKey`); older files name round 55's or none.
 */
function headerKey({ tableHash, tableKey, tableSeed }: Header): TableKey | undefined {
  if (tableHash === undefined) {
    if (tableKey !== undefined) return undefined
    if (tableSeed === undefined) return UNKEYED
    return isUint32(tableSeed) ? { hash: 'fnv-1a-seeded', seed: tableSeed } : undefined
  }
  if (tableHash !== 'halfsiphash-2-4' || tableSeed !== undefined) return undefined
  if (!(Array.isArray(tableKey) && tableKey.length === 2 && tableKey.every(isUint32)))
    return undefined
  return { hash: tableHash, k0: tableKey[0], k1: tableKey[1] }
}

/**
 * Writes the index of `toolLines` (the tools file's bytes, or its chunks in order, one tool per
 * line, ids in order; or its spans, size and CRC-32 when they are known: `KnownToolLines`).
 */
export async function writeToolsIndexFile(
  path: string,
  ids: IdList,
  toolLines: Buffer | readonly Buffer[] | KnownToolLines,
  toolsFileHash: string,
  toolHashes?: Uint8Array,
): Promise<void> {
  const { fields, payloads } = toolsIndexParts(ids, toolLines, toolsFileHash, toolHashes)
  await writeSectionFile(path, KIND, fields, payloads)
}

/**
 * The bytes `writeToolsIndexFile` writes, in a buffer of its own: an upload's import worker makes
 * them off the event loop (line spans, id table, id ranks sort, CRC-32: 0.2-0.3 s at 90k tools)
 * and hands them over; the save writes them as they are (`SaveOptions.toolsIndex`).
 */
export function toolsIndexFileBytes(
  ids: readonly string[],
  toolLines: Buffer,
  toolsFileHash: string,
  toolHashes?: Uint8Array,
): Buffer {
  const { fields, payloads } = toolsIndexParts(ids, toolLines, toolsFileHash, toolHashes)
  return sectionFileBytes(KIND, fields, payloads)
}

/**
 * Reads the file written by `writeToolsIndexFile` for the open tools file `toolsFile` whose
 * manifest sha256 is `toolsFileHash`; INDEX_CORRUPT (with `rebuild`) when it is not one, names
 * another file, or the tools file's CRC-32 is not the one saved (changed in place since the save).
 * `undefined` when the tools file's size differs from the one saved: it changed since the save,
 * and the caller checks it the slow way (every tool hashed against the manifest).
 */
export async function readToolsIndexFile(
  path: string,
  toolsFile: ToolsFile,
  toolsFileHash: string,
  rebuild: string,
  bound: IndexFileBound,
): Promise<ToolLineIndex | undefined> {
  const file = await readSectionFile<Header>(path, KIND, rebuild, bound)
  const checked = await runStepsSliced(lineIndexSteps(file, toolsFileHash, toolsFile.size))
  if (!checked) return undefined
  const crc = await toolsFile.crc32()
  if (crc !== checked.toolsFileCrc32) {
    throw new ToolselError(
      'INDEX_CORRUPT',
      `The tools file ${toolsFile.path} was changed since its index was saved: its CRC-32 is ${hex(crc)}, ${path} says ${hex(checked.toolsFileCrc32)}. ${rebuild}`,
      { details: { file: toolsFile.path } },
    )
  }
  // The file is the one the manifest's sha256 names, as far as its CRC-32 tells (the trust a load
  // gives it): a save of the library copies it with those (ToolsFile.copyTo).
  toolsFile.vouch({ sha256: toolsFileHash, crc32: crc })
  return checked.lineIndex
}

/**
 * The line index in `bytes` (made by `toolsIndexFileBytes`) of the tools file `toolLines` whose
 * sha256 is `toolsFileHash`: views of `bytes`, checked as a load checks them, but for the CRC-32
 * of `toolLines` (made in the same process from those very bytes; 33 MB of CRC-32 would be a
 * stall of its own); INDEX_CORRUPT when they name other tools or another size. Checked in
 * slices (at 90k tools 8-20 ms of CPU in one piece); `signal` stops it between them.
 */
export async function toolLineIndexOfBytes(
  bytes: Buffer,
  toolLines: Buffer,
  toolsFileHash: string,
  signal?: AbortSignal,
): Promise<ToolLineIndex> {
  const file = parseSectionFile<Header>(bytes, 'of the upload', KIND, '')
  const checked = await runStepsSliced(
    lineIndexSteps(file, toolsFileHash, toolLines.length),
    signal,
  )
  if (!checked) throw file.corrupt('describes other tools than it came with')
  return checked.lineIndex
}

/**
 * The line index of a tools index file, checked; undefined when the tools file's size differs.
 * Steps (run sliced by both callers): a few thousand positions between two yields.
 */
function* lineIndexSteps(
  file: SectionFile<Header>,
  toolsFileHash: string,
  toolsFileBytes: number,
): Steps<{ lineIndex: ToolLineIndex; toolsFileCrc32: number } | undefined> {
  const { header, corrupt } = file
  const { tools, tableSize, toolsFileCrc32 } = header
  const key = headerKey(header)
  if (header.toolsFileHash !== toolsFileHash)
    throw corrupt('describes another tools file than the index holds')
  if (header.toolsFileBytes !== toolsFileBytes) return undefined
  if (
    !Number.isSafeInteger(tools) ||
    tools < 0 ||
    !Number.isSafeInteger(tableSize) ||
    tableSize < tools ||
    (tableSize & (tableSize - 1)) !== 0 ||
    !isUint32(toolsFileCrc32) ||
    key === undefined
  )
    throw corrupt('has an invalid header')
  const starts = file.view('starts', Float64Array, tools)
  const ends = file.view('ends', Float64Array, tools)
  const table = file.view('table', Int32Array, tableSize)
  const ranks = file.has('ranks') ? file.view('ranks', Int32Array, tools) : undefined
  const toolHashes = file.has('hashes') ? file.bytes('hashes') : undefined
  if (toolHashes !== undefined && toolHashes.length !== tools * TOOL_HASH_BYTES)
    throw corrupt('has a hashes section of the wrong length')
  if (ranks && !(yield* isPermutationSteps(ranks))) throw corrupt('has an invalid ranks section')
  // Ids without JSON escapes (most) stay bytes, decoded one at a time when needed.
  const bytes = file.bytes('ids')
  let ids: unknown = yield* PackedIds.ofSteps(bytes, tools, ranks)
  if (ids === undefined) {
    try {
      ids = JSON.parse(bytes.toString(isAscii(bytes) ? 'latin1' : 'utf8'))
    } catch {
      throw corrupt('has unreadable ids')
    }
    if (!Array.isArray(ids) || ids.length !== tools || !ids.every((id) => typeof id === 'string'))
      throw corrupt('has ids of the wrong kind or number')
  }
  let previousEnd = 0
  for (let position = 0; position < tools; position += 1) {
    if (position % STEP_ITEMS === STEP_ITEMS - 1) yield
    if (!(starts[position] >= previousEnd && ends[position] > starts[position]))
      throw corrupt('has lines out of order')
    previousEnd = ends[position]
  }
  if (previousEnd > toolsFileBytes) throw corrupt('has lines past the end of the tools file')
  for (let slot = 0; slot < tableSize; slot += 1) {
    if (slot % STEP_ITEMS === STEP_ITEMS - 1) yield
    if (!(table[slot] >= -1 && table[slot] < tools)) throw corrupt('has an invalid id table')
  }
  // Each id found at its position: a misplaced slot made that id's lookups miss, and a re-save
  // writes the loaded table again (KnownToolLines.ids), so it is refused here, never carried.
  if (!(yield* isIdTableSteps(ids as IdList, table, key)))
    throw corrupt('has an id table that does not match its ids')
  return {
    lineIndex: {
      starts,
      ends,
      ids: ids as IdList,
      table: { slots: table, key },
      ...(toolHashes && { toolHashes }),
    },
    toolsFileCrc32,
  }
}

/** Positions or table slots checked between two yields of `lineIndexSteps`. */
const STEP_ITEMS = 8192

const hex = (crc: number) => crc.toString(16).padStart(8, '0')
