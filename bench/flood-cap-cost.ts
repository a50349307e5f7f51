/**
 * What the gateway's flood cap (`gateway.maxServerMessagesPerSecond`) costs per message of a
 * server's own (not a test): `OwnMessageCount.read` alone, and the whole stdio read path
 * (`BoundedReadBuffer.append` of 64 KiB chunks of log notifications, then `readMessage` for each,
 * which parses and counts it), in ns per message, medians of `--turns`. `--checkout` is the tree
 * whose src/ is measured (e.g. /work/ci-base for the code before a change), so before and after
 * run from this one script; the cap is 1,000,000 so neither trips.
 *
 *   node --import tsx bench/flood-cap-cost.ts [--checkout .] [--messages 500000] [--turns 9]
 * @module
 */
import { loadavg } from 'node:os'
import { resolve } from 'node:path'
import { pathToFileURL } from 'node:url'
import type { JSONRPCMessage } from '@modelcontextprotocol/sdk/types.js'
import { benchArgs, wholeNumber } from './bench-args.ts'
import { median } from './lib/measure.ts'
import type * as Module from '../src/mcp/gateway/bounded-read-buffer.ts'

const { values } = benchArgs(import.meta.url, {
  options: {
    checkout: { type: 'string', default: '.' },
    messages: { type: 'string', default: '500000' },
    turns: { type: 'string', default: '9' },
  },
})
const messages = wholeNumber(import.meta.url, '--messages', values.messages, 1000, 1_000_000)
const turns = wholeNumber(import.meta.url, '--turns', values.turns, 1, 99)
const source = resolve(values.checkout!, 'src/mcp/gateway/bounded-read-buffer.ts')
const { BoundedReadBuffer, OwnMessageCount } = (await import(
  pathToFileURL(source).href
)) as typeof Module

const CAP = 1_000_000
const note: JSONRPCMessage = {
  jsonrpc: '2.0',
  method: 'notifications/message',
  params: { level: 'info', data: 'busy' },
}
const line = `${JSON.stringify(note)}\n`
const perChunk = Math.floor((64 * 1024) / line.length)
const chunk = Buffer.from(line.repeat(perChunk))

function countOnly(): number {
  const count = new OwnMessageCount(CAP)
  const started = process.hrtime.bigint()
  for (let i = 0; i < messages; i += 1) count.read(note)
  return Number(process.hrtime.bigint() - started) / messages
}

function readPath(): number {
  const buffer = new BoundedReadBuffer(8 * 1024 * 1024, () => undefined, new OwnMessageCount(CAP))
  let read = 0
  const started = process.hrtime.bigint()
  while (read < messages) {
    buffer.append(chunk)
    while (buffer.readMessage()) read += 1
  }
  return Number(process.hrtime.bigint() - started) / read
}

// One warm-up turn of each, not counted.
countOnly()
readPath()
const count: number[] = []
const path: number[] = []
for (let turn = 0; turn < turns; turn += 1) {
  count.push(countOnly())
  path.push(readPath())
}
console.log(
  JSON.stringify({
    checkout: resolve(values.checkout!),
    messages,
    turns,
    countNsPerMessage: Number(median(count).toFixed(1)),
    readPathNsPerMessage: Number(median(path).toFixed(1)),
    load: loadavg()[0].toFixed(1),
  }),
)
