/**
 * `toolsel snapshot restore` renames its indexes into place all or nothing: when a rename fails
 * part-way (here the third of five libraries' directory is immutable, `chattr +i`, which fails
 * its rename with EPERM even for root), the two renamed in before it are taken out again and
 * their previous indexes put back. A real `toolsel serve` answers as before, running and after
 * a restart.
 */
import { execFile } from 'node:child_process'
import { mkdir, readFile, readdir, rename, rmdir, writeFile } from 'node:fs/promises'
import { join } from 'node:path'
import { promisify } from 'node:util'
import { describe, expect, it } from 'vitest'
import { callFresh as call } from '../helpers/fresh-request.ts'
import { parcelAnswers } from '../helpers/parcel-answers.ts'
import { ROOT } from '../helpers/start-serve.ts'
import { servePerTest, toolselOn } from '../helpers/serve-per-test.ts'
import { toolselHere } from '../helpers/toolsel-here.ts'

const run = promisify(execFile)
const { workDir, serve } = servePerTest('toolsel-restore-rollback-')

const LIBRARIES = ['alpha', 'bravo', 'charlie', 'delta', 'echo']

/** Library `name`'s tools in `edition`: which one select-tools picks tells the edition. */
function tools(name: string, edition: string): string {
  return JSON.stringify([
    { name: `${name}_${edition}_lookup`, description: `Look up a parcel (${edition} edition).` },
    { name: `${name}_${edition}_cancel`, description: 'Cancel a booking.' },
  ])
}

/** `chattr <flag> <path>`; false when this file system or user can't (the test is skipped). */
async function chattr(flag: '+i' | '-i', path: string): Promise<boolean> {
  try {
    await run('chattr', [flag, path])
    return true
  } catch {
    return false
  }
}

/** Whether an immutable directory here refuses to be renamed (root, ext4 and the like). */
async function immutableRefusesRename(dir: string): Promise<boolean> {
  const probe = join(dir, 'probe')
  await mkdir(probe)
  if (!(await chattr('+i', probe))) return false
  try {
    await rename(probe, join(dir, 'moved'))
    await rmdir(join(dir, 'moved'))
    return false
  } catch {
    return true
  } finally {
    await chattr('-i', probe)
    await rmdir(probe).catch(() => undefined)
  }
}

/** The first tool select-tools picks for a parcel in each library. */
const answers = (url: string) => parcelAnswers(url, LIBRARIES)

const manifests = (indexDir: string) =>
  Promise.all(LIBRARIES.map((name) => readFile(join(indexDir, name, 'manifest.json'), 'utf8')))

describe('toolsel snapshot restore: a rename failing part-way is undone', () => {
  it('the third of five failing leaves all five as they were, on disk and as served', async (context) => {
    const work = await workDir()
    if (!(await immutableRefusesRename(work)))
      context.skip('chattr +i does not refuse a rename here')
    const indexDir = join(work, 'indexes')
    const env = { TOOLSEL_INDEX_WATCH_MS: '200' }
    let server = await serve([], { indexDir, env })
    const put = async (edition: string) => {
      for (const name of LIBRARIES) {
        const saved = await call(server.url, 'PUT', `/v1/libraries/${name}`, tools(name, edition))
        expect(saved.status, saved.text).toBeLessThan(300)
      }
    }
    await put('first')
    const snapshot = join(work, 'snapshot')
    await toolselHere(indexDir, 'snapshot', snapshot)
    await put('second')
    const before = await answers(server.url)
    expect(before).toEqual(
      Object.fromEntries(LIBRARIES.map((name) => [name, `${name}_second_lookup`])),
    )
    const onDisk = await manifests(indexDir)

    const charlie = join(indexDir, 'charlie')
    expect(await chattr('+i', charlie)).toBe(true)
    let failed: { code: number; stderr: string } | undefined
    try {
      await run(
        process.execPath,
        ['bin/toolsel.mjs', 'snapshot', 'restore', snapshot, '--index-dir', indexDir],
        { cwd: ROOT, env: { ...process.env, TOOLSEL_LIBRARY: '' } },
      )
    } catch (error) {
      failed = error as { code: number; stderr: string }
    } finally {
      await chattr('-i', charlie)
    }
    expect(failed, 'the restore failed').toBeDefined()
    expect(failed!.stderr).toMatch(/Library "charlie" could not be saved in .*EPERM/)
    expect(failed!.stderr).toContain(
      'Nothing was restored: every index in library.indexDir is as it was.',
    )
    expect(await manifests(indexDir)).toEqual(onDisk)
    expect((await readdir(indexDir)).filter((entry) => /^\.(tmp|old|lock)-/.test(entry))).toEqual(
      [],
    )

    // The running server: alpha and bravo were in place for a moment; its watch sees them back.
    await new Promise((resolve) => setTimeout(resolve, 1000))
    expect(await answers(server.url)).toEqual(before)
    server = await serve([], { indexDir, env })
    expect(await answers(server.url)).toEqual(before)

    // Without the immutable directory the same restore restores all five.
    await toolselOn(indexDir, 'snapshot', 'restore', snapshot)
    server = await serve([], { indexDir, env })
    expect(await answers(server.url)).toEqual(
      Object.fromEntries(LIBRARIES.map((name) => [name, `${name}_first_lookup`])),
    )
  }, 180_000)
})
