/**
 * The one-time word-vector conversion (scripts/prepare-word-vectors.mjs, run by `npm ci` and the
 * Docker build) is described in three places a user meets: README's Quick start, the script's
 * header and the line the conversion logs. They give one figure (measured in round 31: cold cache
 * in a fresh `npm ci` clone, 5.4-6.5 s of CPU, peak RSS 515 MiB).
 * @module
 */
import { readFile } from 'node:fs/promises'
import { join } from 'node:path'
import { fileURLToPath } from 'node:url'
import { describe, expect, it } from 'vitest'

const ROOT = fileURLToPath(new URL('../..', import.meta.url))
const FIGURE = /about (\d+) s of CPU\s+(?:\/\/\s*)?and\s+(?:a\s+)?(\d+) MiB/g

async function figures(file: string): Promise<string[]> {
  const text = await readFile(join(ROOT, file), 'utf8')
  return [...text.matchAll(FIGURE)].map(
    ([, seconds, mebibytes]) => `${seconds} s, ${mebibytes} MiB`,
  )
}

describe('the word-vector conversion figure', () => {
  it('is the same in README, the script and the log line', async () => {
    const readme = await figures('README.md')
    const script = await figures('scripts/prepare-word-vectors.mjs')
    const log = await figures('src/models/static/word-vectors.ts')
    expect(readme).toHaveLength(1)
    expect(script).toEqual(readme)
    expect(log).toEqual(readme)
  })
})
