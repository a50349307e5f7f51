/**
 * The container of toolsel's binary index files (`bm25.bin`, `tools.idx`): typed arrays and
 * byte strings written as they are in memory, each in its own section, and read back as views of
 * one buffer: a load costs one file read and no parsing beyond a small JSON header.
 *
 * Layout (little-endian):
 *
 * | bytes | content |
 * |---|---|
 * | 0-7 | magic (8 bytes, one per kind of file) |
 * | 8-11 | format version (uint32, the kind's own) |
 * | 12-15 | header length in bytes (uint32) |
 * | 16… | header: JSON with the kind's fields and `sections`, which maps each section to `[byteOffset, byteLength]`; padded with spaces |
 * | sections, each at a multiple of 8 | the kind's payloads, in the order given |
 * @module
 */
import { open } from 'node:fs/promises'
import { endianness } from 'node:os'
import { ToolselError } from '../errors.ts'
import { readIndexFile, type IndexFileBound } from './index-file-read.ts'

const PREAMBLE_BYTES = 16
const HEADER_ROOM = 1024

export interface SectionFileKind {
  /** 8 bytes that open every file of the kind. */
  magic: Buffer
  version: number
  /** How errors name the file: `BM25 index file`, `tools index file`. */
  title: string
  /** What it is, in "is not a toolsel …": `BM25 file`. */
  kind: string
}

type TypedArray = Int32Array | Uint32Array | Float64Array

export function bytesOf(array: ArrayBufferView): Buffer {
  return Buffer.from(array.buffer, array.byteOffset, array.byteLength)
}

function assertLittleEndian(kind: SectionFileKind): void {
  if (endianness() !== 'LE') {
    throw new ToolselError(
      'INTERNAL',
      `${kind.title}s are little-endian; this machine is big-endian.`,
    )
  }
}

function align(offset: number): number {
  return Math.ceil(offset / 8) * 8
}

/** Where everything of a section file goes: shared by `writeSectionFile` and `sectionFileBytes`. */
function layout(
  kind: SectionFileKind,
  fields: Record<string, unknown>,
  payloads: Record<string, Buffer>,
): {
  preamble: Buffer
  headerBytes: Buffer
  sections: Record<string, [number, number]>
  size: number
} {
  assertLittleEndian(kind)
  // The header's length depends on the offsets it lists: lay out with a generous estimate, then
  // pad the header to it.
  let at = align(PREAMBLE_BYTES + HEADER_ROOM)
  const sections: Record<string, [number, number]> = {}
  for (const [name, payload] of Object.entries(payloads)) {
    sections[name] = [at, payload.length]
    at = align(at + payload.length)
  }
  const headerBytes = Buffer.alloc(HEADER_ROOM, 0x20)
  const headerJson = Buffer.from(JSON.stringify({ ...fields, sections }), 'utf8')
  if (headerJson.length > HEADER_ROOM)
    throw new ToolselError('INTERNAL', `${kind.title} header too long.`)
  headerJson.copy(headerBytes)
  const preamble = Buffer.alloc(PREAMBLE_BYTES)
  kind.magic.copy(preamble)
  preamble.writeUInt32LE(kind.version, 8)
  preamble.writeUInt32LE(HEADER_ROOM, 12)
  return { preamble, headerBytes, sections, size: at }
}

/**
 * Writes `fields` and the `payloads` (in their key order) to `path`; inside an index's
 * temporary directory, so the save stays atomic.
 */
export async function writeSectionFile(
  path: string,
  kind: SectionFileKind,
  fields: Record<string, unknown>,
  payloads: Record<string, Buffer>,
): Promise<void> {
  const { preamble, headerBytes, sections, size } = layout(kind, fields, payloads)
  const file = await open(path, 'w')
  try {
    await file.write(preamble, 0, preamble.length, 0)
    await file.write(headerBytes, 0, headerBytes.length, PREAMBLE_BYTES)
    for (const [name, payload] of Object.entries(payloads)) {
      if (payload.length > 0) await file.write(payload, 0, payload.length, sections[name][0])
    }
    await file.truncate(size)
  } finally {
    await file.close()
  }
}

/**
 * The bytes `writeSectionFile` writes, in one buffer of its own (an ArrayBuffer that can be
 * transferred between threads: an upload's import worker makes the tools index file).
 */
export function sectionFileBytes(
  kind: SectionFileKind,
  fields: Record<string, unknown>,
  payloads: Record<string, Buffer>,
): Buffer {
  const { preamble, headerBytes, sections, size } = layout(kind, fields, payloads)
  const bytes = Buffer.from(new ArrayBuffer(size))
  preamble.copy(bytes, 0)
  headerBytes.copy(bytes, PREAMBLE_BYTES)
  for (const [name, payload] of Object.entries(payloads)) payload.copy(bytes, sections[name][0])
  return bytes
}

/** A file read by `readSectionFile`: its header fields and views of its sections. */
export interface SectionFile<Fields> {
  header: Fields
  /** Whether the file has the section (for sections a kind added later). */
  has(name: string): boolean
  /** The section's bytes (no copy). */
  bytes(name: string): Buffer
  /** The section as `count` elements of `Type` (no copy); corrupt unless the size matches. */
  view<T extends TypedArray>(
    name: string,
    Type: {
      new (buffer: ArrayBuffer, offset: number, length: number): T
      BYTES_PER_ELEMENT: number
    },
    count: number,
  ): T
  /** An INDEX_CORRUPT error about this file. */
  corrupt(why: string): ToolselError
}

/**
 * Reads a file written by `writeSectionFile`, a regular file of at most `bound.maxBytes`
 * (`readIndexFile`); INDEX_CORRUPT (with `rebuild`) when it isn't one.
 */
export async function readSectionFile<Fields>(
  path: string,
  kind: SectionFileKind,
  rebuild: string,
  bound: IndexFileBound,
): Promise<SectionFile<Fields>> {
  assertLittleEndian(kind)
  const corrupt = (why: string, cause?: unknown): ToolselError =>
    new ToolselError('INDEX_CORRUPT', `The ${kind.title} ${path} ${why}. ${rebuild}`, {
      cause,
      details: { file: path },
    })
  return parseSectionFile(await readIndexFile(path, bound, corrupt), path, kind, rebuild)
}

/**
 * `readSectionFile` of bytes already in memory (`sectionFileBytes`); `path` names them in errors.
 * The views share `buffer` when it starts at a multiple of 8, else a copy.
 */
export function parseSectionFile<Fields>(
  buffer: Buffer,
  path: string,
  kind: SectionFileKind,
  rebuild: string,
): SectionFile<Fields> {
  assertLittleEndian(kind)
  const corrupt = (why: string, cause?: unknown): ToolselError =>
    new ToolselError('INDEX_CORRUPT', `The ${kind.title} ${path} ${why}. ${rebuild}`, { cause })
  if (buffer.length < PREAMBLE_BYTES || !buffer.subarray(0, 8).equals(kind.magic))
    throw corrupt(`is not a toolsel ${kind.kind}`)
  const version = buffer.readUInt32LE(8)
  if (version !== kind.version) {
    throw corrupt(
      `has format version ${version}; this version of toolsel reads version ${kind.version}`,
    )
  }
  const headerLength = buffer.readUInt32LE(12)
  let header: Fields & { sections?: Record<string, [number, number]> }
  try {
    header = JSON.parse(buffer.toString('utf8', PREAMBLE_BYTES, PREAMBLE_BYTES + headerLength))
  } catch {
    throw corrupt('has an unreadable header')
  }
  // Typed-array views need aligned offsets; a pooled buffer may not start at one.
  if (buffer.byteOffset % 8 !== 0) buffer = Buffer.from(buffer)
  const section = (name: string): [number, number] => {
    const [offset, length] = header.sections?.[name] ?? [-1, -1]
    if (!(offset >= 0 && length >= 0 && offset % 8 === 0 && offset + length <= buffer.length))
      throw corrupt(`has no valid ${name} section`)
    return [buffer.byteOffset + offset, length]
  }
  return {
    header,
    has(name) {
      return Object.hasOwn(header.sections ?? {}, name)
    },
    bytes(name) {
      const [offset, length] = section(name)
      return Buffer.from(buffer.buffer, offset, length)
    },
    view(name, Type, count) {
      const [offset, length] = section(name)
      if (length !== count * Type.BYTES_PER_ELEMENT)
        throw corrupt(`has a ${name} section of the wrong size`)
      return new Type(buffer.buffer as ArrayBuffer, offset, count)
    },
    corrupt,
  }
}
