/**
 * "Uploads committed after failure": a PUT answered 504 TIMEOUT, or whose client went away, used
 * to be saved and served seconds later. Now a PUT either commits and answers 2xx, or answers an
 * error and changes nothing, before or after a restart.
 */
import { mkdtemp } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { listenApp } from '../helpers/listen-app.ts'
import { describe, expect, it } from 'vitest'
import { createComponents } from '../../src/components.ts'
import { parseConfig, type ConfigLayer } from '../../src/config/load-config.ts'
import { createMemoryLogger } from '../../src/log.ts'
import { createApp } from '../../src/server/app.ts'
import { ToolselService } from '../../src/service/toolsel-service.ts'

/** A library of `count` tools whose descriptions carry `version`. */
function toolsBody(version: string, count: number): string {
  return JSON.stringify(
    Array.from({ length: count }, (_, index) => ({
      id: `t.tool_${index}`,
      name: `tool_${index}`,
      description: `Does thing number ${index} of the ${version} edition, with some more words to index.`,
    })),
  )
}

async function startService(indexDir: string, layer: ConfigLayer = {}) {
  const config = parseConfig({
    ...layer,
    library: { default: 'demo', indexDir, loadAll: true },
    log: { level: 'silent' },
  })
  const logger = createMemoryLogger()
  const service = new ToolselService(config, logger, createComponents(config, logger))
  await service.start()
  return { service, app: createApp(service) }
}

const put = (body: string): RequestInit => ({
  method: 'PUT',
  body,
  headers: { 'content-type': 'application/json' },
})

describe('uploads that never lie', () => {
  it('a PUT answered 504 never changes what is served, before or after a restart', async () => {
    const indexDir = await mkdtemp(join(tmpdir(), 'toolsel-commit-'))
    const first = await startService(indexDir)
    expect((await first.app.request('/v1/libraries/lib', put(toolsBody('v1', 50)))).status).toBe(
      201,
    )
    const v1 = first.service.library('lib').library.contentHash

    const hurried = await startService(indexDir, { server: { buildTimeoutMs: 15 } })
    const statuses: number[] = []
    let served = v1
    for (let attempt = 0; attempt < 6; attempt += 1) {
      const body = toolsBody(`v${attempt + 2}`, 3000)
      const response = await hurried.app.request('/v1/libraries/lib', put(body))
      statuses.push(response.status)
      if (response.status < 300) served = hurried.service.library('lib').library.contentHash
      else
        expect(((await response.json()) as { error: { code: string } }).error.code).toBe('TIMEOUT')
      // Whatever is still running behind a 504 has finished (or given up) after this.
      await new Promise((resolve) => setTimeout(resolve, 300))
      expect(hurried.service.library('lib').library.contentHash).toBe(served)
    }
    expect(statuses).toContain(504)

    const restarted = await startService(indexDir)
    expect(restarted.service.library('lib').library.contentHash).toBe(served)
  })

  it('a PUT whose client goes away never commits', async () => {
    const indexDir = await mkdtemp(join(tmpdir(), 'toolsel-commit-'))
    const { service, app } = await startService(indexDir)
    expect((await app.request('/v1/libraries/lib', put(toolsBody('v1', 50)))).status).toBe(201)
    const v1 = service.library('lib').library.contentHash
    const { url, close } = await listenApp(app.fetch)
    try {
      for (let attempt = 0; attempt < 3; attempt += 1) {
        const client = new AbortController()
        const request = fetch(`${url}/v1/libraries/lib`, {
          ...put(toolsBody(`gone-${attempt}`, 3000)),
          signal: client.signal,
        })
        setTimeout(() => client.abort(), 20)
        await expect(request).rejects.toThrow()
        await new Promise((resolve) => setTimeout(resolve, 300))
      }
      await new Promise((resolve) => setTimeout(resolve, 1000))
      expect(service.library('lib').library.contentHash).toBe(v1)
    } finally {
      await close()
    }
    const restarted = await startService(indexDir)
    expect(restarted.service.library('lib').library.contentHash).toBe(v1)
  })
})
