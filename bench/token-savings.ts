/**
 * Token savings of iterative tool loading: tokens an agent pays to have every tool schema in its
 * context, against tokens of a typical search_tools + get_tool_schemas round trip (and of one
 * select_tools call), measured on the real MCP responses through the SDK client.
 *
 * Libraries: the demo library, and the ToolBench G3 corpus (COLT's beir-corpus file) when the
 * benchmark data is present. Queries: the first demo queries (test/fixtures/demo-queries.jsonl)
 * and the first StableToolBench G3 test instructions.
 *
 * Run: npx tsx bench/token-savings.ts [--queries 8] [--k 5] [--load 2]
 * @module
 */
import { readFile } from 'node:fs/promises'
import { join } from 'node:path'
import { benchArgs } from './bench-args.ts'
import type { CallToolResult } from '@modelcontextprotocol/sdk/types.js'
import type { Config } from '../src/config/schema.ts'
import type { TokenCounter } from '../src/mcp/tokens/token-counter.ts'

interface LibraryCase {
  name: string
  path: string
  queries: string[]
}

interface Row {
  library: string
  tools: number
  listAll: number
  estimateError: number
  definitions: number
  search: number
  schemas: number
  select: number
}

const { values } = benchArgs(import.meta.url, {
  options: {
    queries: { type: 'string', default: '8' },
    k: { type: 'string', default: '5' },
    load: { type: 'string', default: '2' },
  },
})
// What it measures only once the flags are good: --help and a bad flag answer without it.
const { Client } = await import('@modelcontextprotocol/sdk/client/index.js')
const { InMemoryTransport } = await import('@modelcontextprotocol/sdk/inMemory.js')
const { createComponents } = await import('../src/components.ts')
const { loadConfig } = await import('../src/config/load-config.ts')
const { importToolsFromPath } = await import('../src/library/importers/index.ts')
const { ToolLibrary } = await import('../src/library/tool-library.ts')
const { createLogger } = await import('../src/log.ts')
const { createMcpServer } = await import('../src/mcp/create-mcp-server.ts')
const { createMcpContext } = await import('../src/mcp/mcp-context.ts')
const { loadTokenCounter } = await import('../src/mcp/tokens/load-token-counter.ts')
const { toolListingText } = await import('../src/mcp/tokens/token-accountant.ts')
const { createEstimateTokenCounter } = await import('../src/mcp/tokens/token-counter.ts')
const { UNSCOPED } = await import('../src/mcp/tool-scope.ts')
const { DEMO_LIBRARY_DIR, buildIndexedLibrary } = await import('../src/store/library-lifecycle.ts')
const { ToolselService } = await import('../src/service/toolsel-service.ts')
const QUERIES = Number(values.queries)
const K = Number(values.k)
const LOAD = Number(values.load)

const mean = (numbers: number[]) => numbers.reduce((sum, n) => sum + n, 0) / numbers.length
const textOf = (result: CallToolResult) =>
  result.content.map((part) => (part.type === 'text' ? part.text : '')).join('')

async function cases(config: Config): Promise<LibraryCase[]> {
  const demoQueries = (await readFile('test/fixtures/demo-queries.jsonl', 'utf8'))
    .split('\n')
    .filter((line) => line.trim())
    .slice(0, QUERIES)
    .map((line) => (JSON.parse(line) as { instruction: string }).instruction)
  const found: LibraryCase[] = [{ name: 'demo', path: DEMO_LIBRARY_DIR, queries: demoQueries }]
  const toolbench = join(config.bench.dataDir, 'toolbench')
  try {
    const instructions = JSON.parse(
      await readFile(
        join(toolbench, 'StableToolBench/solvable_queries/test_instruction/G3_instruction.json'),
        'utf8',
      ),
    ) as Array<{ query: string }>
    found.push({
      name: 'toolbench-g3',
      path: join(toolbench, 'COLT/datasets/ToolBenchG3/corpus.jsonl'),
      queries: instructions.slice(0, QUERIES).map((item) => item.query),
    })
  } catch (error) {
    process.stderr.write(`Skipping ToolBench G3: ${(error as Error).message}\n`)
  }
  return found
}

async function measure(entry: LibraryCase, config: Config, counter: TokenCounter): Promise<Row> {
  const logger = createLogger('warn')
  const { tools } = await importToolsFromPath(entry.path)
  const library = new ToolLibrary(entry.name, tools)
  const service = new ToolselService(config, logger, createComponents(config, logger))
  service.libraries.set(await buildIndexedLibrary(library, config))
  const context = createMcpContext(service, { defaultLibrary: entry.name, tokenCounter: counter })
  const [clientSide, serverSide] = InMemoryTransport.createLinkedPair()
  await createMcpServer(context, { scope: UNSCOPED }).connect(serverSide)
  const client = new Client({ name: 'token-savings', version: '1' })
  await client.connect(clientSide)

  const estimate = createEstimateTokenCounter()
  const listings = tools.map(toolListingText)
  const sum = async (counts: Array<Promise<number>>) =>
    (await Promise.all(counts)).reduce((total, count) => total + count, 0)
  const listAll = await sum(listings.map((text) => counter.count(text)))
  const estimated = await sum(listings.map((text) => estimate.count(text)))
  // What the agent carries all the time instead: toolsel's own tool definitions.
  const { tools: definitions } = await client.listTools()
  const definitionTokens = await sum(
    definitions.map((tool) =>
      counter.count(
        JSON.stringify({
          name: tool.name,
          description: tool.description,
          inputSchema: tool.inputSchema,
        }),
      ),
    ),
  )

  const search: number[] = []
  const schemas: number[] = []
  const select: number[] = []
  for (const query of entry.queries) {
    const found = (await client.callTool({
      name: 'search_tools',
      arguments: { query, k: K },
    })) as CallToolResult
    search.push(await counter.count(textOf(found)))
    const ids = (found.structuredContent as { tools: Array<{ id: string }> }).tools
      .slice(0, LOAD)
      .map((hit) => hit.id)
    if (ids.length > 0) {
      const loaded = (await client.callTool({
        name: 'get_tool_schemas',
        arguments: { ids },
      })) as CallToolResult
      schemas.push(await counter.count(textOf(loaded)))
    } else {
      schemas.push(0)
    }
    const selected = (await client.callTool({
      name: 'select_tools',
      arguments: { instruction: query },
    })) as CallToolResult
    select.push(await counter.count(textOf(selected)))
  }
  await client.close()
  await context.close()
  return {
    library: entry.name,
    tools: tools.length,
    listAll,
    estimateError: estimated / listAll - 1,
    definitions: definitionTokens,
    search: Math.round(mean(search)),
    schemas: Math.round(mean(schemas)),
    select: Math.round(mean(select)),
  }
}

function table(rows: Row[], counter: TokenCounter): string {
  const number = (n: number) => n.toLocaleString('en-US')
  const lines = [
    `Tokens counted with: ${counter.name}${counter.exact ? '' : ' (estimate)'}; ${QUERIES} queries per library, search_tools k=${K}, get_tool_schemas for the top ${LOAD} hits.`,
    '',
    '| Library | Tools | List every schema | toolsel tool definitions | search_tools | get_tool_schemas | Round trip | Saved per round trip | select_tools | chars/4.5 estimate error |',
    '|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|',
  ]
  for (const row of rows) {
    const roundTrip = row.search + row.schemas
    lines.push(
      `| ${row.library} | ${number(row.tools)} | ${number(row.listAll)} | ${number(row.definitions)} | ${number(row.search)} | ${number(row.schemas)} | ${number(roundTrip)} | ${number(row.listAll - roundTrip)} (${((1 - roundTrip / row.listAll) * 100).toFixed(1)}%) | ${number(row.select)} | ${(row.estimateError * 100).toFixed(1)}% |`,
    )
  }
  return lines.join('\n')
}

const config = await loadConfig({ env: process.env, flags: { 'log.level': 'warn' } })
const counter = await loadTokenCounter({ tokenizerDir: config.mcp.tokenizerDir })
const rows: Row[] = []
for (const entry of await cases(config)) rows.push(await measure(entry, config, counter))
process.stdout.write(`${table(rows, counter)}\n`)
