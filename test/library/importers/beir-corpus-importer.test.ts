import { readFileSync } from 'node:fs'
import { describe, expect, it } from 'vitest'
import { importToolsFromFile, importToolsFromText } from '../../../src/library/importers/index.ts'
import type { Tool } from '../../../src/library/tool.ts'
import { dataPath, hasData } from '../../helpers/data-dir.ts'
import { expectToolselError } from './expect-toolsel-error.ts'

const G3_CORPUS = 'toolbench/COLT/datasets/ToolBenchG3/corpus.jsonl'
const TOOLLENS_CORPUS = 'toollens/COLT/datasets/ToolLens/corpus.jsonl'

const text = (tool: string, api: string, description: string, required = '[]') =>
  `category_name:Food, tool_name:${tool}, api_name:${api}, api_description:${description}, required_params: ${required}, optional_params: [], return_schema: {"id": "str"}`
const corpus = (...documents: Array<[string, string, string?]>) =>
  documents
    .map(([id, body, title = '']) => JSON.stringify({ _id: id, title, text: body, metadata: {} }))
    .join('\n')

/** corpus `_id` → tool id, the mapping the benchmark builds from `source.corpusIds`. */
function corpusIdMap(tools: readonly Tool[]): Map<string, string> {
  return new Map(
    tools.flatMap((tool) => (tool.source?.corpusIds as string[]).map((id) => [id, tool.id])),
  )
}

describe('importBeirCorpus', () => {
  it('parses the ToolBench text into a tool with parameters and the return schema', () => {
    const required = '[{"name": "id", "type": "string", "description": "Cocktail id"}]'
    const { tools } = importToolsFromText(
      corpus(['7', text('Cocktails', 'By ID', 'Get one, fast', required)]),
      {
        fileName: 'corpus.jsonl',
      },
    )
    expect(tools).toEqual([
      {
        id: 'Cocktails::By ID',
        name: 'By ID',
        description: 'Get one, fast',
        parameters: {
          type: 'object',
          properties: { id: { type: 'string', description: 'Cocktail id' } },
          required: ['id'],
        },
        namespace: 'Cocktails',
        tags: ['Food'],
        source: {
          format: 'beir-corpus',
          file: 'corpus.jsonl',
          record: 0,
          line: 1,
          corpusIds: ['7'],
          category: 'Food',
          returnSchema: { id: 'str' },
        },
      },
    ])
  })

  it('merges documents with the same name, keeping the first description and every _id', () => {
    const { tools, warnings } = importToolsFromText(
      corpus(
        ['1', text('T', 'A', 'first')],
        ['2', text('T', 'B', 'other')],
        ['3', text('T', 'A', 'second')],
      ),
      { fileName: 'corpus.jsonl' },
    )
    expect(tools.map((tool) => [tool.id, tool.description, tool.source?.corpusIds])).toEqual([
      ['T::A', 'first', ['1', '3']],
      ['T::B', 'other', ['2']],
    ])
    expect(warnings).toEqual([
      'corpus.jsonl: line 3: _id "3" repeats "T::A" of line 1; merged into one tool, keeping the first description',
    ])
  })

  it('imports a corpus of plain documents as one tool per _id', () => {
    const { tools } = importToolsFromText(
      corpus(['a', 'Sends an email.', 'send_email'], ['b', 'Reads a calendar.']),
    )
    expect(
      tools.map((tool) => [tool.id, tool.name, tool.description, tool.source?.corpusIds]),
    ).toEqual([
      ['a', 'send_email', 'Sends an email.', ['a']],
      ['b', 'b', 'Reads a calendar.', ['b']],
    ])
  })

  it('rejects text that breaks the ToolBench layout, naming the line and the field', () => {
    expectToolselError(
      () =>
        importToolsFromText(
          corpus(['1', text('T', 'A', 'ok')], ['2', 'category_name:Food, tool_name:T']),
          {
            fileName: 'corpus.jsonl',
          },
        ),
      'IMPORT_FAILED',
      'corpus.jsonl: line 2: field "text": expected "category_name:…',
    )
    expectToolselError(
      () =>
        importToolsFromText(corpus(['1', text('T', 'A', 'ok', '[{"name": 3}]')]), {
          fileName: 'c.jsonl',
        }),
      'IMPORT_FAILED',
      'c.jsonl: line 1: field "text.required_params[0].name": expected a non-empty string, got 3',
    )
  })

  it('rejects a repeated _id as a duplicate id', () => {
    expectToolselError(
      () =>
        importToolsFromText(corpus(['1', text('T', 'A', 'x')], ['1', text('T', 'B', 'y')]), {
          fileName: 'c.jsonl',
        }),
      'DUPLICATE_TOOL_ID',
      'c.jsonl: tool id "1" appears twice (line 1 and line 2)',
    )
  })
})

describe.skipIf(!hasData(G3_CORPUS))(
  'importBeirCorpus on the COLT ToolBench-G3 corpus (skipped: no shared/data)',
  () => {
    it('imports 1,419 documents as 1,415 tools, every _id recoverable', async () => {
      // No time bound here: speed is measured in bench/, not in unit tests (shared CPUs make a
      // wall-clock assertion flaky).
      const { tools, warnings, format } = await importToolsFromFile(dataPath(G3_CORPUS))
      expect(format).toBe('beir-corpus')
      expect(tools).toHaveLength(1415)
      const idMap = corpusIdMap(tools)
      expect(idMap.size).toBe(1419)
      for (let id = 0; id < 1419; id++) expect(idMap.has(String(id))).toBe(true)
      expect(warnings).toHaveLength(4)
    })

    it('merges exactly the four Priceline names the README lists', async () => {
      const { tools } = await importToolsFromFile(dataPath(G3_CORPUS))
      const merged = tools.filter((tool) => (tool.source?.corpusIds as string[]).length > 1)
      expect(merged.map((tool) => [tool.id, tool.source?.corpusIds]).sort()).toEqual([
        ['Priceline com Provider::Auto complete', ['344', '1056']],
        ['Priceline com Provider::Download airports', ['1058', '1085']],
        ['Priceline com Provider::Hotel details', ['727', '1185']],
        ['Priceline com Provider::Search flights', ['493', '927']],
      ])
    })

    it('parses document 0 as the README shows it', async () => {
      const { tools } = await importToolsFromFile(dataPath(G3_CORPUS))
      expect(tools[0]).toMatchObject({
        id: 'The Cocktail DB::List of Cocktails',
        namespace: 'The Cocktail DB',
        tags: ['Food'],
        parameters: { type: 'object', properties: {} },
        source: {
          corpusIds: ['0'],
          line: 1,
          returnSchema: { id: 'str', title: 'str', difficulty: 'str', image: 'str' },
        },
      })
      expect(tools[0].description).toMatch(/^This endpoint responds with a list of cocktails/)
      expect(tools[2].parameters.required).toEqual(['pageSize', 'autoCorrect', 'q', 'pageNumber'])
    })

    it('maps every qrels corpus-id onto a tool', async () => {
      const idMap = corpusIdMap((await importToolsFromFile(dataPath(G3_CORPUS))).tools)
      const qrels = readFileSync(
        dataPath('toolbench/COLT/datasets/ToolBenchG3/qrels/test.tsv'),
        'utf8',
      )
      const corpusIds = qrels
        .trim()
        .split('\n')
        .slice(1)
        .map((row) => row.split('\t')[1])
      expect(corpusIds.every((id) => idMap.has(id))).toBe(true)
    })
  },
)

describe.skipIf(!hasData(TOOLLENS_CORPUS))(
  'importBeirCorpus on the ToolLens corpus (skipped: no shared/data)',
  () => {
    it('imports 464 tools, one per document, with the same text layout as G3', async () => {
      const { tools, warnings } = await importToolsFromFile(dataPath(TOOLLENS_CORPUS))
      expect(tools).toHaveLength(464)
      expect(warnings).toEqual([])
      expect(tools[0]).toMatchObject({
        id: 'Worldwide Recipes::Suggestions',
        description: 'Get Suggestions',
        parameters: { properties: { q: { type: 'string' } }, required: ['q'] },
        source: { corpusIds: ['0'] },
      })
      expect(new Set(tools.map((tool) => tool.namespace)).size).toBe(314)
    })
  },
)
