/**
 * The MCP SDK's server side loads on the first POST to /mcp, not when the server starts (round
 * 49): the first requests, concurrent ones too, are answered as any later one.
 */
import { spawnSync } from 'node:child_process'
import { mkdtemp, readFile, rm, writeFile } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { dirname, join, resolve } from 'node:path'
import { fileURLToPath, pathToFileURL } from 'node:url'
import { Hono } from 'hono'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { createComponents } from '../../src/components.ts'
import { parseConfig } from '../../src/config/load-config.ts'
import { createMemoryLogger } from '../../src/log.ts'
import { createMcpContext } from '../../src/mcp/mcp-context.ts'
import { mcpRoutes, type McpPostModule } from '../../src/mcp/mcp-routes.ts'
import { ToolselService } from '../../src/service/toolsel-service.ts'
import { startToolsel, type Harness } from './fixtures/toolsel-harness.ts'

const ROOT = resolve(dirname(fileURLToPath(import.meta.url)), '../..')

const INITIALIZE = {
  jsonrpc: '2.0',
  method: 'initialize',
  params: {
    protocolVersion: '2025-06-18',
    capabilities: {},
    clientInfo: { name: 'first-request-test', version: '1.0.0' },
  },
}

describe('the first POSTs to /mcp', () => {
  let harness: Harness
  beforeAll(async () => {
    harness = await startToolsel({ log: { level: 'silent' } })
  })
  afterAll(() => harness.close())

  it('answer initialize, eight at once, each as a later one is answered', async () => {
    const post = (id: number) =>
      fetch(new URL('/mcp', harness.baseUrl), {
        method: 'POST',
        headers: {
          'content-type': 'application/json',
          accept: 'application/json, text/event-stream',
        },
        body: JSON.stringify({ ...INITIALIZE, id }),
      }).then(async (response) => ({ status: response.status, body: await response.json() }))
    const first = await Promise.all(Array.from({ length: 8 }, (_, id) => post(id)))
    const later = await post(100)
    for (const [id, answer] of first.entries()) {
      expect(answer.status).toBe(200)
      expect(answer.body).toEqual({ ...later.body, id })
    }
    expect(later.body.result.serverInfo.name).toBe('toolsel')
    // And an SDK client after them.
    const client = await harness.connect()
    expect((await client.listTools()).tools.map((tool) => tool.name)).toContain('search_tools')
  })
})

describe('a server start', () => {
  it('loads no MCP SDK module until the first POST to /mcp (was: 28 at start)', async () => {
    const dir = await mkdtemp(join(tmpdir(), 'mcp-first-request-'))
    try {
      // A resolve hook that writes each module it resolves to a file (node:module register).
      const log = join(dir, 'resolved.txt')
      await writeFile(
        join(dir, 'hooks.mjs'),
        `import { appendFileSync } from 'node:fs'
export async function resolve(specifier, context, next) {
  const resolved = await next(specifier, context)
  appendFileSync(${JSON.stringify(log)}, resolved.url + '\\n')
  return resolved
}`,
      )
      await writeFile(
        join(dir, 'register.mjs'),
        `import { register } from 'node:module'\nregister('./hooks.mjs', import.meta.url)`,
      )
      // What `toolsel serve` builds before it listens (serve-command.ts), then one POST.
      const script = `
import { appendFileSync } from 'node:fs'
const src = ${JSON.stringify(pathToFileURL(join(ROOT, 'src')).href)}
const { parseConfig } = await import(src + '/config/load-config.ts')
const { createComponents } = await import(src + '/components.ts')
const { createMemoryLogger } = await import(src + '/log.ts')
const { ToolselService } = await import(src + '/service/toolsel-service.ts')
const { createMcpGateway } = await import(src + '/mcp/gateway/create-mcp-gateway.ts')
const { createApp } = await import(src + '/server/app.ts')
const config = parseConfig({ library: { default: 'demo', loadAll: false } })
const logger = createMemoryLogger()
const service = new ToolselService(config, logger, createComponents(config, logger))
await service.start()
const gateway = await createMcpGateway(service)
const app = createApp(service, { gateway })
appendFileSync(${JSON.stringify(log)}, 'READY\\n')
const response = await app.request('/mcp', {
  method: 'POST',
  headers: { 'content-type': 'application/json', accept: 'application/json, text/event-stream' },
  body: JSON.stringify(${JSON.stringify({ ...INITIALIZE, id: 1 })}),
})
console.log(response.status)
await app.close()
`
      const run = spawnSync(
        process.execPath,
        ['--import', 'tsx', '--import', pathToFileURL(join(dir, 'register.mjs')).href],
        { cwd: ROOT, input: script, encoding: 'utf8', timeout: 120_000 },
      )
      expect(run.stderr).toBe('')
      expect(run.stdout.trim()).toBe('200')
      const [atStart, afterPost] = (await readFile(log, 'utf8')).split('READY\n')
      const sdk = (text: string) =>
        new Set(text.split('\n').filter((url) => url.includes('@modelcontextprotocol/sdk')))
      expect([...sdk(atStart)]).toEqual([])
      expect(sdk(afterPost).size).toBeGreaterThan(0)
    } finally {
      await rm(dir, { recursive: true, force: true })
    }
  }, 150_000)
})

/**
 * /mcp routes over a started demo service whose MCP SDK load fails `failures` times (as a broken
 * install's import does, the SDK's files gone), then gives the real module.
 */
async function routesFailingToLoad(failures: number) {
  const config = parseConfig({ library: { default: 'demo', loadAll: false } })
  const logger = createMemoryLogger()
  const service = new ToolselService(config, logger, createComponents(config, logger))
  await service.start()
  const context = createMcpContext(service)
  let loads = 0
  const load = (): Promise<McpPostModule> =>
    ++loads <= failures
      ? Promise.reject(new Error("Cannot find package '@modelcontextprotocol/sdk'"))
      : import('../../src/mcp/mcp-post.ts')
  const app = new Hono().route('/mcp', mcpRoutes(context, load))
  const post = async () => {
    const response = await app.request('/mcp', {
      method: 'POST',
      headers: {
        'content-type': 'application/json',
        accept: 'application/json, text/event-stream',
      },
      body: JSON.stringify({ ...INITIALIZE, id: 1 }),
    })
    return { status: response.status, body: await response.json() }
  }
  return { logger, context, post, loads: () => loads }
}

describe('an MCP SDK that fails to load on the first POST', () => {
  it('answers a JSON-RPC internal error, logs why, and the next POST loads it', async () => {
    const { logger, context, post, loads } = await routesFailingToLoad(1)
    try {
      // Was a plain 500 {error:{code:'INTERNAL',message:'Internal server error.'}} (the app's).
      expect(await post()).toEqual({
        status: 500,
        body: {
          jsonrpc: '2.0',
          error: {
            code: -32603,
            message: 'Internal error: the MCP server failed to load; the next request tries again.',
          },
          id: null,
        },
      })
      expect(logger.lines.join('\n')).toMatch(
        /POST \/mcp: the MCP server module \(@modelcontextprotocol\/sdk\) failed to load, the next request tries again: Error: Cannot find package '@modelcontextprotocol\/sdk'/,
      )
      const second = await post()
      expect(second.status).toBe(200)
      expect(second.body.result.serverInfo.name).toBe('toolsel')
      expect(loads()).toBe(2)
    } finally {
      await context.close()
    }
  }, 60_000)
})

describe('an MCP SDK that keeps failing to load', () => {
  it('logs the stack at the first failed POST, then one short line each (was: the stack each time)', async () => {
    const { logger, context, post, loads } = await routesFailingToLoad(3)
    const mcpLines = () => logger.lines.filter((line) => line.includes('POST /mcp'))
    const stackLines = (line: string) => line.split('\n').filter((l) => /^\s+at /.test(l)).length
    try {
      for (let i = 0; i < 3; i++) expect((await post()).status).toBe(500)
      const [first, ...rest] = mcpLines()
      expect(stackLines(first!)).toBeGreaterThan(0)
      expect(rest).toHaveLength(2)
      for (const [i, line] of rest.entries()) {
        expect(line.split('\n')).toHaveLength(1)
        expect(line).toContain(
          `POST /mcp: the MCP server module still fails to load (${i + 2} failed loads in a row, the stack was logged at the first): Cannot find package '@modelcontextprotocol/sdk'`,
        )
      }
      // The next load works, and is kept.
      expect((await post()).status).toBe(200)
      expect((await post()).status).toBe(200)
      expect(loads()).toBe(4)
    } finally {
      await context.close()
    }
  }, 60_000)
})

describe('POSTs that wait on one failed load', () => {
  it('log it once, not once per POST (was: "2 failed loads in a row" after one load)', async () => {
    const { logger, context, post, loads } = await routesFailingToLoad(1)
    try {
      const answers = await Promise.all([post(), post(), post()])
      expect(answers.map((answer) => answer.status)).toEqual([500, 500, 500])
      expect(loads()).toBe(1)
      const lines = logger.lines.filter((line) => line.includes('POST /mcp'))
      expect(lines).toHaveLength(1)
      expect(lines[0]).toContain('failed to load, the next request tries again')
      expect(lines.join('\n')).not.toContain('failed loads in a row')
      expect((await post()).status).toBe(200)
      expect(loads()).toBe(2)
    } finally {
      await context.close()
    }
  }, 60_000)
})
