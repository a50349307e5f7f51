/**
 * `toolsel index`'s input files. A path that names no file: the tool path and the --examples file
 * are refused alike, INVALID_INPUT and exit 2 (README: "exits 2 for input it refuses"), nothing
 * written, and so is a tool directory it may not read; a tool file that is read but does not import stays IMPORT_FAILED, exit 1. And an
 * --examples file of `toolsel train --examples` (records with an `id`) is read as it is; `toolsel
 * select` over the index then says when its tools are the usage examples' rather than the steps'.
 */
import { spawnSync } from 'node:child_process'
import { existsSync } from 'node:fs'
import { chmod, mkdir, mkdtemp, readFile, rm, writeFile } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { join, resolve } from 'node:path'
import { describe, expect, it } from 'vitest'
import { runCli } from './run-cli.ts'

const TOOL = {
  type: 'function',
  function: {
    name: 'send_sms',
    description: 'Send an SMS text message',
    parameters: { type: 'object', properties: { to: { type: 'string' } } },
  },
}

/** A temporary directory holding TOOL in tools.json and `record` as the examples file `name`. */
async function toolAndExamples(name: string, record: object) {
  const dir = await mkdtemp(join(tmpdir(), 'toolsel-index-examples-'))
  const toolFile = join(dir, 'tools.json')
  await writeFile(toolFile, JSON.stringify([TOOL]))
  const examples = join(dir, name)
  await writeFile(examples, `${JSON.stringify(record)}\n`)
  return { toolFile, examples, indexDir: join(dir, 'indexes') }
}

describe('toolsel index with a missing input file', () => {
  it('exits 2 with INVALID_INPUT for a missing tool path as for a missing --examples file', async () => {
    const dir = await mkdtemp(join(tmpdir(), 'toolsel-index-missing-'))
    const toolFile = join(dir, 'tools.json')
    await writeFile(toolFile, JSON.stringify([TOOL]))
    const indexDir = join(dir, 'indexes')

    const examples = await runCli([
      'index',
      toolFile,
      '--index-dir',
      indexDir,
      '--examples',
      join(dir, 'missing.jsonl'),
    ])
    expect(examples.stderr).toContain(
      `error [INVALID_INPUT]: Cannot read --examples file "${join(dir, 'missing.jsonl')}": no such file or directory`,
    )
    expect(examples.code).toBe(2)
    // Refused before the tools are imported (was: "Imported 1 tool …" first, then the error).
    expect(examples.stderr).not.toContain('Imported')
    const directory = await runCli(['index', toolFile, '--index-dir', indexDir, '--examples', dir])
    expect(directory.stderr).toBe(
      `error [INVALID_INPUT]: Cannot read --examples file "${dir}": it is a directory; name a file\n`,
    )
    expect(directory.code).toBe(2)

    // Was exit 1, IMPORT_FAILED: the same mistake (a path with a typo) got another exit code.
    const tools = await runCli(['index', join(dir, 'missing.json'), '--index-dir', indexDir])
    expect(tools.stderr).toContain(
      `error [INVALID_INPUT]: Cannot read tool path "${join(dir, 'missing.json')}": no such file or directory`,
    )
    expect(tools.code).toBe(2)
    expect(existsSync(indexDir)).toBe(false)

    // A file that is there but holds no tools does not import: exit 1, as before.
    const empty = join(dir, 'empty.json')
    await writeFile(empty, '[]')
    const bad = await runCli(['index', empty, '--index-dir', indexDir])
    expect(bad.stderr).toContain('error [IMPORT_FAILED]')
    expect(bad.code).toBe(1)
    expect(existsSync(indexDir)).toBe(false)

    // And the one tool of a good file is "1 tool", not "1 tools".
    const good = await runCli(['index', toolFile, '--index-dir', indexDir])
    expect(good.code).toBe(0)
    expect(good.stderr).toContain(`1 tool written to ${join(indexDir, 'tools')}`)
  })

  it('exits 2 with INVALID_INPUT naming a tool directory it may not read (was a raw EACCES, exit 1)', async () => {
    // root reads any directory: then the command runs as the user nobody, who may not, in a
    // directory that user can reach (the tests' own temporary directory is root's alone).
    const asRoot = process.getuid?.() === 0
    const dir = await mkdtemp(join(asRoot ? '/tmp' : tmpdir(), 'toolsel-index-unreadable-'))
    try {
      const tools = join(dir, 'tools')
      await mkdir(tools)
      await writeFile(join(tools, 'tools.json'), JSON.stringify([TOOL]))
      await chmod(tools, 0o000)
      const indexDir = join(dir, 'indexes')
      const argv = ['index', tools, '--index-dir', indexDir]
      let result: { code: number | null; stderr: string }
      if (asRoot) {
        await chmod(dir, 0o755)
        const run = spawnSync(process.execPath, [resolve('bin/toolsel.mjs'), ...argv], {
          uid: 65534,
          gid: 65534,
          cwd: dir,
          encoding: 'utf8',
          env: { PATH: process.env.PATH },
        })
        result = { code: run.status, stderr: run.stderr }
      } else {
        result = await runCli(argv)
      }
      await chmod(tools, 0o755)
      expect(result.stderr).toContain(
        `error [INVALID_INPUT]: Cannot read tool directory "${tools}": permission denied`,
      )
      expect(result.code).toBe(2)
      expect(existsSync(indexDir)).toBe(false)
    } finally {
      await rm(dir, { recursive: true, force: true })
    }
  })

  it('says how many duplicate examples it removed, and none when there were none', async () => {
    const { toolFile, examples, indexDir } = await toolAndExamples('examples.jsonl', {
      instruction: 'text mom I am late',
      tools: ['send_sms'],
    })
    // Before: "(1 kept: duplicates removed)" for a file without any duplicate.
    const one = await runCli(['index', toolFile, '--index-dir', indexDir, '--examples', examples])
    expect(one.stderr).toContain(`Read 1 usage example from ${examples} (1 kept)\n`)
    expect(one.code).toBe(0)
    const lines = ['text mom I am late', 'Text  mom I am LATE', 'sms Bob'].map((instruction) =>
      JSON.stringify({ instruction, tools: ['send_sms'] }),
    )
    await writeFile(examples, `${lines.join('\n')}\n`)
    const three = await runCli(['index', toolFile, '--index-dir', indexDir, '--examples', examples])
    expect(three.stderr).toContain(
      `Read 3 usage examples from ${examples} (2 kept: 1 duplicate removed)\n`,
    )
    expect(three.code).toBe(0)
  })

  it('reads an examples file whose records carry an id, as toolsel train --examples does', async () => {
    const { toolFile, examples, indexDir } = await toolAndExamples('train.jsonl', {
      id: 'q1',
      instruction: 'text mom I am late',
      tools: ['send_sms'],
    })
    // Before: exit 2, 'train.jsonl line 1: record: Unrecognized key: "id"', while the warning of
    // `toolsel train` on that very file says to give few examples to `toolsel index --examples`.
    const run = await runCli(['index', toolFile, '--index-dir', indexDir, '--examples', examples])
    expect(run.stderr).toContain(`Read 1 usage example from ${examples} (1 kept`)
    expect(run.code).toBe(0)
    const saved = await readFile(join(indexDir, 'tools', 'examples.jsonl'), 'utf8')
    expect(
      saved
        .trim()
        .split('\n')
        .map((line) => JSON.parse(line)),
    ).toEqual([{ instruction: 'text mom I am late', tools: ['send_sms'] }])
    // Another key is still refused, naming it.
    await writeFile(
      examples,
      `${JSON.stringify({ instruction: 'x', tools: ['send_sms'], why: 1 })}\n`,
    )
    const other = await runCli(['index', toolFile, '--index-dir', indexDir, '--examples', examples])
    expect(other.stderr).toContain('Unrecognized key: "why"')
    expect(other.code).toBe(2)
  })
})

describe('toolsel select over a library with usage examples', () => {
  it('says when the tools come from the usage examples, not from the steps', async () => {
    const { toolFile, examples, indexDir } = await toolAndExamples('examples.jsonl', {
      instruction: 'holler at the crew',
      tools: ['send_sms'],
    })
    const index = await runCli([
      'index',
      toolFile,
      '--name',
      'crew',
      '--index-dir',
      indexDir,
      '--examples',
      examples,
    ])
    expect(index.code, index.stderr).toBe(0)
    const args = ['select', 'holler at the crew', '--library', 'crew', '--index-dir', indexDir]
    const json = JSON.parse((await runCli([...args, '--json'])).stdout)
    // The step retrieves nothing ("holler" and "crew" are no word of the tool); the example does.
    expect(json.steps[0].candidates).toEqual([])
    expect(json.examples).toMatchObject({ similarity: 1, applied: true })
    const select = await runCli(args)
    expect(select.code).toBe(0)
    expect(select.stdout).toContain('Tools: send_sms\n')
    expect(select.stdout).toContain(
      "(from the library's usage examples: the nearest, similarity 1.00, not the steps' selections)",
    )
    // A request the examples do not answer prints no such line.
    const plain = await runCli(['select', 'send an SMS text message', ...args.slice(2)])
    expect(plain.stdout).toContain('Tools: send_sms\n')
    expect(plain.stdout).not.toContain('usage examples')
  }, 60_000)
})
