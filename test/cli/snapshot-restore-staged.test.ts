/**
 * `toolsel snapshot restore` writes every index beside its place before it renames any into
 * place: a failure writing one (here the file size limit of the process, `ulimit -f`, which
 * fails the write of the second, larger index with EFBIG as a full disk fails it with ENOSPC)
 * leaves the index directory as it was, with no work directory left behind.
 */
import { execFile } from 'node:child_process'
import { mkdtemp, readFile, readdir, rm, writeFile } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { promisify } from 'node:util'
import { afterEach, describe, expect, it } from 'vitest'
import { ROOT } from '../helpers/start-serve.ts'
import { toolselHere } from '../helpers/toolsel-here.ts'

const run = promisify(execFile)
let work: string | undefined

afterEach(async () => {
  if (work) await rm(work, { recursive: true, force: true })
})

/** `count` tools of about 500 bytes each, in `edition`. */
function tools(edition: string, count: number): string {
  return JSON.stringify(
    Array.from({ length: count }, (_, index) => ({
      name: `tool_${index}`,
      description: `Tool ${index} of the ${edition} edition: ${'does one thing well. '.repeat(20)}`,
    })),
  )
}

/** `toolsel <args>` on `indexDir`, its files at most `maxFileKiB` KiB when given (ulimit -f). */
async function toolsel(
  indexDir: string,
  args: string[],
  maxFileKiB?: number,
): Promise<{ code: number; stderr: string }> {
  const limit = maxFileKiB === undefined ? '' : `ulimit -f ${maxFileKiB}; `
  try {
    const { stderr } = await run(
      'bash',
      [
        '-c',
        `${limit}exec "$0" bin/toolsel.mjs "$@"`,
        process.execPath,
        ...args,
        '--index-dir',
        indexDir,
      ],
      { cwd: ROOT, env: { ...process.env, TOOLSEL_LIBRARY: '' } },
    )
    return { code: 0, stderr }
  } catch (error) {
    const failed = error as { code: number; stderr: string }
    return { code: failed.code, stderr: failed.stderr }
  }
}

describe('toolsel snapshot restore: all or nothing while writing', () => {
  it('a failure writing the second index restores neither and leaves no work directory', async () => {
    work = await mkdtemp(join(tmpdir(), 'toolsel-restore-staged-'))
    const indexDir = join(work, 'indexes')
    const file = (name: string) => join(work!, name)
    // `alpha` small (its files well under 64 KiB), `beta` large (its tools file ~250 KiB).
    await writeFile(file('alpha-v1.json'), tools('first', 2))
    await writeFile(file('beta-v1.json'), tools('first', 500))
    await writeFile(file('alpha-v2.json'), tools('second', 2))
    await writeFile(file('beta-v2.json'), tools('second', 500))
    // What the restore starts from, made in this process (toolselHere): five process starts
    // were most of this test's time on a loaded machine. The restores are processes of their own.
    for (const name of ['alpha', 'beta'])
      await toolselHere(indexDir, 'index', file(`${name}-v1.json`), '--name', name)
    const snapshot = join(work, 'snapshot')
    await toolselHere(indexDir, 'snapshot', snapshot)
    for (const name of ['alpha', 'beta'])
      await toolselHere(indexDir, 'index', file(`${name}-v2.json`), '--name', name)
    const before = await Promise.all(
      ['alpha', 'beta'].map((name) => readFile(join(indexDir, name, 'manifest.json'), 'utf8')),
    )

    const failed = await toolsel(indexDir, ['snapshot', 'restore', snapshot], 64)
    expect(failed.code, failed.stderr).not.toBe(0)
    const after = await Promise.all(
      ['alpha', 'beta'].map((name) => readFile(join(indexDir, name, 'manifest.json'), 'utf8')),
    )
    expect(after).toEqual(before)
    expect(failed.stderr).toMatch(/Library "beta" could not be saved in .*EFBIG/)
    expect(failed.stderr).toContain(
      'Nothing was restored: every index in library.indexDir is as it was.',
    )
    expect((await readdir(indexDir)).filter((entry) => entry.startsWith('.tmp-'))).toEqual([])

    // Without the limit it restores both.
    const restored = await toolsel(indexDir, ['snapshot', 'restore', snapshot])
    expect(restored.code, restored.stderr).toBe(0)
    const tool = await readFile(join(indexDir, 'alpha', 'tools.jsonl'), 'utf8')
    expect(tool).toContain('first edition')
  }, 120_000)
})
