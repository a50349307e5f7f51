/**
 * A dense space's identity by content: the sha256 of an encoder's vectors (float32 bytes) for a
 * fixed list of texts. A learned dense map (`toolsel train --learned-dense`, learned-model.ts
 * `denseMap.baseProbe`) records the probe of the vectors it was trained over; the selector
 * compares it with the probe of the vectors it loads (dense-encoder.ts), so a map is never
 * applied to another space under the same name (`static:glove-100d` from another release of its
 * word-vector package, another conversion of the file). The static vectors come from an npm
 * package and have no model files to fingerprint; this probe stands in for that fingerprint.
 * @module
 */
import { createHash } from 'node:crypto'
import type { TextEncoder } from './dense-features.ts'

/**
 * The probe texts: common request words and a word a vocabulary lacks. Changing them changes
 * every recorded probe (maps trained before would then be skipped): leave them as they are.
 */
export const SPACE_PROBE_TEXTS: readonly string[] = [
  'send an email to the team',
  'weather forecast for tomorrow',
  'book a flight',
  'convert currency',
  'search files in the database',
  'create calendar event',
  'translate text',
  'xqzvbnonword',
]

const probes = new WeakMap<TextEncoder, string>()

/** `sha256:<first 16 hex digits>` of the vectors' dimension and bytes; once per encoder. */
export function spaceProbe(encoder: TextEncoder): string {
  let probe = probes.get(encoder)
  if (probe === undefined) {
    const hash = createHash('sha256')
    for (const text of SPACE_PROBE_TEXTS) {
      const vector = encoder.embedText(text)
      hash.update(`${vector.length}\n`)
      hash.update(new Uint8Array(vector.buffer, vector.byteOffset, vector.byteLength))
    }
    probe = `sha256:${hash.digest('hex').slice(0, 16)}`
    probes.set(encoder, probe)
  }
  return probe
}
