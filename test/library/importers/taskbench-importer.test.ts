import { readFileSync } from 'node:fs'
import { describe, expect, it } from 'vitest'
import { importToolsFromFile, importToolsFromText } from '../../../src/library/importers/index.ts'
import { dataPath, hasData } from '../../helpers/data-dir.ts'
import { expectToolselError } from './expect-toolsel-error.ts'

const TASKBENCH = 'taskbench/JARVIS/taskbench'
const node = (id: string, inputs: string[], outputs: string[]) => ({
  id,
  desc: `${id} does things.`,
  'input-type': inputs,
  'output-type': outputs,
})

describe('importTaskbench', () => {
  it('makes one required string property per input type and tags inputs and outputs', () => {
    const { tools, format } = importToolsFromText(
      JSON.stringify({ nodes: [node('Image Captioning', ['image'], ['text'])] }),
      {
        fileName: 'tool_desc.json',
      },
    )
    expect(format).toBe('taskbench')
    expect(tools).toEqual([
      {
        id: 'Image Captioning',
        name: 'Image Captioning',
        description: 'Image Captioning does things.',
        parameters: {
          type: 'object',
          properties: {
            image: { type: 'string', description: 'The input image: a file name or URL.' },
          },
          required: ['image'],
        },
        tags: ['input:image', 'output:text'],
        source: {
          format: 'taskbench',
          file: 'tool_desc.json',
          record: 0,
          inputTypes: ['image'],
          outputTypes: ['text'],
        },
      },
    ])
  })

  it('numbers a repeated input type and lower-cases types', () => {
    const { tools } = importToolsFromText(
      JSON.stringify({
        nodes: [
          node('Question Answering', ['text', 'text'], []),
          node('Stitch', ['Image', 'image'], ['image']),
        ],
      }),
    )
    expect(Object.keys(tools[0].parameters.properties as object)).toEqual(['text_1', 'text_2'])
    expect(tools[0].tags).toEqual(['input:text'])
    expect(tools[1].parameters.required).toEqual(['image_1', 'image_2'])
  })

  it("reads a dailylifeapis node's own parameter list (name, type, desc)", () => {
    const { tools, format } = importToolsFromText(
      JSON.stringify({
        nodes: [
          {
            id: 'get_weather',
            desc: 'Query the weather of a location on a date.',
            parameters: [
              { name: 'location', type: 'string', desc: 'The city.' },
              { name: 'date', type: 'string', desc: 'The day, YYYY-MM-DD.' },
              { name: 'days', type: 'Integer' },
              { name: 'units', type: 'enum' },
              { name: 'location', type: 'number', desc: 'A repeat: the first is kept.' },
            ],
          },
          { id: 'no_arguments', desc: 'Takes nothing.', parameters: [] },
        ],
      }),
      { fileName: 'tool_desc.json' },
    )
    expect(format).toBe('taskbench')
    expect(tools[0].parameters).toEqual({
      type: 'object',
      properties: {
        location: { type: 'string', description: 'The city.' },
        date: { type: 'string', description: 'The day, YYYY-MM-DD.' },
        days: { type: 'integer' },
        units: { type: 'string' },
      },
      required: ['location', 'date', 'days', 'units'],
    })
    expect(tools[0].tags).toEqual([])
    expect(tools[1].parameters).toEqual({ type: 'object', properties: {} })
  })

  it('names the record of a parameter without a name', () => {
    expectToolselError(
      () =>
        importToolsFromText(
          JSON.stringify({ nodes: [{ id: 'a', desc: 'x', parameters: [{ type: 'string' }] }] }),
          { fileName: 'tool_desc.json' },
        ),
      'IMPORT_FAILED',
      'tool_desc.json: record 0',
    )
  })

  it('rejects a node without an id and duplicate node ids', () => {
    expectToolselError(
      () =>
        importToolsFromText(JSON.stringify({ nodes: [node('A', [], []), { desc: 'x' }] }), {
          fileName: 'g.json',
        }),
      'IMPORT_FAILED',
      'g.json: record 1: field "id": expected a non-empty string, got nothing (the field is missing)',
    )
    expectToolselError(
      () =>
        importToolsFromText(JSON.stringify({ nodes: [node('A', [], []), node('A', [], [])] }), {
          fileName: 'g.json',
        }),
      'DUPLICATE_TOOL_ID',
      'g.json: tool id "A" appears twice (record 0 and record 1)',
    )
  })
})

describe.skipIf(!hasData(TASKBENCH))(
  'importTaskbench on the TaskBench tool graphs (skipped: no shared/data/taskbench)',
  () => {
    it.each([
      ['data_huggingface', 23],
      ['data_multimedia', 40],
    ])('imports %s/tool_desc.json: %i tools, ids equal to the node ids', async (domain, count) => {
      const file = dataPath(TASKBENCH, domain, 'tool_desc.json')
      const { tools } = await importToolsFromFile(file)
      expect(tools).toHaveLength(count)
      const nodes = (
        JSON.parse(readFileSync(file, 'utf8')) as { nodes: Array<{ id: string; desc: string }> }
      ).nodes
      expect(tools.map((tool) => [tool.id, tool.description])).toEqual(
        nodes.map((entry) => [entry.id, entry.desc]),
      )
      const graph = await importToolsFromFile(dataPath(TASKBENCH, domain, 'graph_desc.json'))
      expect(graph.tools.map((tool) => tool.id)).toEqual(tools.map((tool) => tool.id))
    })

    it('covers every gold tool name of the partial data.json that is a tool id', async () => {
      const { tools } = await importToolsFromFile(
        dataPath(TASKBENCH, 'data_huggingface', 'tool_desc.json'),
      )
      const ids = new Set(tools.map((tool) => tool.id))
      const records = readFileSync(
        dataPath('taskbench/partial/huggingface/data.head.jsonl'),
        'utf8',
      )
        .trim()
        .split('\n')
      const gold = new Set(
        records.flatMap((line) => {
          const nodes = (JSON.parse(line) as { task_nodes: unknown }).task_nodes
          return Object.values(nodes as object).map((entry) => (entry as { task: string }).task)
        }),
      )
      // README: all 23 ids occur as gold (other gold names are not tools).
      expect([...ids].every((id) => gold.has(id))).toBe(true)
    })

    it('describes Question Answering as taking two texts (spot check)', async () => {
      const { tools } = await importToolsFromFile(
        dataPath(TASKBENCH, 'data_huggingface', 'tool_desc.json'),
      )
      const answering = tools.find((tool) => tool.id === 'Question Answering')
      expect(answering?.parameters.required).toEqual(['text_1', 'text_2'])
      expect(answering?.tags).toEqual(['input:text', 'output:text'])
    })
  },
)
