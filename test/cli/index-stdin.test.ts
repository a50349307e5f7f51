/**
 * `toolsel index -`: the tool file read from stdin (`curl … | toolsel index - --name api`), as a
 * file is: the format detected from its text (or --format), library.maxFileBytes at most. Was
 * refused: `Cannot read tool path "-"` (exit 2).
 */
import { spawn } from 'node:child_process'
import { existsSync } from 'node:fs'
import { mkdtemp, readdir, readFile } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { Readable } from 'node:stream'
import { describe, expect, it } from 'vitest'
import { MAX_TEXT_CHARS } from '../../src/read-text-file.ts'
import { ROOT } from '../helpers/start-serve.ts'
import { runCli } from './run-cli.ts'

const TOOLS = [
  {
    type: 'function',
    function: {
      name: 'send_sms',
      description: 'Send an SMS text message to a phone number',
      parameters: { type: 'object', properties: { to: { type: 'string' } } },
    },
  },
  {
    type: 'function',
    function: {
      name: 'get_weather',
      description: 'Get the weather forecast for a city',
      parameters: { type: 'object', properties: { city: { type: 'string' } } },
    },
  },
]

/** `toolsel index <args>` as a child process, `input` written to its stdin through a real pipe. */
async function indexThroughPipe(args: string[], input: string) {
  const child = spawn(process.execPath, ['bin/toolsel.mjs', 'index', ...args], {
    cwd: ROOT,
    env: { ...process.env, TOOLSEL_LIBRARY: '' },
    stdio: ['pipe', 'pipe', 'pipe'],
  })
  let stdout = ''
  let stderr = ''
  child.stdout.on('data', (chunk: Buffer) => (stdout += chunk.toString()))
  child.stderr.on('data', (chunk: Buffer) => (stderr += chunk.toString()))
  child.stdin.end(input)
  const code = await new Promise((resolve) => child.once('exit', resolve))
  return { code, stdout, stderr }
}

/**
 * `bytes` spaces in 8 MiB chunks of one buffer, as a pipe delivers them: the reader's copy is the
 * only one of the whole (one 512 MiB buffer filled here and copied by the reader was two).
 */
async function* spaces(bytes: number): AsyncGenerator<Buffer> {
  const chunk = Buffer.alloc(8 * 1024 * 1024, ' ')
  for (let left = bytes; left > 0; left -= chunk.length)
    yield left >= chunk.length ? chunk : chunk.subarray(0, left)
}

describe('toolsel index - (tools from stdin)', () => {
  it('indexes OpenAI tools piped to it, as the same file would be', async () => {
    const indexDir = await mkdtemp(join(tmpdir(), 'toolsel-index-stdin-'))
    const piped = await indexThroughPipe(
      ['-', '--name', 'piped', '--index-dir', indexDir],
      JSON.stringify(TOOLS),
    )
    expect(piped.code, piped.stderr).toBe(0)
    expect(piped.stderr).toContain('Imported 2 tools (openai) from stdin')
    const manifest = JSON.parse(await readFile(join(indexDir, 'piped', 'manifest.json'), 'utf8'))
    expect(manifest.source).toEqual({ format: 'openai' })
    const select = await runCli(
      ['select', 'text Ann that I am late', '--json', '--library', 'piped'],
      { TOOLSEL_INDEX_DIR: indexDir },
    )
    expect(select.code, select.stderr).toBe(0)
    expect(JSON.parse(select.stdout).tools.map((tool: { id: string }) => tool.id)).toContain(
      'send_sms',
    )
  }, 120_000)

  it('calls the input "stdin" in errors and source.file; the namespace is still the library name', async () => {
    const indexDir = await mkdtemp(join(tmpdir(), 'toolsel-index-stdin-named-'))
    // Was "api.json: line 2: …" and source.file "weather.json": an upload's name for the text.
    const broken = await indexThroughPipe(
      ['-', '--name', 'api', '--index-dir', indexDir],
      '{"name":"a","description":"x"}\n{bad\n',
    )
    expect(broken.code).toBe(1)
    expect(broken.stderr).toMatch(
      /^error \[IMPORT_FAILED\]: stdin: line 2: invalid JSON at column 2/,
    )
    const mcp = await indexThroughPipe(
      ['-', '--name', 'weather', '--index-dir', indexDir],
      JSON.stringify({
        tools: [
          {
            name: 'get_forecast',
            description: 'Get the weather forecast for a city',
            inputSchema: { type: 'object' },
          },
        ],
      }),
    )
    expect(mcp.code, mcp.stderr).toBe(0)
    const [tool] = (await readFile(join(indexDir, 'weather', 'tools.jsonl'), 'utf8'))
      .trim()
      .split('\n')
      .map((line) => JSON.parse(line))
    expect(tool).toMatchObject({
      id: 'weather.get_forecast',
      namespace: 'weather',
      source: { format: 'mcp', file: 'stdin', record: 0 },
    })
  }, 120_000)

  it('refuses stdin without --name, past --max-file-bytes, not UTF-8 or past one string (exit 2), nothing written', async () => {
    const indexDir = await mkdtemp(join(tmpdir(), 'toolsel-index-stdin-refused-'))
    const text = JSON.stringify(TOOLS)
    const unnamed = await runCli(['index', '-', '--index-dir', indexDir], {}, Readable.from([text]))
    expect(unnamed).toMatchObject({
      code: 2,
      stderr:
        'error [INVALID_INPUT]: toolsel index - (tools from stdin) needs --name <library>. See: toolsel index --help\n',
    })
    const big = await runCli(
      ['index', '-', '--name', 'big', '--index-dir', indexDir, '--max-file-bytes', '100'],
      {},
      Readable.from([text]),
    )
    expect(big.code).toBe(2)
    expect(big.stderr).toBe(
      'error [INVALID_INPUT]: The tool file from stdin is larger than 100 bytes; nothing past that was read (library.maxFileBytes, env TOOLSEL_MAX_FILE_BYTES, or --max-file-bytes <n> raises the limit)\n',
    )
    const latin1 = await runCli(
      ['index', '-', '--name', 'latin1', '--index-dir', indexDir],
      {},
      Readable.from([Buffer.from(text.replace('Send', 'Envoy\u00e9'), 'latin1')]),
    )
    expect(latin1.code).toBe(2)
    // Where, as the same bytes in a file are placed (`at byte N (line L)`).
    expect(latin1.stderr).toBe(
      `error [INVALID_INPUT]: The tool file from stdin is not UTF-8 text at byte ${text.indexOf('Send') + 5} (line 1): send it as UTF-8\n`,
    )
    // More characters than one string holds, within a raised limit: said "not UTF-8 text" before.
    const huge = await runCli(
      [
        'index',
        '-',
        '--name',
        'huge',
        '--index-dir',
        indexDir,
        '--max-file-bytes',
        String(2 ** 30),
      ],
      {},
      spaces(MAX_TEXT_CHARS + 1),
    )
    expect(huge.code).toBe(2)
    expect(huge.stderr).toBe(
      `error [INVALID_INPUT]: The tool file from stdin is too large to read as one text: it holds ${(MAX_TEXT_CHARS + 1).toLocaleString('en-US')} characters, more than one string holds (${MAX_TEXT_CHARS.toLocaleString('en-US')})\n`,
    )
    expect(
      existsSync(indexDir) ? (await readdir(indexDir)).filter((n) => !n.startsWith('.')) : [],
    ).toEqual([])
  }, 60_000)
})
