/**
 * The largest body limit (`server.bodyLimitBytes` 512 MiB = 536,870,912) is 24 bytes more than
 * one string holds (MAX_TEXT_CHARS, 536,870,888). A plain-ASCII upload within those 24 bytes
 * passes the body limit, streamed over real HTTP; its decode in the import worker was V8's
 * "Cannot create a string longer than…", a 500 INTERNAL. It is a 413 PAYLOAD_TOO_LARGE naming
 * the limit, and nothing is written. Costs a 512 MiB body on localhost (15 s at load 14).
 */
import { request } from 'node:http'
import { mkdtemp, readdir, rm } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { afterAll, describe, expect, it } from 'vitest'
import { createComponents } from '../../src/components.ts'
import { parseConfig } from '../../src/config/load-config.ts'
import { createMemoryLogger } from '../../src/log.ts'
import { MAX_TEXT_CHARS } from '../../src/read-text-file.ts'
import { createApp } from '../../src/server/app.ts'
import { ToolselService } from '../../src/service/toolsel-service.ts'
import { listenApp } from '../helpers/listen-app.ts'

const MAX_BODY_LIMIT_BYTES = 512 * 1024 * 1024
const work = await mkdtemp(join(tmpdir(), 'toolsel-body-one-string-'))
afterAll(() => rm(work, { recursive: true, force: true }))

/** PUTs `bytes` spaces (plain ASCII) in 8 MiB chunks of one buffer, with a content-length. */
function putSpaces(url: string, bytes: number): Promise<{ status: number; body: string }> {
  const chunk = Buffer.alloc(8 * 1024 * 1024, 0x20)
  return new Promise((resolve, reject) => {
    const req = request(
      `${url}/v1/libraries/huge`,
      {
        method: 'PUT',
        headers: { 'content-type': 'application/json', 'content-length': String(bytes) },
      },
      (response) => {
        const parts: Buffer[] = []
        response.on('data', (part: Buffer) => parts.push(part))
        response.on('end', () =>
          resolve({ status: response.statusCode!, body: Buffer.concat(parts).toString() }),
        )
        response.on('error', reject)
      },
    )
    req.on('error', reject)
    let left = bytes
    const write = (): void => {
      while (left > 0) {
        const piece = left >= chunk.length ? chunk : chunk.subarray(0, left)
        left -= piece.length
        if (!req.write(piece)) {
          req.once('drain', write)
          return
        }
      }
      req.end()
    }
    write()
  })
}

describe('an upload body of more characters than one string holds, within the body limit', () => {
  it('is 413 PAYLOAD_TOO_LARGE naming the limit, and writes nothing', async () => {
    expect(MAX_TEXT_CHARS).toBeLessThan(MAX_BODY_LIMIT_BYTES)
    const indexDir = join(work, 'index')
    const config = parseConfig({
      library: { default: 'demo', indexDir, loadAll: true },
      server: { bodyLimitBytes: MAX_BODY_LIMIT_BYTES },
      log: { level: 'silent' },
    })
    const logger = createMemoryLogger()
    const service = new ToolselService(config, logger, createComponents(config, logger))
    await service.start()
    const http = await listenApp(createApp(service).fetch)
    try {
      const before = await readdir(indexDir).catch(() => [])
      const { status, body } = await putSpaces(http.url, MAX_TEXT_CHARS + 1)
      expect(status, body).toBe(413)
      const { error } = JSON.parse(body) as { error: { code: string; message: string } }
      expect(error.code).toBe('PAYLOAD_TOO_LARGE')
      expect(error.message).toContain(
        `more than one string holds (${MAX_TEXT_CHARS.toLocaleString('en-US')})`,
      )
      expect(await readdir(indexDir).catch(() => [])).toEqual(before)
      expect(service.listLibraries().map((entry) => entry.name)).not.toContain('huge')
    } finally {
      await http.close()
    }
  }, 120_000)
})
