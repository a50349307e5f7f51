/**
 * `toolsel select` on the demo (not saved in the index directory) keeps the index it builds in
 * the user's cache directory (`$XDG_CACHE_HOME/toolsel/indexes/<build config>/demo`) and loads it
 * from there while it is current, instead of importing and indexing the demo's files at every run
 * (round 48); each config that builds other parts keeps its own (round 50).
 */
import {
  mkdirSync,
  mkdtempSync,
  readdirSync,
  readFileSync,
  statSync,
  utimesSync,
  writeFileSync,
} from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { describe, expect, it } from 'vitest'
import { runToolselChild } from '../helpers/run-toolsel-child.ts'

const INSTRUCTION = 'book a flight to Paris and email the itinerary to Bob'

/** A fresh cache and an empty index directory: the demo is not saved anywhere yet. */
function freshPlaces(): { env: Record<string, string>; cache: string } {
  const root = mkdtempSync(join(tmpdir(), 'select-demo-cache-'))
  const env = {
    XDG_CACHE_HOME: join(root, 'cache'),
    TOOLSEL_INDEX_DIR: join(root, 'indexes'),
    TOOLSEL_LIBRARY: '',
    TOOLSEL_LOG_LEVEL: 'info',
  }
  return { env, cache: join(root, 'cache', 'toolsel', 'indexes') }
}

/** The cached demo's directory when one config's is cached (`<cache>/<its key>/demo`). */
function onlyCached(cache: string): string {
  const keys = readdirSync(cache)
  expect(keys).toHaveLength(1)
  return join(cache, keys[0], 'demo')
}

async function select(env: Record<string, string>, ...flags: string[]) {
  const run = await runToolselChild(['select', INSTRUCTION, '--json', ...flags], {
    env,
    timeoutMs: 120_000,
  })
  expect(run.code, run.stderr).toBe(0)
  const answer = JSON.parse(run.stdout)
  // The same answer but for the times it took.
  delete answer.timings
  return { answer, stderr: run.stderr }
}

describe('toolsel select: the demo indexed once, then loaded from the user cache', () => {
  it('builds and caches it at the first run, loads it at the next, with the same answer', async () => {
    const { env, cache } = freshPlaces()
    const first = await select(env)
    expect(first.stderr).toContain('Indexed library "demo"')
    const cached = onlyCached(cache)
    const manifest = JSON.parse(readFileSync(join(cached, 'manifest.json'), 'utf8'))
    expect(manifest.source.fingerprint).toMatch(/\S/)
    expect(manifest.toolCount).toBe(197)
    const second = await select(env)
    expect(second.stderr).toContain(`Loaded library "demo" from its index cached in ${cached}`)
    expect(second.stderr).not.toContain('Indexed library')
    expect(second.answer).toEqual(first.answer)
    expect(second.answer.tools.length).toBeGreaterThan(0)
  }, 300_000)

  it('builds again when the cached index is not current: another fingerprint, other parts', async () => {
    const { env, cache } = freshPlaces()
    const first = await select(env)
    const cached = onlyCached(cache)
    const file = join(cached, 'manifest.json')
    const manifest = JSON.parse(readFileSync(file, 'utf8'))
    // As if the demo's files or toolsel's code had changed since it was cached.
    writeFileSync(
      file,
      JSON.stringify({ ...manifest, source: { ...manifest.source, fingerprint: 'x' } }),
    )
    const stale = await select(env)
    expect(stale.stderr).toContain('Indexed library "demo"')
    expect(stale.answer).toEqual(first.answer)
    // Saved again with the fingerprint as it is now.
    expect(JSON.parse(readFileSync(file, 'utf8')).source.fingerprint).toBe(
      manifest.source.fingerprint,
    )
    // A config that builds other parts (regex) does not take the BM25-only index as it is.
    const regex = await select(env, '--retriever', 'regex')
    expect(regex.stderr).toContain('Indexed library "demo"')
    expect(regex.answer.components.retriever).toBe('regex')
    // Each config keeps its own: alternating them indexes neither again (was: each run indexed
    // the demo and replaced the other config's).
    const again = await select(env)
    expect(again.stderr).toContain(`Loaded library "demo" from its index cached in ${cached}`)
    expect(again.answer).toEqual(first.answer)
    const regexAgain = await select(env, '--retriever', 'regex')
    expect(regexAgain.stderr).toContain('Loaded library "demo" from its index cached')
    expect(regexAgain.answer).toEqual(regex.answer)
    expect(readdirSync(cache)).toHaveLength(2)
  }, 300_000)

  it('two runs at once with an empty cache: both answer, and what is left is one whole index', async () => {
    const { env, cache } = freshPlaces()
    const [one, other] = await Promise.all([select(env), select(env)])
    const cached = onlyCached(cache)
    expect(other.answer).toEqual(one.answer)
    // No work directory left behind, and the index there loads as cached.
    expect(readdirSync(join(cached, '..')).filter((name) => name.startsWith('.tmp'))).toEqual([])
    const third = await select(env)
    expect(third.stderr).toContain('Loaded library "demo" from its index cached')
    expect(third.answer).toEqual(one.answer)
  }, 300_000)

  it('a build keeps the 4 configs used last and removes the round-48 layout (was: never pruned)', async () => {
    const { env, cache } = freshPlaces()
    // Four other configs' cached demos, used 1 to 4 days ago, the old layout's demo, a file.
    const day = 86_400_000
    const others = ['0000000000000001', '0000000000000002', '0000000000000003', '0000000000000004']
    for (const [i, key] of others.entries()) {
      mkdirSync(join(cache, key, 'demo'), { recursive: true })
      writeFileSync(join(cache, key, 'demo', 'manifest.json'), '{}')
      const used = new Date(Date.now() - (i + 1) * day)
      utimesSync(join(cache, key), used, used)
    }
    mkdirSync(join(cache, 'demo'))
    writeFileSync(join(cache, 'demo', 'manifest.json'), '{}')
    writeFileSync(join(cache, 'notes.txt'), 'not the cache of a config')
    const first = await select(env)
    expect(first.stderr).toContain('Indexed library "demo"')
    const built = readdirSync(cache).filter((name) => !others.includes(name) && name.length === 16)
    expect(built).toHaveLength(1)
    // The oldest used of the others and the old layout's demo are gone.
    expect(readdirSync(cache).sort()).toEqual([...others.slice(0, 3), built[0], 'notes.txt'].sort())
    // A cached load renews its config's time: a load five days after the others' still counts
    // as the latest use.
    const old = new Date(Date.now() - 5 * day)
    utimesSync(join(cache, built[0]), old, old)
    const second = await select(env)
    expect(second.stderr).toContain('Loaded library "demo" from its index cached')
    expect(statSync(join(cache, built[0])).mtimeMs).toBeGreaterThan(Date.now() - day)
  }, 300_000)
})
