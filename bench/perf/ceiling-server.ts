/**
 * The `--ceiling` server of bench/perf.ts: a bare hono app on @hono/node-server (as `toolsel serve`
 * runs) that reads each POST body and answers a precomputed response, a real toolsel response of
 * the mean size. Its throughput is what HTTP, hono and the load generator alone allow.
 *
 *   node --import tsx bench/perf/ceiling-server.ts <response file> <port>
 * @module
 */
import { readFile } from 'node:fs/promises'
import { serve } from '@hono/node-server'
import { Hono } from 'hono'

const [file, port] = process.argv.slice(2)
const response = await readFile(file, 'utf8')
const app = new Hono()
app.get('/readyz', (c) => c.json({ status: 'ready' }))
app.post('/v1/select-tools', async (c) => {
  await c.req.text()
  return c.body(response, 200, { 'content-type': 'application/json' })
})
serve({ fetch: app.fetch, port: Number(port), hostname: '127.0.0.1' })
