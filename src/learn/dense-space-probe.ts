/**
 * A dense space's identity by content (models/vector-probe.ts): the sha256 of an encoder's
 * vectors for a fixed list of texts. A learned dense map (`toolsel train --learned-dense`,
 * learned-model.ts `denseMap.baseProbe`) records the probe of the vectors it was trained over;
 * the selector compares it with the probe of the vectors it loads (dense-encoder.ts), so a map is
 * never applied to another space under the same name (`static:glove-100d` from another release
 * of its word-vector package, another conversion of the file).
 * @module
 */
import { vectorProbe } from '../models/vector-probe.ts'
import type { TextEncoder } from './dense-features.ts'

const probes = new WeakMap<TextEncoder, string>()

/** `vectorProbe` of the encoder's vectors; once per encoder. */
export function spaceProbe(encoder: TextEncoder): string {
  let probe = probes.get(encoder)
  if (probe === undefined) {
    probe = vectorProbe((text) => encoder.embedText(text))
    probes.set(encoder, probe)
  }
  return probe
}
