import { mkdir, mkdtemp, rm, utimes, writeFile } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { afterEach, beforeEach, describe, expect, it } from 'vitest'
// @ts-expect-error: plain JavaScript run before any TypeScript (bin/toolsel.mjs), no types
import { BUILD_INFO_FILE, isDistFresh, sourceFingerprint } from '../../bin/dist-freshness.mjs'

let root: string
let src: string
let dist: string

beforeEach(async () => {
  root = await mkdtemp(join(tmpdir(), 'toolsel-dist-'))
  src = join(root, 'src')
  dist = join(root, 'dist')
  await mkdir(join(src, 'library'), { recursive: true })
  await mkdir(dist)
  await writeFile(join(src, 'main.ts'), 'export {}\n')
  await writeFile(join(src, 'library', 'tool.ts'), 'export {}\n')
  const past = new Date(Date.now() - 60_000)
  await utimes(join(src, 'main.ts'), past, past)
  await utimes(join(src, 'library', 'tool.ts'), past, past)
  await writeFile(join(dist, BUILD_INFO_FILE), JSON.stringify(sourceFingerprint(src)))
})
afterEach(async () => {
  await rm(root, { recursive: true, force: true })
})

describe('dist/ freshness (which code bin/toolsel.mjs runs)', () => {
  it('runs dist/ right after a build', () => {
    expect(sourceFingerprint(src).files).toBe(2)
    expect(isDistFresh(src, dist)).toBe(true)
  })

  it('runs the sources once a source file changed', async () => {
    await writeFile(join(src, 'library', 'tool.ts'), 'export const changed = 1\n')
    expect(isDistFresh(src, dist)).toBe(false)
  })

  it('runs the sources when a file was added or removed', async () => {
    const past = new Date(Date.now() - 120_000)
    await writeFile(join(src, 'extra.ts'), 'export {}\n')
    await utimes(join(src, 'extra.ts'), past, past)
    expect(isDistFresh(src, dist)).toBe(false)
    await rm(join(src, 'extra.ts'))
    await rm(join(src, 'main.ts'))
    expect(isDistFresh(src, dist)).toBe(false)
  })

  it('runs the sources without a complete build, and dist/ alone when there are no sources', async () => {
    await rm(join(dist, BUILD_INFO_FILE))
    expect(isDistFresh(src, dist)).toBe(false)
    await writeFile(join(dist, BUILD_INFO_FILE), JSON.stringify(sourceFingerprint(src)))
    await rm(src, { recursive: true })
    expect(isDistFresh(src, dist)).toBe(true)
  })
})
