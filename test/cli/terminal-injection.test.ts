/**
 * Terminal injection through the CLI's human output: a tool library (a JSON tools file, an
 * OpenAPI spec) or a service (`libraries --server`) supplies text with escape sequences (OSC 52
 * clipboard writes, ESC[2J, a bare \r that overwrites the line): none reaches the terminal raw,
 * and `--json` keeps every string exact.
 */
import { createServer } from 'node:http'
import type { AddressInfo } from 'node:net'
import { execFile } from 'node:child_process'
import { mkdir, mkdtemp, writeFile } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { promisify } from 'node:util'
import { describe, expect, it } from 'vitest'
import { runCli } from './run-cli.ts'
import { createLogger } from '../../src/log.ts'
import { jsonText, terminalLine, terminalText } from '../../src/terminal-text.ts'
import { ROOT } from '../helpers/start-serve.ts'
import { toolselHere } from '../helpers/toolsel-here.ts'

const runChild = promisify(execFile)

/** ESC, BEL, CR, the single-byte CSI (U+009B) and a bidi override. */
const RAW_CONTROL = /[\u0007\u000d\u001b\u009b\u202e]/
const EVIL = 'evil\u001b]52;c;ZXZpbA==\u0007\r\u001b[2K\u009b31m\u202e'

describe('terminalText, terminalLine, jsonText', () => {
  it('write every control character as a visible escape; newlines stay in terminalText only', () => {
    expect(terminalText('a\u001b[2J\nb\tc\r\u0007\u009b\u202e')).toBe(
      'a\\x1b[2J\nb\tc\\x0d\\x07\\x9b\\u202e',
    )
    expect(terminalLine('a\nb\tc')).toBe('a\\x0ab\\x09c')
    expect(terminalText('plain text, ünïcode → ok')).toBe('plain text, ünïcode → ok')
  })

  it('jsonText is the same JSON value with nothing a terminal acts on', () => {
    const json = JSON.stringify({ name: EVIL })
    expect(jsonText(json)).not.toMatch(RAW_CONTROL)
    expect(JSON.parse(jsonText(json))).toEqual({ name: EVIL })
  })

  it("the logger's lines and records carry no raw control character", () => {
    const lines: string[] = []
    const logger = createLogger('debug', (line) => lines.push(line))
    logger.warn(`tool ${EVIL}`, { id: EVIL })
    logger.record('info', { id: EVIL })
    for (const line of lines) expect(line).not.toMatch(RAW_CONTROL)
    expect(JSON.parse(lines[1]).id).toBe(EVIL)
  })
})

describe('the CLI prints library- and server-supplied text without escape sequences', () => {
  it('select: tool ids from a JSON tools file; --json keeps them exact', async () => {
    const dir = await mkdtemp(join(tmpdir(), 'toolsel-terminal-'))
    const file = join(dir, 'tools.json')
    await writeFile(file, JSON.stringify([{ name: EVIL, description: 'Send an SMS text message' }]))
    const human = await runCli(['select', 'send an sms text message', '--library', file])
    expect(human.code).toBe(0)
    expect(human.stdout).toContain('evil\\x1b]52;c;ZXZpbA==\\x07\\x0d\\x1b[2K')
    expect(human.stdout + human.stderr).not.toMatch(RAW_CONTROL)
    const json = await runCli(['select', 'send an sms text message', '--library', file, '--json'])
    expect(JSON.parse(json.stdout).tools[0].id).toBe(EVIL)
    expect(json.stdout).not.toMatch(RAW_CONTROL)
  }, 60_000)

  it('an error message quoting a tool id (DUPLICATE_TOOL_ID)', async () => {
    const dir = await mkdtemp(join(tmpdir(), 'toolsel-terminal-'))
    const file = join(dir, 'tools.json')
    const tool = { name: EVIL, description: 'Send an SMS' }
    await writeFile(file, JSON.stringify([tool, tool]))
    const { code, stderr } = await runCli(['select', 'send an sms', '--library', file])
    expect(code).toBe(1)
    expect(stderr).toContain('error [DUPLICATE_TOOL_ID]')
    // The message quotes the id escaped (shownName), as an HTTP body carries it.
    expect(stderr).toContain(
      'tool id "evil\\u001b]52;c;ZXZpbA==\\u0007\\r\\u001b[2K\\u009b31m\\u202e"',
    )
    expect(stderr).not.toMatch(RAW_CONTROL)
  }, 60_000)

  it('select --json and --tool-format: descriptions with escapes stay exact and inert', async () => {
    const dir = await mkdtemp(join(tmpdir(), 'toolsel-terminal-'))
    const file = join(dir, 'tools.json')
    const description = `Send an SMS text message ${EVIL}`
    await writeFile(file, JSON.stringify([{ name: 'send_sms', description }]))
    for (const flags of [
      ['--json', '--explain'],
      ['--tool-format', 'openai'],
    ]) {
      const { code, stdout } = await runCli([
        'select',
        `send an sms text message ${EVIL}`,
        '--library',
        file,
        ...flags,
      ])
      expect(code).toBe(0)
      // Before: the C1 CSI (U+009B) and the bidi override went to the terminal raw.
      expect(stdout).not.toMatch(RAW_CONTROL)
      const answer = JSON.parse(stdout)
      if (flags[0] === '--json') expect(answer.steps[0].text).toContain('\u009b31m\u202e')
      else expect(answer.tools[0].function.description).toBe(description)
    }
  }, 60_000)

  it('index: an OpenAPI spec whose operationId and parameter names carry escapes', async () => {
    const dir = await mkdtemp(join(tmpdir(), 'toolsel-terminal-'))
    const file = join(dir, 'spec.json')
    const spec = {
      openapi: '3.0.0',
      info: { title: EVIL, version: '1' },
      paths: {
        '/send': {
          post: {
            operationId: 'send_sms',
            summary: `Send an SMS${EVIL}`,
            parameters: [{ name: `to${EVIL}`, in: 'query', schema: { type: `strang${EVIL}` } }],
          },
        },
      },
    }
    await writeFile(file, JSON.stringify(spec))
    const { code, stdout, stderr } = await runCli(['index', file, '--index-dir', join(dir, 'idx')])
    expect(code).toBe(0)
    expect(stderr).toContain('Parameters rewritten into JSON Schema')
    expect(stderr).toContain('\\x1b]52;c;')
    expect(stdout + stderr).not.toMatch(RAW_CONTROL)
  }, 60_000)

  it('index: a tool named with escapes is imported, one warning naming it escaped', async () => {
    const dir = await mkdtemp(join(tmpdir(), 'toolsel-terminal-'))
    const file = join(dir, 'tools.json')
    await writeFile(file, JSON.stringify([{ name: EVIL, description: 'Send an SMS text message' }]))
    const { code, stdout, stderr } = await runCli(['index', file, '--index-dir', join(dir, 'idx')])
    // Before: error [IMPORT_FAILED] ... holds U+001B at 4, nothing indexed.
    expect(code).toBe(0)
    expect(stderr).toContain('Imported 1 tool ')
    expect(stderr).toContain(
      'tools.json: 1 tool(s) have an id or name holding a control character, bidi override or isolate, or lone surrogate',
    )
    expect(stderr).toContain(
      '"evil\\u001b]52;c;ZXZpbA==\\u0007\\r\\u001b[2K\\u009b31m\\u202e": name holds U+001B at 4, id holds U+001B at 4',
    )
    expect(stdout + stderr).not.toMatch(RAW_CONTROL)
  }, 60_000)

  it('libraries list|show --server: a service answering names and fields with escapes', async () => {
    const library = {
      name: EVIL,
      toolCount: 1,
      contentHash: EVIL,
      createdAt: EVIL,
      retrievers: [EVIL],
      defaultRetriever: EVIL,
      examples: { count: 0 },
      source: { path: EVIL, format: EVIL },
    }
    const server = createServer((request, response) => {
      response.writeHead(200, { 'content-type': 'application/json' })
      response.end(
        JSON.stringify(request.url === '/v1/libraries' ? { libraries: [library] } : library),
      )
    })
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve))
    const url = `http://127.0.0.1:${(server.address() as AddressInfo).port}`
    try {
      for (const action of [['list'], ['show', 'demo']]) {
        const human = await runCli(['libraries', ...action, '--server', url])
        expect(human.code).toBe(0)
        expect(human.stdout).toContain('evil\\x1b]52;c;')
        expect(human.stdout + human.stderr).not.toMatch(RAW_CONTROL)
        const json = await runCli(['libraries', ...action, '--server', url, '--json'])
        const parsed = JSON.parse(json.stdout)
        expect((parsed.libraries?.[0] ?? parsed).name).toBe(EVIL)
      }
    } finally {
      server.closeAllConnections()
      await new Promise((resolve) => server.close(resolve))
    }
  })
})

describe("an index directory's entry left alone, in the commands that read the directory", () => {
  it("is a Warning: line of the CLI, once, terminal-safe; not Node's process warning", async () => {
    const work = await mkdtemp(join(tmpdir(), 'toolsel-warn-'))
    const indexDir = join(work, 'indexes')
    const tools = join(work, 'tools.json')
    await writeFile(
      tools,
      JSON.stringify([{ name: 'track_parcel', description: 'Track a parcel.' }]),
    )
    const cli = (...argv: string[]) =>
      runChild(process.execPath, ['bin/toolsel.mjs', ...argv, '--index-dir', indexDir], {
        cwd: ROOT,
        env: { ...process.env, TOOLSEL_LIBRARY: '', NODE_OPTIONS: '' },
        timeout: 60_000,
      })
    // What the commands read, made in this process (a child's start is not what is tested here).
    await toolselHere(indexDir, 'index', tools, '--name', 'parcels')
    const unknown = `.tmp-parcels${EVIL}`
    await mkdir(join(indexDir, unknown))
    const escaped = terminalLine(join(indexDir, unknown))
    for (const argv of [
      ['libraries', 'list'],
      ['select', 'track my parcel', '--library', 'parcels'],
      ['libraries', 'show', 'parcels'],
      ['snapshot', join(work, 'snapshot')],
    ]) {
      const { stderr } = await cli(...argv)
      expect(stderr, argv.join(' ')).not.toMatch(RAW_CONTROL)
      expect(stderr, argv.join(' ')).not.toMatch(/\(node:\d+\)|ToolselWarning|--trace-warnings/)
      const warnings = stderr.split('\n').filter((line) => line.includes('looks like another'))
      // `select` of a saved index reads that index, not the directory's list: nothing to say.
      if (argv[0] === 'select') expect(warnings).toEqual([])
      else
        expect(warnings, argv.join(' ')).toEqual([
          `Warning: ${escaped} looks like another toolsel version's work directory or lock (a name this version does not know): left alone. If no other toolsel version writes ${indexDir}, remove it by hand.`,
        ])
    }
  }, 120_000)
})
