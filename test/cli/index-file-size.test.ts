/**
 * `toolsel index` reads at most --max-file-bytes of a tool file (default 256 MiB), like the
 * server bounds an upload: a larger file, or a device that never ends, is refused with a clear
 * error after that many bytes, and nothing is written.
 */
import { existsSync } from 'node:fs'
import { mkdir, mkdtemp, open, readdir, writeFile } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { describe, expect, it } from 'vitest'
import { DEFAULT_MAX_TOOL_FILE_BYTES } from '../../src/library/importers/import-tools.ts'
import { MAX_TEXT_CHARS } from '../../src/read-text-file.ts'
import { runCli } from './run-cli.ts'
import { main } from '../../src/main.ts'
import { defaultConfig } from '../../src/config/schema.ts'

const MIB = 1024 * 1024

/**
 * A tool file of about 2.4 MB (over 2 MiB): `name` and 29 more tools, each description 80,000
 * characters, under MAX_TOOL_DESCRIPTION_CHARS (one 2 MiB description is refused by that now).
 */
function bigToolFile(name: string): string {
  return JSON.stringify(
    Array.from({ length: 30 }, (_, i) => ({
      name: i === 0 ? name : `pad_${i}`,
      description: 'x'.repeat(80_000),
    })),
  )
}

async function indexDirEntries(dir: string): Promise<string[]> {
  return existsSync(dir) ? readdir(dir) : []
}

/** `toolsel index <file> --index-dir <indexDir> --max-file-bytes <bytes>`. */
function indexUpTo(file: string, indexDir: string, bytes: number) {
  return runCli(['index', file, '--index-dir', indexDir, '--max-file-bytes', String(bytes)])
}

describe('toolsel index --max-file-bytes', () => {
  it('refuses a file past the limit, naming it and the flag; nothing written', async () => {
    const dir = await mkdtemp(join(tmpdir(), 'toolsel-file-size-'))
    const file = join(dir, 'tools.json')
    await writeFile(file, bigToolFile('a'))
    const indexDir = join(dir, 'indexes')
    const { code, stderr } = await indexUpTo(file, indexDir, MIB)
    expect(code).toBe(1)
    expect(stderr).toContain(
      `error [IMPORT_FAILED]: Tool file "${file}" is larger than ${MIB} bytes`,
    )
    expect(stderr).toContain('--max-file-bytes')
    expect(await indexDirEntries(indexDir)).toEqual([])
    // Within a raised limit the same file is indexed.
    const raised = await indexUpTo(file, indexDir, 4 * MIB)
    expect(raised.code).toBe(0)
  }, 60_000)

  it('train and train-data take --max-file-bytes for the --library tool file', async () => {
    // Before: config and env only (`Unknown option "--max-file-bytes"`).
    const dir = await mkdtemp(join(tmpdir(), 'toolsel-file-size-'))
    const file = join(dir, 'tools.json')
    await writeFile(file, bigToolFile('a'))
    const examples = join(dir, 'examples.jsonl')
    await writeFile(examples, '{"instruction":"do a","tools":["a"]}\n')
    for (const argv of [
      ['train', '--out', join(dir, 'model.json')],
      ['train-data', 'selector', '--out', join(dir, 'data')],
    ]) {
      const { code, stderr } = await runCli([
        ...argv,
        '--examples',
        examples,
        '--library',
        file,
        '--max-file-bytes',
        String(MIB),
      ])
      expect(stderr).toContain(`Tool file "${file}" is larger than ${MIB} bytes`)
      expect(code).toBe(1)
    }
  }, 60_000)

  it.skipIf(!existsSync('/dev/zero'))(
    'refuses /dev/zero after the limit, not reading on',
    async () => {
      const dir = await mkdtemp(join(tmpdir(), 'toolsel-file-size-'))
      const indexDir = join(dir, 'indexes')
      const { code, stderr } = await runCli([
        'index',
        '/dev/zero',
        '--format',
        'openai',
        '--name',
        'zero',
        '--index-dir',
        indexDir,
        '--max-file-bytes',
        String(MIB),
      ])
      expect(code).toBe(1)
      expect(stderr).toContain(`is larger than ${MIB} bytes`)
      expect(await indexDirEntries(indexDir)).toEqual([])
    },
  )

  it('the default (256 MiB) refuses a larger file by its size, unread; each file of a directory too', async () => {
    expect(DEFAULT_MAX_TOOL_FILE_BYTES).toBe(256 * MIB)
    const dir = await mkdtemp(join(tmpdir(), 'toolsel-file-size-'))
    const tools = join(dir, 'tools')
    await mkdir(tools)
    await writeFile(join(tools, 'a.json'), JSON.stringify([{ name: 'a', description: 'b' }]))
    // A sparse file: 300 MiB by its size, no disk used; reading it would take 300 MiB of memory.
    const handle = await open(join(tools, 'b.json'), 'w')
    await handle.truncate(300 * MIB)
    await handle.close()
    const indexDir = join(dir, 'indexes')
    for (const path of [join(tools, 'b.json'), tools]) {
      const { code, stderr } = await runCli(['index', path, '--index-dir', indexDir, '--name', 'x'])
      expect(code, path).toBe(1)
      expect(stderr).toContain(`b.json" is larger than ${DEFAULT_MAX_TOOL_FILE_BYTES} bytes`)
    }
    expect(await indexDirEntries(indexDir)).toEqual([])
  })

  it('a file of more characters than one string holds, within a raised limit: IMPORT_FAILED saying so, nothing written', async () => {
    // Before round 48: INVALID_INPUT "Cannot read tool file …: Cannot create a string longer
    // than 0x1fffffe8 characters" (exit 2), as if the file were missing.
    const dir = await mkdtemp(join(tmpdir(), 'toolsel-file-size-'))
    const file = join(dir, 'tools.json')
    // Sparse: MAX_TEXT_CHARS + 1 NUL bytes (valid UTF-8, one character each), no disk used.
    const handle = await open(file, 'w')
    await handle.truncate(MAX_TEXT_CHARS + 1)
    await handle.close()
    const indexDir = join(dir, 'indexes')
    const { code, stderr } = await indexUpTo(file, indexDir, 1024 * MIB)
    expect(code, stderr).toBe(1)
    expect(stderr).toContain(
      `error [IMPORT_FAILED]: Tool file "${file}" is too large to import as one file: it holds ${(MAX_TEXT_CHARS + 1).toLocaleString('en-US')} characters, more than one string holds (${MAX_TEXT_CHARS.toLocaleString('en-US')}). Split its tools into several files in a directory`,
    )
    expect(await indexDirEntries(indexDir)).toEqual([])
  }, 60_000)

  it('takes only a whole number of bytes above 0', async () => {
    for (const bad of ['0', '-1', '1.5', 'lots']) {
      const { code, stderr } = await runCli(['index', 'x.json', `--max-file-bytes=${bad}`])
      expect(code, bad).toBe(2)
      expect(stderr).toContain('--max-file-bytes expects')
    }
  })
})

describe('library.maxFileBytes: one limit for every command that reads tool files', () => {
  /** `toolsel <argv>` in process with `env` as its environment. */
  async function cli(argv: string[], env: Record<string, string> = {}) {
    const stderr: string[] = []
    const code = await main(argv, { stdout: () => {}, stderr: (text) => stderr.push(text), env })
    return { code, stderr: stderr.join('') }
  }

  it('the config key (or TOOLSEL_MAX_FILE_BYTES) bounds index, select, mcp, serve and bench --library; the flag overrides it; the error names both', async () => {
    expect(defaultConfig().library.maxFileBytes).toBe(DEFAULT_MAX_TOOL_FILE_BYTES)
    const dir = await mkdtemp(join(tmpdir(), 'toolsel-file-size-'))
    const file = join(dir, 'tools.json')
    await writeFile(file, bigToolFile('send_sms'))
    const config = join(dir, 'config.json')
    await writeFile(config, JSON.stringify({ library: { maxFileBytes: MIB } }))
    const indexDir = join(dir, 'indexes')
    const commands: Array<[string, string[]]> = [
      ['index', ['index', file, '--name', 'big']],
      ['select', ['select', 'send an sms', '--library', file]],
      ['serve', ['serve', '--port', '0', '--library', file]],
      ['bench', ['bench', '--suite', 'demo', '--library', file, '--limit', '1']],
    ]
    for (const [command, argv] of commands) {
      const args = command === 'bench' ? argv : [...argv, '--index-dir', indexDir]
      for (const [how, run] of [
        ['config file', () => cli([...args, '--config', config])],
        ['env', () => cli(args, { TOOLSEL_MAX_FILE_BYTES: String(MIB) })],
      ] as const) {
        const refused = await run()
        expect(refused.code, `${command}, ${how}: ${refused.stderr}`).toBe(1)
        expect(refused.stderr).toContain(`Tool file "${file}" is larger than ${MIB} bytes`)
        expect(refused.stderr).toContain(
          'library.maxFileBytes, env TOOLSEL_MAX_FILE_BYTES, or --max-file-bytes <n>',
        )
      }
    }
    // The flag over the config key: the file is read (select answers; index writes it).
    const raised = ['--config', config, '--max-file-bytes', String(4 * MIB)]
    const selected = await cli(['select', 'send an sms', '--library', file, ...raised])
    expect(selected.code, selected.stderr).toBe(0)
    expect((await cli(['index', file, '--index-dir', indexDir, ...raised])).code).toBe(0)
    // mcp reads the same key (its --library is loaded before it serves stdio).
    const mcp = await cli(['mcp', '--stdio', '--library', file, '--index-dir', indexDir], {
      TOOLSEL_MAX_FILE_BYTES: String(MIB),
    })
    expect(mcp.code, mcp.stderr).toBe(1)
    expect(mcp.stderr).toContain(`is larger than ${MIB} bytes`)
  }, 120_000)
})
