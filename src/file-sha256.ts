/**
 * The sha256 of a file's bytes, read as a stream (64 KiB at a time): a model's weights or an
 * index's vectors (hundreds of MB) are never held in memory whole, and the event loop keeps
 * turning while they are read.
 * @module
 */
import { createHash } from 'node:crypto'
import { createReadStream } from 'node:fs'

/** The hex sha256 of the file at `path`; rejects with what reading it throws. */
export function sha256OfFile(path: string): Promise<string> {
  return new Promise((resolve, reject) => {
    const hash = createHash('sha256')
    createReadStream(path)
      .on('data', (chunk) => hash.update(chunk))
      .on('error', reject)
      .on('end', () => resolve(hash.digest('hex')))
  })
}
