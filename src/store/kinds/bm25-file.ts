/**
 * The binary BM25 index file (`bm25.bin`, and `bm25-examples.bin` for the expansion index): the
 * postings' typed arrays written as they are in memory and read back as views of one buffer, so a
 * load costs one file read and no parsing beyond the term dictionary.
 *
 * Layout (little-endian):
 *
 * | bytes | content |
 * |---|---|
 * | 0-7 | magic `TSLBM25\n` |
 * | 8-11 | format version (uint32, `BM25_FILE_VERSION`) |
 * | 12-15 | header length in bytes (uint32) |
 * | 16… | header: JSON `{documents, terms, postings, totalCorpusLength, sections}`; `sections` maps each section to `[byteOffset, byteLength]` |
 * | sections, each at a multiple of 8 | `terms`: the terms in id order, UTF-8, joined by `\n`; `offsets`: uint32 × (terms + 1), term t's postings are `offsets[t]…offsets[t+1]-1`; `docs`: int32 document positions (library order), ascending per term; `weights`: int32 BM25 weights in millionths; `docLengths`: float64 per document |
 *
 * The file holds no tool ids: document positions are the library's tool order (`tools.jsonl`).
 * @module
 */
import { open, readFile } from 'node:fs/promises'
import { endianness } from 'node:os'
import { ToolselError } from '../../errors.ts'
import { withBounds, type Bm25Postings } from '../../retrieve/bm25/bm25-postings.ts'

export const BM25_FILE_VERSION = 1
const MAGIC = Buffer.from('TSLBM25\n', 'latin1')
const PREAMBLE_BYTES = 16

interface FileHeader {
  documents: number
  terms: number
  postings: number
  totalCorpusLength: number
  sections: Record<SectionName, [number, number]>
}

const SECTIONS = ['terms', 'offsets', 'docs', 'weights', 'docLengths'] as const
type SectionName = (typeof SECTIONS)[number]

function assertLittleEndian(): void {
  if (endianness() !== 'LE') {
    throw new ToolselError(
      'INTERNAL',
      'BM25 index files are little-endian; this machine is big-endian.',
    )
  }
}

function bytesOf(array: ArrayBufferView): Buffer {
  return Buffer.from(array.buffer, array.byteOffset, array.byteLength)
}

/** Writes `postings` to `path` (inside the index's temporary directory: the save is atomic). */
export async function writeBm25File(path: string, postings: Bm25Postings): Promise<void> {
  assertLittleEndian()
  const terms = [...postings.termIndex.keys()]
  if (terms.some((term) => term.includes('\n'))) {
    throw new ToolselError('INTERNAL', 'A BM25 term contains a line break.')
  }
  const payloads: Record<SectionName, Buffer> = {
    terms: Buffer.from(terms.join('\n'), 'utf8'),
    offsets: bytesOf(postings.offsets),
    docs: bytesOf(postings.docs),
    weights: bytesOf(postings.weights),
    docLengths: bytesOf(postings.docLengths),
  }
  // The header's length depends on the offsets it lists: lay out with a generous estimate, then
  // pad the header to it.
  const headerRoom = 1024
  let at = align(PREAMBLE_BYTES + headerRoom)
  const sections = {} as Record<SectionName, [number, number]>
  for (const name of SECTIONS) {
    sections[name] = [at, payloads[name].length]
    at = align(at + payloads[name].length)
  }
  const header: FileHeader = {
    documents: postings.documents,
    terms: terms.length,
    postings: postings.docs.length,
    totalCorpusLength: postings.totalCorpusLength,
    sections,
  }
  const headerBytes = Buffer.alloc(headerRoom, 0x20)
  const headerJson = Buffer.from(JSON.stringify(header), 'utf8')
  if (headerJson.length > headerRoom)
    throw new ToolselError('INTERNAL', 'BM25 file header too long.')
  headerJson.copy(headerBytes)
  const preamble = Buffer.alloc(PREAMBLE_BYTES)
  MAGIC.copy(preamble)
  preamble.writeUInt32LE(BM25_FILE_VERSION, 8)
  preamble.writeUInt32LE(headerRoom, 12)
  const file = await open(path, 'w')
  try {
    await file.write(preamble, 0, preamble.length, 0)
    await file.write(headerBytes, 0, headerBytes.length, PREAMBLE_BYTES)
    for (const name of SECTIONS) {
      const payload = payloads[name]
      if (payload.length > 0) await file.write(payload, 0, payload.length, sections[name][0])
    }
    await file.truncate(at)
  } finally {
    await file.close()
  }
}

function align(offset: number): number {
  return Math.ceil(offset / 8) * 8
}

/** Reads a file written by `writeBm25File`; INDEX_CORRUPT (with `rebuild`) when it isn't one. */
export async function readBm25File(path: string, rebuild: string): Promise<Bm25Postings> {
  assertLittleEndian()
  let buffer = await readFile(path)
  const corrupt = (why: string): ToolselError =>
    new ToolselError('INDEX_CORRUPT', `The BM25 index file ${path} ${why}. ${rebuild}`)
  if (buffer.length < PREAMBLE_BYTES || !buffer.subarray(0, 8).equals(MAGIC))
    throw corrupt('is not a toolsel BM25 file')
  const version = buffer.readUInt32LE(8)
  if (version !== BM25_FILE_VERSION) {
    throw corrupt(
      `has format version ${version}; this version of toolsel reads version ${BM25_FILE_VERSION}`,
    )
  }
  const headerLength = buffer.readUInt32LE(12)
  let header: FileHeader
  try {
    header = JSON.parse(
      buffer.toString('utf8', PREAMBLE_BYTES, PREAMBLE_BYTES + headerLength),
    ) as FileHeader
  } catch {
    throw corrupt('has an unreadable header')
  }
  // Typed-array views need aligned offsets; a pooled buffer may not start at one.
  if (buffer.byteOffset % 8 !== 0) buffer = Buffer.from(buffer)
  const section = (name: SectionName): [number, number] => {
    const [offset, length] = header.sections?.[name] ?? [-1, -1]
    if (!(offset >= 0 && length >= 0 && offset % 8 === 0 && offset + length <= buffer.length))
      throw corrupt(`has no valid ${name} section`)
    return [buffer.byteOffset + offset, length]
  }
  const view = <T>(
    name: SectionName,
    Type: new (b: ArrayBuffer, o: number, n: number) => T,
    bytes: number,
    count: number,
  ): T => {
    const [offset, length] = section(name)
    if (length !== count * bytes) throw corrupt(`has a ${name} section of the wrong size`)
    return new Type(buffer.buffer as ArrayBuffer, offset, count)
  }
  const { documents, terms: termCount, postings: postingCount } = header
  if (![documents, termCount, postingCount].every((n) => Number.isSafeInteger(n) && n >= 0))
    throw corrupt('has an invalid header')
  const [termsOffset, termsLength] = section('terms')
  const termText = Buffer.from(buffer.buffer, termsOffset, termsLength).toString('utf8')
  const terms = termCount === 0 ? [] : termText.split('\n')
  if (terms.length !== termCount) throw corrupt('has a term dictionary of the wrong size')
  const offsets = view('offsets', Uint32Array, 4, termCount + 1)
  const docs = view('docs', Int32Array, 4, postingCount)
  const weights = view('weights', Int32Array, 4, postingCount)
  const docLengths = view('docLengths', Float64Array, 8, documents)
  if (offsets[0] !== 0 || offsets[termCount] !== postingCount)
    throw corrupt('has inconsistent postings offsets')
  for (let term = 0; term < termCount; term += 1)
    if (offsets[term + 1] < offsets[term]) throw corrupt('has inconsistent postings offsets')
  for (let at = 0; at < postingCount; at += 1)
    if (docs[at] < 0 || docs[at] >= documents) throw corrupt('has a posting outside the library')
  return withBounds({
    documents,
    termIndex: new Map(terms.map((term, id) => [term, id])),
    offsets,
    docs,
    weights,
    docLengths,
    totalCorpusLength: header.totalCorpusLength,
  })
}
