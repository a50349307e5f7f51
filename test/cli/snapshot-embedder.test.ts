/**
 * `toolsel snapshot` and `snapshot restore` load every index to check it: one whose dense part was
 * built with another embedder than the configured one is refused, and the refusal says "use the
 * index's embedder: --embedder <id>". Both commands take that option (it was an unknown option),
 * so a backup of an index directory holding such a library can be made and restored as the error
 * says. Real files, the hashing embedder, the CLI in this process.
 */
import { mkdtemp, rm, writeFile } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { afterEach, describe, expect, it } from 'vitest'
import { main } from '../../src/main.ts'
import { SAMPLE_TOOLS } from '../helpers/sample-tools.ts'

let root: string | undefined

afterEach(async () => {
  if (root) await rm(root, { recursive: true, force: true })
})

async function toolsel(...args: string[]) {
  let stderr = ''
  let stdout = ''
  const code = await main(args, {
    stdout: (text) => (stdout += text),
    stderr: (text) => (stderr += text),
    env: {},
  })
  return { code, stdout, stderr }
}

describe('snapshot of an index built with another embedder', () => {
  it('is refused naming --embedder, which snapshot and snapshot restore take', async () => {
    root = await mkdtemp(join(tmpdir(), 'toolsel-snapshot-embedder-'))
    const file = join(root, 'tools.json')
    await writeFile(file, JSON.stringify(SAMPLE_TOOLS))
    const indexDir = join(root, 'indexes')
    const built = await toolsel(
      'index',
      file,
      '--name',
      'hashed',
      '--index-dir',
      indexDir,
      '--retriever',
      'hybrid',
      '--embedder',
      'hashing',
    )
    expect(built.code, built.stderr).toBe(0)

    const backup = join(root, 'backup')
    const refused = await toolsel('snapshot', backup, '--index-dir', indexDir)
    expect(refused.code).not.toBe(0)
    const hint = /Or use the index's embedder: --embedder (\S+),/.exec(refused.stderr)
    expect(hint, refused.stderr).not.toBeNull()

    const made = await toolsel('snapshot', backup, '--index-dir', indexDir, '--embedder', hint![1]!)
    expect(made.code, made.stderr).toBe(0)
    expect(made.stdout).toContain('1 index(es) (hashed)')

    const other = join(root, 'restored')
    const notRestored = await toolsel('snapshot', 'restore', backup, '--index-dir', other)
    expect(notRestored.stderr).toContain(`Or use the index's embedder: --embedder ${hint![1]}`)
    const restored = await toolsel(
      'snapshot',
      'restore',
      backup,
      '--index-dir',
      other,
      '--embedder',
      hint![1]!,
    )
    expect(restored.code, restored.stderr).toBe(0)
    expect(restored.stdout).toContain(`Restored 1 index(es) into ${other}: hashed`)
  }, 60_000)
})
