/**
 * Upload bodies served by @hono/node-server are read from the Node request itself (round 50,
 * srv55): through hono's web stream (`Readable.toWeb`, a promise and a queue per chunk) the read
 * took ~10-15% more server CPU (bench/README round 50, srv55). Over real HTTP: a PUT with a
 * Content-Length makes no web stream and saves what was sent; a chunked one (no Content-Length)
 * still goes through the web stream; a client gone mid-body is the same ABORTED as before,
 * nothing written.
 */
import { request } from 'node:http'
import { readdir } from 'node:fs/promises'
import { Readable } from 'node:stream'
import { Hono, type MiddlewareHandler } from 'hono'
import { bodyLimit as honoBodyLimit } from 'hono/body-limit'
import { afterEach, describe, expect, it, vi } from 'vitest'
import { idleImportWorkers } from '../../src/store/upload-import.ts'
import { sendInHalves } from '../helpers/half-body.ts'
import { listenApp, type ListeningApp } from '../helpers/listen-app.ts'
import { createTestApp } from './test-service.ts'

let served: ListeningApp | undefined
afterEach(async () => {
  vi.restoreAllMocks()
  await served?.close()
  served = undefined
})

/** An MCP tools/list body of `count` tools, about 150 bytes each. */
function toolsBody(count: number): Buffer {
  const tools = Array.from({ length: count }, (_, index) => ({
    name: `send_item_${index}`,
    description: `Sends item ${index} to the warehouse number ${index % 97}.`,
    inputSchema: { type: 'object', properties: { item: { type: 'string' } } },
  }))
  return Buffer.from(JSON.stringify({ tools }))
}

/** PUTs `body` in 16 KiB writes, with its Content-Length or chunked; `cutAt`: closes there. */
function putBody(
  url: string,
  body: Buffer,
  options: { chunked?: boolean; cutAt?: number } = {},
): Promise<{ status: number; text: string } | 'cut'> {
  return new Promise((resolve, reject) => {
    const req = request(
      `${url}/v1/libraries/uploaded`,
      {
        method: 'PUT',
        headers: {
          'content-type': 'application/json',
          ...(options.chunked ? {} : { 'content-length': String(body.length) }),
        },
      },
      (response) => {
        const parts: Buffer[] = []
        response.on('data', (part: Buffer) => parts.push(part))
        response.on('end', () =>
          resolve({ status: response.statusCode!, text: Buffer.concat(parts).toString() }),
        )
      },
    )
    req.on('error', (error) => (options.cutAt === undefined ? reject(error) : resolve('cut')))
    const end = options.cutAt ?? body.length
    for (let at = 0; at < end; at += 16 * 1024)
      req.write(body.subarray(at, Math.min(at + 16 * 1024, end)))
    if (options.cutAt === undefined) req.end()
    else setTimeout(() => req.destroy(), 200)
  })
}

describe('an upload body read from the Node request', () => {
  it('with a Content-Length: no web stream, and the tools sent are saved', async () => {
    const { app, service } = await createTestApp()
    served = await listenApp(app.fetch)
    const toWeb = vi.spyOn(Readable, 'toWeb')
    const body = toolsBody(4000)
    expect(body.length).toBeGreaterThan(512 * 1024)
    const answer = await putBody(served.url, body)
    expect(answer).toMatchObject({ status: 201 })
    expect(toWeb).not.toHaveBeenCalled()
    expect(service.library('uploaded').library.size).toBe(4000)
  })

  it('chunked (no Content-Length): through the web stream, the same tools', async () => {
    const { app, service } = await createTestApp()
    served = await listenApp(app.fetch)
    const toWeb = vi.spyOn(Readable, 'toWeb')
    const answer = await putBody(served.url, toolsBody(3000), { chunked: true })
    expect(answer).toMatchObject({ status: 201 })
    expect(toWeb).toHaveBeenCalled()
    expect(service.library('uploaded').library.size).toBe(3000)
  })

  it('a client gone mid-body: ABORTED at debug (no ERROR), nothing written', async () => {
    const { app, service, logger, indexDir } = await createTestApp()
    served = await listenApp(app.fetch)
    const before = await readdir(indexDir)
    const body = toolsBody(4000)
    expect(await putBody(served.url, body, { cutAt: body.length >> 1 })).toBe('cut')
    await expect
      .poll(() => logger.lines.filter((line) => line.includes('the client closed')).length)
      .toBe(1)
    expect(logger.lines.filter((line) => line.includes('ERROR'))).toEqual([])
    expect(await readdir(indexDir)).toEqual(before)
    expect(service.listLibraries().map((entry) => entry.name)).not.toContain('uploaded')
  })
})

/**
 * An app that mounts ours behind hono's own `bodyLimit` (which looks at `c.req.raw.body` first,
 * making @hono/node-server build the web stream over the Node request) or a middleware that read
 * the body with hono's `c.req.json()`.
 */
async function mountedBehind(middleware: MiddlewareHandler) {
  const made = await createTestApp()
  const outer = new Hono()
  outer.use('*', middleware)
  outer.route('/', made.app)
  return { ...made, outer }
}

/** `putBody`, failed if no answer came in `ms`. */
function putWithin(url: string, body: Buffer, ms: number) {
  return Promise.race([
    putBody(url, body),
    new Promise<'no answer'>((resolve) => setTimeout(() => resolve('no answer'), ms).unref()),
  ])
}

describe('a body whose web stream something else touched first', () => {
  it('behind hono bodyLimit (the web stream made, not read): the 4 MiB PUT is answered', async () => {
    const { outer, service } = await mountedBehind(honoBodyLimit({ maxSize: 64 * 1024 * 1024 }))
    served = await listenApp(outer.fetch)
    const body = toolsBody(28_000)
    expect(body.length).toBeGreaterThan(4 * 1024 * 1024)
    expect(await putWithin(served.url, body, 15_000)).toMatchObject({ status: 201 })
    expect(service.library('uploaded').library.size).toBe(28_000)
  }, 30_000)

  it('read with c.req.json() by a middleware: read again from hono body cache', async () => {
    const seen: number[] = []
    const { outer, service } = await mountedBehind(async (c, next) => {
      if (c.req.method === 'PUT') seen.push(((await c.req.json()) as { tools: [] }).tools.length)
      await next()
    })
    served = await listenApp(outer.fetch)
    expect(await putWithin(served.url, toolsBody(3000), 15_000)).toMatchObject({ status: 201 })
    expect(seen).toEqual([3000])
    expect(service.library('uploaded').library.size).toBe(3000)
  }, 30_000)

  it('read from the web stream by a middleware: a 500 that says so, logged, not a hang or a 400', async () => {
    const { outer, service, logger } = await mountedBehind(async (c, next) => {
      if (c.req.method === 'PUT') await new Response(c.req.raw.body).arrayBuffer()
      await next()
    })
    served = await listenApp(outer.fetch)
    const answer = await putWithin(served.url, toolsBody(3000), 15_000)
    expect(answer).toMatchObject({ status: 500 })
    const { error } = JSON.parse((answer as { text: string }).text) as {
      error: { code: string; message: string }
    }
    expect(error.code).toBe('INTERNAL')
    expect(error.message).toMatch(/already read/)
    expect(service.listLibraries().map((entry) => entry.name)).not.toContain('uploaded')
    // Logged as the server's other 500s are: an ERROR with the route, the stack and the request
    // id (was answered only, nothing in the log).
    const errors = logger.lines.filter((line) => line.includes('ERROR'))
    expect(errors).toHaveLength(1)
    expect(errors[0]).toMatch(/Internal error on PUT \/v1\/libraries\/uploaded: .*already read/)
    expect(errors[0]).toMatch(/\n\s+at /)
    expect(errors[0]).toMatch(/"requestId":"[^"]+"/)
  }, 30_000)
})

describe('an upload whose import runs in a worker', () => {
  it('starts the import worker while its body comes, and the import takes that thread', async () => {
    const { app, service } = await createTestApp({
      config: { server: { importWorkerMinChars: 1024 } },
    })
    served = await listenApp(app.fetch)
    // Another test's kept thread (or none) is not this upload's: wait for none idle.
    await expect.poll(() => idleImportWorkers(), { timeout: 15_000 }).toEqual([])
    const body = toolsBody(3000)
    const answered = await sendInHalves(
      `${served!.url}/v1/libraries/uploaded`,
      'PUT',
      body,
      idleImportWorkers,
    )
    expect(answered).toMatchObject({ status: 201 })
    const { readied } = answered
    expect(readied).toHaveLength(1)
    expect(service.library('uploaded').library.size).toBe(3000)
    // The import ran on the thread started during the read, kept for the next upload.
    expect(idleImportWorkers()).toEqual(readied)
  }, 30_000)
})
