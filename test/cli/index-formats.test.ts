import { copyFile, mkdtemp, readFile, writeFile } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { fileURLToPath } from 'node:url'
import { beforeAll, describe, expect, it } from 'vitest'
import { schemaErrors } from '../../src/library/schema/validate-schema.ts'
import { runCli } from './run-cli.ts'

const fixture = (name: string) =>
  fileURLToPath(new URL(`../fixtures/formats/${name}`, import.meta.url))

const run = (...argv: string[]) => runCli(argv)

let indexDir: string
beforeAll(async () => {
  indexDir = await mkdtemp(join(tmpdir(), 'toolsel-cli-formats-'))
})

async function savedTools(name: string): Promise<{ id: string; parameters: object }[]> {
  const text = await readFile(join(indexDir, name, 'tools.jsonl'), 'utf8')
  return text
    .split('\n')
    .filter((line) => line.trim() !== '')
    .map((line) => JSON.parse(line))
}

describe('toolsel index on the common tool formats', () => {
  it('indexes a plain function list; --on-duplicate rename keeps repeated names', async () => {
    const refused = await run('index', fixture('functions.json'), '--index-dir', indexDir)
    expect(refused.code).not.toBe(0)
    expect(refused.stderr).toContain('tool id "calculate_triangle_area" appears twice')

    const indexed = await run(
      'index',
      fixture('functions.json'),
      '--on-duplicate',
      'rename',
      '--index-dir',
      indexDir,
    )
    expect(indexed.code).toBe(0)
    expect(indexed.stderr).toContain('Imported 5 tools (functions)')
    expect(indexed.stderr).toContain(
      'Duplicate ids: 1 renamed, 0 dropped, 1 identical copies dropped',
    )
    expect(indexed.stderr).toContain('  calculate_triangle_area → calculate_triangle_area_2')
    expect(indexed.stderr).toContain('Parameters rewritten into JSON Schema: 5 tool(s)')
    // Said once, in the summary: the same counts were logged as warnings first.
    expect(indexed.stderr).not.toContain('duplicate ids (--on-duplicate rename)')
    expect(indexed.stderr).not.toContain('rewritten into JSON Schema: get_best_sushi_places')
    const tools = await savedTools('functions')
    expect(tools.map((tool) => tool.id)).toContain('calculate_triangle_area_2')
    for (const tool of tools) expect(schemaErrors(tool.parameters as never), tool.id).toEqual([])

    const selected = await run(
      'select',
      'area of a triangle with sides 3, 4 and 5',
      '--library',
      'functions',
      '--index-dir',
      indexDir,
      '--json',
    )
    expect(selected.code).toBe(0)
    expect(JSON.parse(selected.stdout).tools[0].id).toMatch(/^calculate_triangle_area/)
  })

  it('indexes an OpenAPI YAML spec as one tool per operation', async () => {
    const indexed = await run('index', fixture('petstore.yaml'), '--index-dir', indexDir)
    expect(indexed.code).toBe(0)
    expect(indexed.stderr).toContain('Imported 7 tools (openapi)')
    const tools = await savedTools('petstore')
    expect(tools.map((tool) => tool.id)).toEqual([
      'listPets',
      'createPets',
      'showPetById',
      'delete_pets_petId',
      'placeOrder',
      'getCategoryTree',
      'replaceCategory',
    ])
  })

  it('indexes a Postman collection; select finds its requests', async () => {
    const indexed = await run('index', fixture('postman-collection.json'), '--index-dir', indexDir)
    expect(indexed.stderr).toContain('Imported 7 tools (postman)')
    const library = ['--library', 'postman-collection', '--index-dir', indexDir, '--json']
    const selected = await run('select', 'refund the cold coffee order 42', ...library)
    expect(JSON.parse(selected.stdout).tools.map((tool: { id: string }) => tool.id)).toEqual([
      'orders.refunds.refund_order',
    ])
  })

  it('names every format of a directory of mixed files', async () => {
    const dir = await mkdtemp(join(tmpdir(), 'toolsel-cli-mixed-'))
    await copyFile(fixture('petstore.yaml'), join(dir, 'a.yaml'))
    await copyFile(fixture('gemini-tools.json'), join(dir, 'b.json'))
    await copyFile(fixture('openai-responses-tools.json'), join(dir, 'c.json'))
    const indexed = await run('index', dir, '--name', 'mixed', '--index-dir', indexDir)
    expect(indexed.code).toBe(0)
    // It said "(openapi)": the first file's format only.
    expect(indexed.stderr).toMatch(
      /Imported \d+ tools \(openapi: 1 file, \w+: 1 file, \w+: 1 file\)/,
    )
  })

  it('prints import warnings as plain Warning: lines on stderr, not timestamped log lines', async () => {
    const file = fixture('anthropic-tools.json')
    const indexed = await run('index', file, '--name', 'warned', '--index-dir', indexDir)
    expect(indexed.code).toBe(0)
    expect(indexed.stderr).toContain(
      `Warning: ${file}: record 2: skipped the server tool "web_search_20250305" (only client tools are imported)\n`,
    )
    expect(indexed.stderr).not.toMatch(/^\d{4}-\d\d-\d\dT\S+ WARN /m)
  })

  it('rejects an unknown --on-duplicate mode', async () => {
    const result = await run(
      'index',
      fixture('functions.json'),
      '--on-duplicate',
      'merge',
      '--index-dir',
      indexDir,
    )
    expect(result.code).not.toBe(0)
    expect(result.stderr).toContain(
      'Unknown --on-duplicate "merge" (available: error, rename, first, last)',
    )
  })

  it('names the line of a usage example whose tool the library lacks', async () => {
    const examples = join(indexDir, 'stock-examples.jsonl')
    await writeFile(
      examples,
      [
        '{"instruction": "price of AAPL", "tools": ["get_stock_price"]}',
        '',
        '{"instruction": "price of MSFT now", "tools": ["get_stock_prices"]}',
      ].join('\n'),
    )
    const result = await run(
      'index',
      fixture('anthropic-tools.json'),
      '--name',
      'stocks',
      '--examples',
      examples,
      '--index-dir',
      indexDir,
    )
    expect(result.code).not.toBe(0)
    expect(result.stderr).toContain(
      `Invalid usage examples in ${examples}: library "stocks" has no tool "get_stock_prices" (line 3). Name tools by their ids in the library, as \`toolsel select "<instruction>" --library stocks --json\` shows them. None of the file was used.`,
    )
    expect(result.stderr).not.toContain('GET /v1/libraries')
  })
})
