import { mkdtemp, rm, writeFile } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { afterAll, describe, expect, it } from 'vitest'
import {
  importTools,
  importToolsFromFile,
  importToolsFromPath,
  importToolsFromText,
} from '../../../src/library/importers/index.ts'
import { busyMsSync } from '../../helpers/busy-time.ts'
import { expectToolselError, expectToolselErrorAsync } from './expect-toolsel-error.ts'

const fixture = (name: string) =>
  new URL(`../../fixtures/formats/${name}`, import.meta.url).pathname

const area = (description: string) => ({ name: 'area', description, parameters: {} })
const LIST = JSON.stringify([area('Triangle area.'), area('Circle area.'), area('Triangle area.')])

describe('onDuplicate', () => {
  it('fails by default, naming both records and how to import anyway', () => {
    expectToolselError(
      () => importToolsFromText(LIST, { fileName: 'fns.json' }),
      'DUPLICATE_TOOL_ID',
      'fns.json: tool id "area" appears twice (record 0 and record 1); ids must be unique within a library: import with onDuplicate rename (the later one becomes <id>_2), first or last (toolsel index --on-duplicate rename; PUT …?onDuplicate=rename).',
    )
  })

  it('names the two OpenAPI operations that share an operationId', async () => {
    const spec = {
      openapi: '3.1.0',
      info: { title: 'Shop', version: '1' },
      paths: {
        '/orders': {
          post: { operationId: 'createOrder', summary: 'Place an order', responses: {} },
          get: { operationId: 'createOrder', summary: 'List orders', responses: {} },
        },
      },
    }
    await expectToolselErrorAsync(
      () => importTools(JSON.stringify(spec), { fileName: 'shop.json' }),
      'DUPLICATE_TOOL_ID',
      `shop.json: tool id "createOrder" appears twice (operation GET /orders (record 0) and operation POST /orders (record 1)); ids must be unique within a library: import with onDuplicate rename (the later one becomes <id>_2), first or last (toolsel index --on-duplicate rename; PUT …?onDuplicate=rename).`,
    )
  })

  it('10,000 copies of one id are renamed at once (quadratic before: minutes)', () => {
    const copies = Array.from({ length: 10_000 }, (_, index) => area(`Copy ${index}.`))
    const text = JSON.stringify([...copies, area('Copy 0.')])
    let result: ReturnType<typeof importToolsFromText> | undefined
    // CPU time where the machine is loaded (busy-time.ts).
    const ms = busyMsSync(
      () => (result = importToolsFromText(text, { fileName: 'fns.json', onDuplicate: 'rename' })),
    )
    expect(ms).toBeLessThan(3000)
    expect(result!.tools.map((tool) => tool.id).slice(0, 3)).toEqual(['area', 'area_2', 'area_3'])
    expect(result!.tools.at(-1)?.id).toBe('area_10000')
    expect(result!.duplicates.at(-1)).toMatchObject({ id: 'area', action: 'identical' })
  })

  it('rename keeps different definitions as <id>_2 and drops identical copies', () => {
    const result = importToolsFromText(LIST, { fileName: 'fns.json', onDuplicate: 'rename' })
    expect(result.tools.map((tool) => [tool.id, tool.name, tool.description])).toEqual([
      ['area', 'area', 'Triangle area.'],
      ['area_2', 'area_2', 'Circle area.'],
    ])
    expect(result.duplicates).toEqual([
      { id: 'area', action: 'renamed', to: 'area_2', file: 'fns.json', record: 1 },
      { id: 'area', action: 'identical', file: 'fns.json', record: 2 },
    ])
    expect(result.warnings).toContain(
      'fns.json: duplicate ids (--on-duplicate rename): 1 renamed, 0 dropped, 1 identical copies dropped',
    )
  })

  it('rename skips suffixes that are taken and keeps namespaces', () => {
    const text = JSON.stringify([area('A.'), { name: 'area_2', description: 'B.' }, area('C.')])
    const result = importToolsFromText(text, { onDuplicate: 'rename', namespace: 'geo' })
    expect(result.tools.map((tool) => [tool.id, tool.name])).toEqual([
      ['geo.area', 'area'],
      ['geo.area_2', 'area_2'],
      ['geo.area_3', 'area_3'],
    ])
  })

  it('first and last keep one definition and list the others', () => {
    const first = importToolsFromText(LIST, { onDuplicate: 'first' })
    expect(first.tools.map((tool) => tool.description)).toEqual(['Triangle area.'])
    expect(first.duplicates.map((entry) => [entry.action, entry.record])).toEqual([
      ['dropped', 1],
      ['identical', 2],
    ])
    const last = importToolsFromText(LIST, { onDuplicate: 'last' })
    expect(last.tools.map((tool) => tool.description)).toEqual(['Triangle area.'])
    expect(last.tools[0].source?.record).toBe(2)
    expect(last.duplicates.map((entry) => [entry.action, entry.record])).toEqual([
      ['identical', 0],
      ['dropped', 1],
    ])
  })

  it('rejects an unknown mode', () => {
    expectToolselError(
      () => importToolsFromText(LIST, { onDuplicate: 'merge' as never }),
      'INVALID_INPUT',
      'Unknown on-duplicate mode "merge"; use one of error, rename, first, last.',
    )
  })

  it('imports the fixture list with repeated names under rename', async () => {
    await expectToolselErrorAsync(
      () => importToolsFromFile(fixture('functions.json')),
      'DUPLICATE_TOOL_ID',
      'tool id "calculate_triangle_area" appears twice (record 1 and record 3)',
    )
    const result = await importToolsFromFile(fixture('functions.json'), { onDuplicate: 'rename' })
    expect(result.tools.map((tool) => tool.id)).toEqual([
      'get_best_sushi_places',
      'calculate_triangle_area',
      'plot_points',
      'calculate_triangle_area_2',
      'CarRental.findCars',
    ])
  })
})

describe('onDuplicate across the files of a directory', () => {
  const dirs: string[] = []
  afterAll(async () => {
    for (const dir of dirs) await rm(dir, { recursive: true, force: true })
  })

  it('renames a tool that another file already defines', async () => {
    const dir = await mkdtemp(join(tmpdir(), 'toolsel-dup-'))
    dirs.push(dir)
    await writeFile(join(dir, 'a.json'), JSON.stringify([area('Triangle area.')]))
    await writeFile(join(dir, 'b.json'), JSON.stringify([area('Circle area.')]))
    await expectToolselErrorAsync(
      () => importToolsFromPath(dir),
      'DUPLICATE_TOOL_ID',
      'Tool id "area" appears twice',
    )
    const result = await importToolsFromPath(dir, { onDuplicate: 'rename' })
    expect(result.tools.map((tool) => tool.id)).toEqual(['area', 'area_2'])
    expect(result.duplicates).toEqual([
      { id: 'area', action: 'renamed', to: 'area_2', file: join(dir, 'b.json'), record: 0 },
    ])
  })
})
