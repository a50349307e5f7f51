/**
 * server.maxLibraryToolsBytes bounds what one upload's tools take once imported (an upload within
 * the body limit may expand: Microsoft Graph's 1.5 M values are 106 MB of tools): past it a 413
 * naming the setting, and nothing changes. In the process (a small body) and in the import
 * worker, over real HTTP.
 */
import { rm } from 'node:fs/promises'
import { afterEach, describe, expect, it } from 'vitest'
import { listenApp, type ListeningApp } from '../helpers/listen-app.ts'
import { createTestApp } from './test-service.ts'

const MAX_BYTES = 50_000
const tools = (count: number) =>
  Array.from({ length: count }, (_, index) => ({
    id: `svc.op_${index}`,
    name: `op_${index}`,
    description: `Looks up record ${index}: ${'its status, owner and the last changes. '.repeat(8)}`,
    parameters: { type: 'object', properties: { id: { type: 'string' } } },
  }))

let served: ListeningApp | undefined
let indexDir: string | undefined
afterEach(async () => {
  await served?.close()
  served = undefined
  if (indexDir !== undefined) await rm(indexDir, { recursive: true, force: true })
  indexDir = undefined
})

describe('PUT /v1/libraries/{name} past server.maxLibraryToolsBytes', () => {
  for (const worker of [false, true]) {
    it(`answers 413 naming the setting and keeps nothing (${worker ? 'import worker' : 'in the process'})`, async () => {
      const created = await createTestApp({
        config: {
          server: {
            maxLibraryToolsBytes: MAX_BYTES,
            ...(worker && { importWorkerMinChars: 0 }),
          },
        },
      })
      // createTestApp's own temporary index directory: removed after the test.
      indexDir = created.indexDir
      served = await listenApp(created.app.fetch)
      const put = (body: unknown) =>
        fetch(`${served!.url}/v1/libraries/big`, {
          method: 'PUT',
          headers: { 'content-type': 'application/json' },
          body: JSON.stringify(body),
        })
      const refused = await put(tools(200))
      expect(refused.status).toBe(413)
      const { error } = await refused.json()
      expect(error.code).toBe('PAYLOAD_TOO_LARGE')
      expect(error.message).toMatch(
        /^The tools of library "big" take [\d,]+ bytes as JSON once imported, more than server\.maxLibraryToolsBytes \(50,000\); import fewer operations or tools at once\. Nothing was changed\.$/,
      )
      expect((await fetch(`${served.url}/v1/libraries/big`)).status).toBe(404)
      // Under the limit: imported.
      expect((await put(tools(20))).status).toBe(201)
    })
  }
})
