/**
 * The binary BM25 index file (`bm25.bin`, and `bm25-examples.bin` for the expansion index): the
 * postings' typed arrays written as they are in memory and read back as views of one buffer, so a
 * load costs one file read and no parsing beyond the term dictionary.
 *
 * A section file (../section-file.ts): magic `TSLBM25\n`, version `BM25_FILE_VERSION`, header
 * `{documents, terms, postings, totalCorpusLength, sections}`, then:
 *
 * | section | content |
 * |---|---|
 * | in this order | `terms`: the terms in id order, UTF-8, joined by `\n`; `offsets`: uint32 × (terms + 1), term t's postings are `offsets[t]…offsets[t+1]-1`; `docs`: int32 document positions (library order), ascending per term; `weights`: int32 BM25 weights in millionths; `docLengths`: float64 per document |
 *
 * The file holds no tool ids: document positions are the library's tool order (`tools.jsonl`).
 * @module
 */
import { isUtf8 } from 'node:buffer'
import { ToolselError } from '../../errors.ts'
import type { IndexFileBound } from '../index-file-read.ts'
import { withBoundsSteps, type Bm25Postings } from '../../retrieve/bm25/bm25-postings.ts'
import { runSteps, runStepsSliced, type Steps } from '../../time-slicer.ts'
import {
  bytesOf,
  parseSectionFile,
  readSectionFile,
  sectionFileBytes,
  writeSectionFile,
  type SectionFile,
  type SectionFileKind,
} from '../section-file.ts'

export const BM25_FILE_VERSION = 1

const BM25_FILE: SectionFileKind = {
  magic: Buffer.from('TSLBM25\n', 'latin1'),
  version: BM25_FILE_VERSION,
  title: 'BM25 index file',
  kind: 'BM25 file',
}

interface FileHeader {
  documents: number
  terms: number
  postings: number
  totalCorpusLength: number
}

/**
 * The `terms` section each term dictionary read from a file was made from (`postingsSteps`),
 * when writing them again gives the same bytes (valid UTF-8, no term twice). A save of postings
 * read from a file (the tool fields' of a library loaded from its index, re-saved on every
 * examples POST or feedback) writes them as they are: at 100k tools, listing, checking, joining
 * and encoding the terms again held one turn ~18 ms (bench/resave-parts-cost.ts, round 54).
 * Term dictionaries are never changed after they are made.
 */
const readTerms = new WeakMap<ReadonlyMap<string, number>, Buffer>()

/** The `terms` section of `termIndex`: its terms in id order, joined by `\n`. */
function termsSection(termIndex: ReadonlyMap<string, number>): Buffer {
  const read = readTerms.get(termIndex)
  if (read !== undefined) return read
  const terms = [...termIndex.keys()]
  if (terms.some((term) => term.includes('\n'))) {
    throw new ToolselError('INTERNAL', 'A BM25 term contains a line break.')
  }
  return Buffer.from(terms.join('\n'), 'utf8')
}

/** The header and sections of the file of `postings`. */
function fileParts(postings: Bm25Postings): [FileHeader, Record<string, Buffer>] {
  const header: FileHeader = {
    documents: postings.documents,
    terms: postings.termIndex.size,
    postings: postings.docs.length,
    totalCorpusLength: postings.totalCorpusLength,
  }
  return [
    header,
    {
      terms: termsSection(postings.termIndex),
      offsets: bytesOf(postings.offsets),
      docs: bytesOf(postings.docs),
      weights: bytesOf(postings.weights),
      docLengths: bytesOf(postings.docLengths),
    },
  ]
}

/** Writes `postings` to `path` (inside the index's temporary directory: the save is atomic). */
export async function writeBm25File(path: string, postings: Bm25Postings): Promise<void> {
  const [header, payloads] = fileParts(postings)
  await writeSectionFile(path, BM25_FILE, { ...header }, payloads)
}

/** The bytes `writeBm25File` writes (an upload's worker hands its postings over in them). */
export function bm25FileBytes(postings: Bm25Postings): Buffer {
  const [header, payloads] = fileParts(postings)
  return sectionFileBytes(BM25_FILE, { ...header }, payloads)
}

/** Reads a file written by `writeBm25File`; INDEX_CORRUPT (with `rebuild`) when it isn't one. */
export async function readBm25File(
  path: string,
  rebuild: string,
  bound: IndexFileBound,
): Promise<Bm25Postings> {
  return runSteps(postingsSteps(await readSectionFile<FileHeader>(path, BM25_FILE, rebuild, bound)))
}

/**
 * The postings of `bm25FileBytes` (no copy of the arrays), yielding to the event loop every few
 * milliseconds: the term dictionary of a large library is a map of hundreds of thousands of
 * terms.
 */
export function bm25PostingsOfBytes(bytes: Buffer, signal?: AbortSignal): Promise<Bm25Postings> {
  const file = parseSectionFile<FileHeader>(bytes, 'of the upload', BM25_FILE, '')
  return runStepsSliced(postingsSteps(file), signal)
}

/** The checks and the postings of a BM25 file, a yield every few thousand items. */
function* postingsSteps(file: SectionFile<FileHeader>): Steps<Bm25Postings> {
  const { header, corrupt } = file
  const { documents, terms: termCount, postings: postingCount } = header
  if (![documents, termCount, postingCount].every((n) => Number.isSafeInteger(n) && n >= 0))
    throw corrupt('has an invalid header')
  const termBytes = file.bytes('terms')
  const termText = termBytes.toString('utf8')
  const terms = termCount === 0 ? [] : termText.split('\n')
  if (terms.length !== termCount) throw corrupt('has a term dictionary of the wrong size')
  const offsets = file.view('offsets', Uint32Array, termCount + 1)
  const docs = file.view('docs', Int32Array, postingCount)
  const weights = file.view('weights', Int32Array, postingCount)
  const docLengths = file.view('docLengths', Float64Array, documents)
  if (offsets[0] !== 0 || offsets[termCount] !== postingCount)
    throw corrupt('has inconsistent postings offsets')
  for (let term = 0; term < termCount; term += 1) {
    if (offsets[term + 1] < offsets[term]) throw corrupt('has inconsistent postings offsets')
    if (term % STEP === STEP - 1) yield
  }
  for (let at = 0; at < postingCount; at += 1) {
    if (docs[at] < 0 || docs[at] >= documents) throw corrupt('has a posting outside the library')
    if (at % STEP === STEP - 1) yield
  }
  const termIndex = new Map<string, number>()
  for (let id = 0; id < termCount; id += 1) {
    termIndex.set(terms[id], id)
    if (id % STEP === STEP - 1) yield
  }
  // Written again as they are when these postings are saved (a term twice would be written once).
  if (termIndex.size === termCount && isUtf8(termBytes)) readTerms.set(termIndex, termBytes)
  return yield* withBoundsSteps({
    documents,
    termIndex,
    offsets,
    docs,
    weights,
    docLengths,
    totalCorpusLength: header.totalCorpusLength,
  })
}

/** Items between two yields of `postingsSteps`. */
const STEP = 4096
