import { mkdir, mkdtemp, rm, writeFile } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { join, resolve } from 'node:path'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import {
  IMPORT_FORMATS,
  importToolsFromFile,
  importTools,
  importToolsFromPath,
  importToolsFromText,
  type ImportFormat,
} from '../../../src/library/importers/index.ts'
import { ToolLibrary } from '../../../src/library/tool-library.ts'
import { expectToolselError, expectToolselErrorAsync } from './expect-toolsel-error.ts'

const FIXTURES = resolve(import.meta.dirname, '../../fixtures/importers')
const fixture = (name: string) => join(FIXTURES, name)

describe('importToolsFromFile errors', () => {
  it('names the file, the record and the field of a wrongly typed value', async () => {
    const error = await expectToolselErrorAsync(
      () => importToolsFromFile(fixture('openai-tools.json')),
      'IMPORT_FAILED',
      'openai-tools.json: record 3: field "function.name": expected a non-empty string, got 42',
    )
    expect(error.details).toMatchObject({ record: 3, field: 'function.name' })
    expect(String(error.details.file)).toMatch(/openai-tools\.json$/)
  })

  it('reports malformed JSON with its line and column', async () => {
    const error = await expectToolselErrorAsync(
      () => importToolsFromFile(fixture('malformed.json')),
      'IMPORT_FAILED',
      'malformed.json: invalid JSON at line 3, column 27: unexpected "}", expected a property name',
    )
    expect(error.cause).toBeInstanceOf(SyntaxError)
  })

  it('reports a malformed JSON Lines record by its 1-based line, counting blank lines', async () => {
    const error = await expectToolselErrorAsync(
      () => importToolsFromFile(fixture('malformed-line.jsonl')),
      'IMPORT_FAILED',
      'malformed-line.jsonl: line 3: invalid JSON at column 29: unexpected end of input',
    )
    expect(error.details).toMatchObject({ record: 1, line: 3 })
  })

  it('rejects an empty file', async () => {
    await expectToolselErrorAsync(
      () => importToolsFromFile(fixture('empty.json')),
      'IMPORT_FAILED',
      'empty.json: the file is empty',
    )
  })

  it('rejects duplicate ids naming both records', async () => {
    const error = await expectToolselErrorAsync(
      () => importToolsFromFile(fixture('duplicate-ids.jsonl')),
      'DUPLICATE_TOOL_ID',
      'duplicate-ids.jsonl: tool id "weather.get" appears twice (line 1 and line 3)',
    )
    expect(error.details).toMatchObject({ id: 'weather.get', records: [0, 2] })
  })

  it('fails with INVALID_INPUT when the file cannot be read', async () => {
    // Was IMPORT_FAILED (exit 1) while a missing --examples or benchmark file is INVALID_INPUT
    // (exit 2): a path that names no readable file is input refused, whatever the file is for.
    const error = await expectToolselErrorAsync(
      () => importToolsFromFile(fixture('no-such-file.json')),
      'INVALID_INPUT',
      'Cannot read tool file',
      'no-such-file.json',
    )
    expect((error.cause as NodeJS.ErrnoException).code).toBe('ENOENT')
    // In words, not Node's "ENOENT: no such file or directory, open '<the path again>'".
    expect(error.message).toBe(
      `Cannot read tool file "${fixture('no-such-file.json')}": no such file or directory`,
    )
    const directory = await expectToolselErrorAsync(
      () => importToolsFromFile(fixture('.')),
      'INVALID_INPUT',
    )
    expect(directory.message).toMatch(/: it is a directory; name a file$/)
  })
})

describe('importToolsFromText', () => {
  it('rejects an empty tool list, whatever the wrapper', () => {
    expectToolselError(
      () => importToolsFromText('[]'),
      'IMPORT_FAILED',
      '<input>: the tool list is empty',
    )
    expectToolselError(
      () => importToolsFromText('{"tools": []}', { fileName: 'x.json' }),
      'IMPORT_FAILED',
      'x.json: the tool list is empty',
    )
    expectToolselError(
      () => importToolsFromText('{"nodes": []}', { fileName: 'tool_desc.json' }),
      'IMPORT_FAILED',
      'tool_desc.json: no tools found in this taskbench file',
    )
  })

  it('says why a file of skipped records has no tools', () => {
    expectToolselError(
      () =>
        importToolsFromText('[{"type": "web_search"}, {"type": "file_search"}]', {
          fileName: 'builtins.json',
          format: 'openai',
        }),
      'IMPORT_FAILED',
      'builtins.json: no tools found in this openai file (2 warning(s), the first: record 0: skipped a built-in "web_search" tool (only functions are imported)); a library needs at least one',
    )
    // The first warning as it was worded, not cut out of the file-prefixed one: also for text
    // without a file name and for a warning about the document as a whole (no record).
    expectToolselError(
      () => importToolsFromText('[{"type": "web_search"}]', { format: 'openai' }),
      'IMPORT_FAILED',
      '<input>: no tools found in this openai file (1 warning(s), the first: record 0: skipped a built-in',
    )
    expectToolselError(
      () =>
        importToolsFromText(
          '{"jsonrpc": "2.0", "id": 1, "result": {"tools": [], "nextCursor": "2"}}',
          { fileName: 'a: b.json', format: 'mcp' },
        ),
      'IMPORT_FAILED',
      'a: b.json: no tools found in this mcp file (1 warning(s), the first: ',
    )
  })

  it('says which format a file looks like when the one it was told does not fit', async () => {
    const openai = JSON.stringify([
      { type: 'function', function: { name: 'get_weather', parameters: { type: 'object' } } },
    ])
    const error = expectToolselError(
      () => importToolsFromText(openai, { fileName: 'tools.json', format: 'mcp' }),
      'IMPORT_FAILED',
      'tools.json: record 0: field "name": expected a non-empty string',
    )
    expect(error.message).toMatch(
      /\. The file looks like openai, not mcp: import it as openai \(or leave the format to detection\)\.$/,
    )
    expect(error.details).toMatchObject({ file: 'tools.json', record: 0, detectedFormat: 'openai' })
    // The asynchronous path (uploads, files) says it too.
    await expect(
      importTools(openai, { fileName: 'tools.json', format: 'gorilla' }),
    ).rejects.toThrow('The file looks like openai, not gorilla: import it as openai')
    // An import that goes through with warnings says it too, once, after them.
    const anthropic = JSON.stringify([
      { name: 'get_weather', description: 'Weather', input_schema: { type: 'object' } },
    ])
    const warned = importToolsFromText(anthropic, { fileName: 'a.json', format: 'functions' })
    expect(warned.warnings.at(-1)).toBe(
      'a.json: the file looks like anthropic, not functions: import it as anthropic (or leave the format to detection)',
    )
    expect(importToolsFromText(anthropic, { fileName: 'a.json' }).warnings).toEqual([])
    // A file that fits no format at all keeps its own error.
    expectToolselError(
      () => importToolsFromText('[{"foo": 1}]', { fileName: 'x.json', format: 'openai' }),
      'IMPORT_FAILED',
      'x.json: record 0',
    )
  })

  it('names OpenAI tools imported as Anthropic ones, instead of skipping them as server tools', () => {
    const openai = JSON.stringify([
      { type: 'function', function: { name: 'get_weather', parameters: { type: 'object' } } },
    ])
    const error = expectToolselError(
      () => importToolsFromText(openai, { fileName: 'tools.json', format: 'anthropic' }),
      'IMPORT_FAILED',
      'tools.json: record 0: field "type": "function" is an OpenAI tool, not an Anthropic one: import the file as openai',
    )
    // The importer names the format itself, as a detail: it is not said a second time.
    expect(error.details).toMatchObject({ record: 0, field: 'type', suggestedFormat: 'openai' })
    expect(error.message.match(/import the file as openai|import it as openai/g)).toHaveLength(1)
    expect(importToolsFromText(openai, { fileName: 'tools.json' }).format).toBe('openai')
  })

  it('rejects a format name it does not know', () => {
    expectToolselError(
      () => importToolsFromText('[]', { format: 'yaml' as ImportFormat }),
      'UNKNOWN_FORMAT',
      'Unknown tool format "yaml"; use one of canonical, functions, openai, anthropic, mcp, openapi',
    )
  })

  it('uses the given format instead of detecting one', () => {
    const text = JSON.stringify([{ id: 'a', name: 'a', type: 'function' }])
    expectToolselError(() => importToolsFromText(text), 'UNKNOWN_FORMAT', 'more than one format')
    const result = importToolsFromText(JSON.stringify([{ type: 'function', name: 'a' }]), {
      format: 'openai',
    })
    expect(result.tools.map((tool) => tool.id)).toEqual(['a'])
  })

  it('produces tools a ToolLibrary accepts, and reports the file', () => {
    const result = importToolsFromText('{"id": "a", "name": "a"}\n{"id": "b", "name": "b"}\n', {
      fileName: 'tools.jsonl',
    })
    expect(new ToolLibrary('demo', result.tools).size).toBe(2)
    expect(result.files).toEqual([{ file: 'tools.jsonl', format: 'canonical', tools: 2 }])
  })

  it('describes every format for help texts', () => {
    for (const info of Object.values(IMPORT_FORMATS)) {
      expect(info.description.length).toBeGreaterThan(10)
      expect(info.fileKinds.length).toBeGreaterThan(0)
    }
  })
})

describe('importToolsFromPath', () => {
  let directory: string
  const mcpList = (...names: string[]) =>
    JSON.stringify({ tools: names.map((name) => ({ name, inputSchema: { type: 'object' } })) })

  beforeAll(async () => {
    directory = await mkdtemp(join(tmpdir(), 'toolsel-importers-'))
  })
  afterAll(async () => {
    await rm(directory, { recursive: true, force: true })
  })

  async function makeDirectory(name: string, files: Record<string, string>): Promise<string> {
    const path = join(directory, name)
    await rm(path, { recursive: true, force: true })
    await mkdir(path)
    for (const [file, text] of Object.entries(files)) await writeFile(join(path, file), text)
    return path
  }

  it('imports every tool file of a directory in name order, MCP files namespaced by name', async () => {
    const path = await makeDirectory('servers', {
      'slack.json': mcpList('post_message'),
      'github.json': mcpList('create_issue', 'search'),
      'extra.jsonl': '{"id": "local.echo", "name": "echo"}\n',
      'notes.txt': 'not a tool file',
      '.hidden.json': 'not even JSON',
    })
    const result = await importToolsFromPath(path)
    expect(result.tools.map((tool) => tool.id)).toEqual([
      'local.echo',
      'github.create_issue',
      'github.search',
      'slack.post_message',
    ])
    expect(result.files.map(({ format, tools }) => [format, tools])).toEqual([
      ['canonical', 1],
      ['mcp', 2],
      ['mcp', 1],
    ])
    expect(result.format).toBe('canonical')
  })

  it('rejects an id defined in two files, naming both', async () => {
    const path = await makeDirectory('clash', {
      'a.jsonl': '{"id": "x", "name": "x"}\n',
      'b.json': '[{"id": "y", "name": "y"}, {"id": "x", "name": "x"}]',
    })
    await expectToolselErrorAsync(
      () => importToolsFromPath(path),
      'DUPLICATE_TOOL_ID',
      'Tool id "x" appears twice',
      'a.jsonl line 1',
      'b.json record 1',
    )
  })

  it('fails for a directory without tool files, and for a namespace on a directory', async () => {
    const empty = await makeDirectory('empty', { 'readme.md': '# nothing' })
    await expectToolselErrorAsync(
      () => importToolsFromPath(empty),
      'IMPORT_FAILED',
      'no tool files',
    )
    await expectToolselErrorAsync(
      () => importToolsFromPath(empty, { namespace: 'x' }),
      'INVALID_INPUT',
      'namespace option applies to one file',
    )
  })

  it('imports a single file like importToolsFromFile', async () => {
    const path = await makeDirectory('single', { 'github.json': mcpList('search') })
    const result = await importToolsFromPath(join(path, 'github.json'))
    expect(result.tools[0].id).toBe('github.search')
  })

  it('fails for a path that does not exist', async () => {
    await expectToolselErrorAsync(
      () => importToolsFromPath(join(directory, 'missing')),
      'INVALID_INPUT',
      'Cannot read tool path',
    )
  })
})
