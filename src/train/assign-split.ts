/**
 * Deterministic train/validation assignment: by a hash of the seed and the example id, so an
 * example stays in its split when other examples are added, removed or reordered.
 * @module
 */
import { createHash } from 'node:crypto'

export type DataSplit = 'train' | 'valid'

/** `valid` for about `validFraction` of ids, the same ids for the same seed on every run. */
export function assignSplit(id: string, seed: number, validFraction: number): DataSplit {
  const digest = createHash('sha256').update(`${seed}:${id}`).digest()
  return digest.readUInt32BE(0) / 0x1_0000_0000 < validFraction ? 'valid' : 'train'
}
