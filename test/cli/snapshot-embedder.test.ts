/**
 * `toolsel snapshot` and `snapshot restore` load every index to check it: one whose dense part was
 * built with another embedder than the configured one is refused, and the refusal says "Use the
 * index's embedder: toolsel snapshot [restore] <dir> --embedder <id>" (not "Rebuild it with …
 * --embedder use-lite", which re-embeds with a model the library never used). Both commands take that option (it was an unknown option),
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
    // The hint that is true for a snapshot: the index's embedder, in the command run. Rebuilding
    // with the configured embedder (use-lite, which the library never used) is no fix.
    const hint = new RegExp(
      `Use the index's embedder: toolsel snapshot ${backup} --embedder (\\S+) \\(or TOOLSEL_EMBEDDER=\\1\\)\\. Nothing was written\\.`,
    ).exec(refused.stderr)
    expect(hint, refused.stderr).not.toBeNull()
    expect(refused.stderr).not.toMatch(/Rebuild|use-lite --|--embedder use-lite/)

    const made = await toolsel('snapshot', backup, '--index-dir', indexDir, '--embedder', hint![1]!)
    expect(made.code, made.stderr).toBe(0)
    expect(made.stdout).toContain('1 index(es) (hashed)')

    const other = join(root, 'restored')
    const notRestored = await toolsel('snapshot', 'restore', backup, '--index-dir', other)
    expect(notRestored.stderr).toContain(
      `Use the index's embedder: toolsel snapshot restore ${backup} --embedder ${hint![1]} (or TOOLSEL_EMBEDDER=${hint![1]}). Nothing was written.`,
    )
    expect(notRestored.stderr).not.toMatch(/Rebuild/)
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
