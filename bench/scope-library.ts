/**
 * The library of the scope benchmarks (bench/scope-probe.ts, bench/scope-union-probe.ts):
 * `size` tools of 200 servers (`srv0`…`srv199`) and 50 tags (bench/server-tools.ts), uploaded as `big` to a server in
 * process, and `search_tools` over `/mcp?library=big&<query>`.
 * @module
 */
import { mkdtemp, rm } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { serveApp } from './serve-app.ts'
import { serverTools } from './server-tools.ts'
import { callMcpTool } from '../test/helpers/mcp-fetch.ts'

export interface ScopeLibrary {
  url: string
  /** `search_tools` for "record status" in the scope of `query` (`servers=…&tags=…`). */
  search(query: string): Promise<{ status: number; text: string }>
  close(): Promise<void>
}

export async function serveScopeLibrary(size: number): Promise<ScopeLibrary> {
  const tools = serverTools(size)
  const indexDir = await mkdtemp(join(tmpdir(), 'toolsel-scope-library-'))
  const server = await serveApp({ library: { default: 'demo', loadAll: false, indexDir } })
  const close = async () => {
    await server.close()
    await rm(indexDir, { recursive: true, force: true })
  }
  const put = await fetch(`${server.url}/v1/libraries/big`, {
    method: 'PUT',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify(tools),
  })
  const answer = await put.text()
  if (put.status !== 201) {
    await close()
    throw new Error(`uploading the library answered ${put.status}: ${answer.slice(0, 200)}`)
  }
  const search = (query: string) =>
    callMcpTool(`${server.url}/mcp?library=big&${query}`, 'search_tools', {
      query: 'record status',
    }).then(async (r) => ({ status: r.status, text: await r.text() }))
  return { url: server.url, search, close }
}
