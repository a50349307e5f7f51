import { readFileSync } from 'node:fs'
import { parse } from 'csv-parse/sync'
import { describe, expect, it } from 'vitest'
import { importToolsFromFile, importToolsFromText } from '../../../src/library/importers/index.ts'
import { dataPath, hasData } from '../../helpers/data-dir.ts'
import { expectToolselError } from './expect-toolsel-error.ts'

const MATH = 'craft/CRAFT/tab_and_math/MATH/craft/algebra/5_deduplicated_tools.csv'
const TABMWP = 'craft/CRAFT/tab_and_math/TabMWP/craft/tabmwp/5_deduplicated_tools.csv'
const VQA = 'craft/CRAFT/vqa/results/craft_tools/5_deduplicated_tool.csv'

const csvField = (value: string) => `"${value.replaceAll('"', '""')}"`
const csv = (rows: Array<Record<string, string>>) => {
  const columns = Object.keys(rows[0])
  return [
    columns.join(','),
    ...rows.map((row) => columns.map((column) => csvField(row[column])).join(',')),
  ].join('\n')
}

const AVERAGE_TOOL = `def calculate_average(values, precision=2, *args, **options):
    """
    Average a list of numbers.

    Args:
        values (list): The numbers,
            at least one.
        precision (int): Digits to round to.

    Returns:
        float: The rounded mean.
    """
    return round(sum(values) / len(values), precision)`

describe('importCraft', () => {
  it('imports a tool from its function: name, docstring, parameters and code', () => {
    const text = csv([
      {
        question: 'What is the mean of 1 and 3?',
        tool_id: '17',
        tool: AVERAGE_TOOL,
        tool_call: 'x',
      },
    ])
    const { tools, format } = importToolsFromText(text, { fileName: 'tools.csv' })
    expect(format).toBe('craft')
    expect(tools).toEqual([
      {
        id: '17',
        name: 'calculate_average',
        description:
          'Average a list of numbers.\n\nArgs:\n    values (list): The numbers,\n        at least one.\n    precision (int): Digits to round to.\n\nReturns:\n    float: The rounded mean.',
        parameters: {
          type: 'object',
          properties: {
            values: { type: 'array', description: 'The numbers, at least one.' },
            precision: { type: 'integer', description: 'Digits to round to.', default: 2 },
            args: { type: 'array' },
          },
          required: ['values'],
          additionalProperties: true,
        },
        source: { format: 'craft', file: 'tools.csv', record: 0, line: 2, code: AVERAGE_TOOL },
      },
    ])
    expect(JSON.stringify(tools)).not.toContain('mean of 1 and 3')
  })

  it('prefers annotations to docstring types, and reads "x1, y1 (float)" entries', () => {
    const tool = `def f(image_patch: ImagePatch, x1, y1, flag: bool = False) -> str:\n    '''Do it.\n\n    Parameters:\n    x1, y1 (float): A point.\n    '''\n    return ''`
    const { tools } = importToolsFromText(csv([{ tool_id: 'a', tool }]), { fileName: 't.csv' })
    expect(tools[0].parameters).toEqual({
      type: 'object',
      properties: {
        image_patch: {},
        x1: { type: 'number', description: 'A point.' },
        y1: { type: 'number', description: 'A point.' },
        flag: { type: 'boolean', default: false },
      },
      required: ['image_patch', 'x1', 'y1'],
    })
    expect(tools[0].description).toBe('Do it.\n\nParameters:\nx1, y1 (float): A point.')
  })

  it('picks the function the call column calls when a tool defines helpers', () => {
    const tool =
      'def helper(a):\n    return a\n\ndef main_tool(b):\n    """Main."""\n    return helper(b)'
    const rows = [{ tool_id: '1', tool, tool_call: 'print(main_tool(b=2))' }]
    expect(importToolsFromText(csv(rows), { fileName: 't.csv' }).tools[0].name).toBe('main_tool')
    const { tools, warnings } = importToolsFromText(csv([{ ...rows[0], tool_call: '' }]), {
      fileName: 't.csv',
    })
    expect(tools[0].name).toBe('helper')
    expect(warnings).toEqual([
      't.csv: line 2: the tool defines helper, main_tool and no call column picks one; using the first',
    ])
  })

  it('falls back to the function name when there is no docstring', () => {
    const { tools } = importToolsFromText(
      csv([{ tool_id: '1', tool: 'def add(a, b):\n    return a + b' }]),
      {
        fileName: 't.csv',
      },
    )
    expect(tools[0].description).toBe('add')
  })

  it('reports rows by the line they start on, counting the lines inside quoted fields', () => {
    const rows = [
      { tool_id: '1', tool: 'def a():\n    """A."""\n    pass' },
      { tool_id: '', tool: 'def b():\n    pass' },
    ]
    expectToolselError(
      () => importToolsFromText(csv(rows), { fileName: 't.csv' }),
      'IMPORT_FAILED',
      't.csv: line 5: field "tool_id": expected a non-empty string, got ""',
    )
  })

  it('rejects a tool without a def, a missing column, bad CSV and duplicate tool ids', () => {
    expectToolselError(
      () => importToolsFromText(csv([{ tool_id: '1', tool: 'print(1)' }]), { fileName: 't.csv' }),
      'IMPORT_FAILED',
      't.csv: line 2: field "tool": expected Python source defining a function',
    )
    expectToolselError(
      () => importToolsFromText('tool_id,code\n1,x\n', { fileName: 't.csv' }),
      'IMPORT_FAILED',
      't.csv: field "tool": expected a "tool" column (CRAFT toolsets have tool_id and tool), got columns "tool_id", "code"',
    )
    expectToolselError(
      () => importToolsFromText('tool_id,tool\n1,"def f():\n', { fileName: 't.csv' }),
      'IMPORT_FAILED',
      't.csv: invalid CSV at line 2: Quote Not Closed',
    )
    expectToolselError(
      () =>
        importToolsFromText(
          csv([
            { tool_id: '9', tool: 'def f(): pass' },
            { tool_id: '9', tool: 'def g(): pass' },
          ]),
          {
            fileName: 't.csv',
          },
        ),
      'DUPLICATE_TOOL_ID',
      't.csv: tool id "9" appears twice (line 2 and line 3)',
    )
  })
})

describe.skipIf(!hasData('craft'))(
  'importCraft on the CRAFT toolsets (skipped: no shared/data/craft)',
  () => {
    it.each([
      [MATH, 282, 281],
      [TABMWP, 180, 179],
      [VQA, 525, 473],
    ])('imports %s: %i tools (%i distinct function names)', async (file, count, names) => {
      const { tools, warnings } = await importToolsFromFile(dataPath(file))
      expect(tools).toHaveLength(count)
      expect(new Set(tools.map((tool) => tool.name)).size).toBe(names)
      expect(warnings).toEqual([])
      for (const tool of tools) {
        expect(tool.description.length).toBeGreaterThan(tool.name.length)
        for (const property of Object.values(tool.parameters.properties as object)) {
          expect((property as { description?: string }).description, `${tool.id}`).toBeTruthy()
        }
      }
    })

    it('keeps ids, names and start lines in step with the CSV (spot checks)', async () => {
      const math = (await importToolsFromFile(dataPath(MATH))).tools
      expect(math[0]).toMatchObject({
        id: '1237',
        name: 'simplify_math_expression',
        parameters: {
          properties: {
            expression: { description: 'The mathematical expression to be simplified.' },
          },
        },
        source: { line: 2 },
      })
      expect(math[0].description).toMatch(/^Simplifies a given mathematical expression\./)
      expect(math.at(-1)?.source).toMatchObject({ line: 11560 })
      const vqa = (await importToolsFromFile(dataPath(VQA))).tools
      expect(vqa[3]).toMatchObject({
        id: 'llava_157239',
        name: 'identify_object_attribute',
        source: { line: 128 },
      })
    })

    it('names each tool after the function its row calls, also where helpers come first', async () => {
      const math = new Map(
        (await importToolsFromFile(dataPath(MATH))).tools.map((tool) => [tool.id, tool.name]),
      )
      expect(math.get('1228')).toBe('find_longest_side_generic')
      expect(math.get('655')).toBe('find_sum_of_consecutive_integers')
      expect(math.get('266')).toBe('find_smallest_sum_of_squares')
    })

    it('keeps the tool source, and nothing of the question', async () => {
      const rows = parse(readFileSync(dataPath(TABMWP), 'utf8'), {
        columns: true,
        bom: true,
      }) as Array<Record<string, string>>
      const { tools } = await importToolsFromFile(dataPath(TABMWP))
      expect(tools.map((tool) => tool.source?.code)).toEqual(rows.map((row) => row.tool))
      expect(tools.map((tool) => tool.id)).toEqual(rows.map((row) => row.tool_id))
      expect(JSON.stringify(tools[0])).not.toContain(rows[0].question.slice(0, 40))
    })
  },
)
