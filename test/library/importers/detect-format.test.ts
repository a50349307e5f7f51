import { describe, expect, it } from 'vitest'
import { detectFormat, IMPORT_FORMATS } from '../../../src/library/importers/index.ts'
import { dataPath, hasData } from '../../helpers/data-dir.ts'
import { readFileSync } from 'node:fs'
import { expectToolselError } from './expect-toolsel-error.ts'

const json = (value: unknown) => JSON.stringify(value)
const openaiTool = { type: 'function', function: { name: 'f', parameters: { type: 'object' } } }
const mcpTool = { name: 'f', inputSchema: { type: 'object' } }
const toolbenchRecord = { query_id: 1, query: 'q', api_list: [], 'relevant APIs': [] }
const corpusDocument = { _id: '0', title: '', text: 'category_name:Food, …', metadata: {} }
const gorillaRecord = { domain: 'd', framework: 'f', api_name: 'a', api_call: 'c()' }

describe('detectFormat', () => {
  it.each([
    ['a canonical array', json([{ id: 'a', name: 'a' }]), 'canonical'],
    ['canonical {tools}', json({ tools: [{ id: 'a', name: 'a' }] }), 'canonical'],
    ['an OpenAI array', json([openaiTool]), 'openai'],
    ['OpenAI {tools}', json({ tools: [openaiTool] }), 'openai'],
    ['OpenAI Responses-style tools', json([{ type: 'function', name: 'f' }]), 'openai'],
    ['an MCP tools/list result', json({ tools: [mcpTool] }), 'mcp'],
    [
      'an MCP JSON-RPC response',
      json({ jsonrpc: '2.0', id: 1, result: { tools: [mcpTool] } }),
      'mcp',
    ],
    ['a JSON-RPC error response', json({ jsonrpc: '2.0', id: 1, error: { message: 'x' } }), 'mcp'],
    ['a bare array of MCP tools', json([mcpTool]), 'mcp'],
    ['ToolBench query records', json([toolbenchRecord]), 'toolbench'],
    ['a BEIR corpus as JSON', json([corpusDocument]), 'beir-corpus'],
    ['Gorilla API records as JSON', json([gorillaRecord]), 'gorilla'],
    [
      'functions with a name only',
      json([{ name: 'get_weather' }, { name: 'send_sms' }]),
      'functions',
    ],
    ['a TaskBench tool graph', json({ nodes: [{ id: 'x', desc: 'y' }], links: [] }), 'taskbench'],
  ])('detects %s', (_name, text, format) => {
    expect(detectFormat(text)).toBe(format)
  })

  it('reads .jsonl files line by line and detects by the first record', () => {
    const lines = [json(corpusDocument), json({ ...corpusDocument, _id: '1' })].join('\n')
    expect(detectFormat(lines, 'corpus.jsonl')).toBe('beir-corpus')
    expect(detectFormat(json(gorillaRecord), 'torchhub_api.jsonl')).toBe('gorilla')
  })

  it('falls back to JSON Lines for a .json file whose lines are separate documents', () => {
    const lines = [json(toolbenchRecord), json(toolbenchRecord)].join('\n')
    expect(detectFormat(lines, 'queries.json')).toBe('toolbench')
  })

  it('takes .csv files as CRAFT, and CSV text with tool_id and tool columns without a name', () => {
    expect(detectFormat('anything', 'tools.csv')).toBe('craft')
    expect(detectFormat('\uFEFFquestion,tool_id,tool\nq,1,"def f():\n  pass"\n')).toBe('craft')
  })

  it('throws UNKNOWN_FORMAT naming the file, what it saw and the formats', () => {
    const error = expectToolselError(
      () => detectFormat(json({ hello: 'world' }), 'mystery.json'),
      'UNKNOWN_FORMAT',
      'mystery.json: cannot tell the tool format; saw a JSON object with keys "hello"',
      'Pass the format explicitly, one of canonical, functions, openai, anthropic, mcp, openapi, postman, toolbench, beir-corpus, gorilla, craft, taskbench',
    )
    // How to pass it, from the CLI and over HTTP (was only "Pass the format explicitly").
    expect(error.message).toMatch(
      /: toolsel index --format <format>, or \?format=<format> on an upload \(PUT \/v1\/libraries\/<name>\)\.$/,
    )
    for (const info of Object.values(IMPORT_FORMATS))
      expect(error.message).toContain(info.description)
  })

  it('throws UNKNOWN_FORMAT for records that fit no format or several', () => {
    expectToolselError(
      () => detectFormat(json([{ id: 1 }])),
      'UNKNOWN_FORMAT',
      '<input>: cannot tell the tool format; saw a JSON array whose first item has keys "id"',
    )
    expectToolselError(
      () => detectFormat(json([{ id: 'a', name: 'a', inputSchema: {} }])),
      'UNKNOWN_FORMAT',
      'fits more than one format (canonical, mcp)',
    )
    expectToolselError(
      () => detectFormat(json([{ name: 123, description: 'b' }])),
      'UNKNOWN_FORMAT',
      'first item has keys "name", "description"; its "name" is a number, not a string',
    )
    expectToolselError(() => detectFormat('[1, 2]'), 'UNKNOWN_FORMAT', 'first item is a number')
    expectToolselError(() => detectFormat('"tools"'), 'UNKNOWN_FORMAT', 'saw a JSON string')
    expectToolselError(
      () => detectFormat('query-id\tcorpus-id\tscore\n1\t2\t1\n', 'qrels.tsv'),
      'UNKNOWN_FORMAT',
      'qrels.tsv: cannot tell the tool format; saw text that is neither JSON',
    )
  })

  it('detects an OpenAI request whose tools start with built-ins (web_search_preview, mcp)', () => {
    // Before: UNKNOWN_FORMAT ("first tools item has keys type"); the importer skips built-ins.
    const flat = { type: 'function', name: 'get_weather', parameters: { type: 'object' } }
    const builtIns = [{ type: 'web_search_preview' }, { type: 'mcp', server_label: 'wiki' }]
    expect(detectFormat(json({ model: 'm', input: 'hi', tools: [...builtIns, flat] }))).toBe(
      'openai',
    )
    expect(detectFormat(json([...builtIns, openaiTool]))).toBe('openai')
    expectToolselError(() => detectFormat(json({ tools: builtIns })), 'UNKNOWN_FORMAT')
  })

  it('only lets canonical, openai and mcp tools be wrapped in {tools}', () => {
    expectToolselError(
      () => detectFormat(json({ tools: [gorillaRecord] })),
      'UNKNOWN_FORMAT',
      'first "tools" item has keys "domain"',
    )
  })

  it('fails with IMPORT_FAILED, not UNKNOWN_FORMAT, for malformed JSON and empty input', () => {
    expectToolselError(
      () => detectFormat('{"a": }', 'x.json'),
      'IMPORT_FAILED',
      'x.json: invalid JSON at line 1, column 7',
    )
    expectToolselError(() => detectFormat('\n\n'), 'IMPORT_FAILED', '<input>: the file is empty')
  })
})

const REAL_FILES: Array<[string, string]> = [
  ['toolbench/StableToolBench/solvable_queries/test_instruction/G1_instruction.json', 'toolbench'],
  ['toolbench/toolplanner/data/retrieval/G3_clear/test.json', 'toolbench'],
  ['toolbench/COLT/datasets/ToolBenchG3/corpus.jsonl', 'beir-corpus'],
  ['toollens/COLT/datasets/ToolLens/corpus.jsonl', 'beir-corpus'],
  ['gorilla/gorilla/data/api/torchhub_api.jsonl', 'gorilla'],
  ['craft/CRAFT/vqa/results/craft_tools/5_deduplicated_tool.csv', 'craft'],
  ['taskbench/JARVIS/taskbench/data_multimedia/tool_desc.json', 'taskbench'],
  ['taskbench/JARVIS/taskbench/data_multimedia/graph_desc.json', 'taskbench'],
]

describe.skipIf(!hasData())('detectFormat on the benchmark files (skipped: no shared/data)', () => {
  it.each(REAL_FILES)('detects %s as %s', (file, format) => {
    expect(detectFormat(readFileSync(dataPath(file), 'utf8'), dataPath(file))).toBe(format)
  })

  it('refuses data files that hold no tools, such as requests and qrels', () => {
    for (const file of [
      'taskbench/JARVIS/taskbench/data_huggingface/user_requests.json',
      'gorilla/gorilla/data/apibench/torchhub_train.json',
      'toolbench/COLT/datasets/ToolBenchG3/qrels/test.tsv',
    ]) {
      expectToolselError(
        () => detectFormat(readFileSync(dataPath(file), 'utf8'), file),
        'UNKNOWN_FORMAT',
        file,
      )
    }
  })
})

describe('detectFormat on a single JSON object', () => {
  it('reads a lone record as a list of one when exactly one format fits it', () => {
    expect(detectFormat(json({ id: 'a', name: 'a' }))).toBe('canonical')
    expect(detectFormat(json(mcpTool))).toBe('mcp')
    expect(detectFormat(json(gorillaRecord), 'one-record.json')).toBe('gorilla')
  })
})
