/**
 * The worker thread of examples-body.ts: decodes a large examples body (bytes moved here, already
 * checked as UTF-8 on the main thread), counts its JSON values, parses it and checks it against
 * the route's schema, and posts one `ExamplesBodyReply`: the same answers `jsonRequest` and
 * `jsonBody` give on the main thread, where each piece held the event loop in one turn. Kept for
 * the next body (kept-workers.ts): a request per message.
 * @module
 */
import { parentPort } from 'node:worker_threads'
import { decodeUtf8 } from '../read-text-file.ts'
import { addExamplesSchema } from './add-examples-schema.ts'
import type { ExamplesBodyReply, ExamplesBodyRequest, PackedStrings } from './examples-body.ts'
import { countJsonValues } from './validate.ts'

function check({ bytes, maxValues, maxExamples }: ExamplesBodyRequest): ExamplesBodyReply {
  const text = decodeUtf8(bytes)
  if (countJsonValues(text, maxValues) > maxValues) return { tooManyValues: true }
  let value: unknown
  try {
    value = JSON.parse(text)
  } catch {
    return { malformed: true }
  }
  const result = addExamplesSchema(maxExamples).safeParse(value)
  return result.success
    ? { packed: packStrings(result.data.examples) }
    : { issues: result.error.issues }
}

/**
 * The examples' strings (each instruction, then its tools) in one buffer, moved back to the main
 * thread: a structured clone of 10,000 instructions of 3,200 characters cost the main thread
 * 0.45-1.1 s in one piece to read (load 12). A string of char codes under 256 is stored as
 * latin1 (one byte each), any other as UTF-16 code units (a lone surrogate kept as it is).
 */
function packStrings(
  examples: ReadonlyArray<{ instruction: string; tools: string[] }>,
): PackedStrings {
  const strings: string[] = []
  const toolCounts = new Int32Array(examples.length)
  examples.forEach((example, at) => {
    strings.push(example.instruction, ...example.tools)
    toolCounts[at] = example.tools.length
  })
  const lengths = new Int32Array(strings.length)
  const wide = new Uint8Array(strings.length)
  let total = 0
  strings.forEach((text, at) => {
    wide[at] = /[^\u0000-\u00ff]/.test(text) ? 1 : 0
    lengths[at] = wide[at] ? 2 * text.length : text.length
    total += lengths[at]
  })
  const bytes = Buffer.allocUnsafeSlow(total)
  let offset = 0
  strings.forEach((text, at) => {
    offset += bytes.write(text, offset, wide[at] ? 'utf16le' : 'latin1')
  })
  return { bytes: new Uint8Array(bytes.buffer, 0, total), lengths, wide, toolCounts }
}

// One request per message, for as long as the thread is kept (kept-workers.ts).
const port = parentPort!
port.on('message', (request: ExamplesBodyRequest) => {
  const reply = check(request)
  port.postMessage(
    reply,
    'packed' in reply
      ? ([
          reply.packed.bytes.buffer,
          reply.packed.lengths.buffer,
          reply.packed.wide.buffer,
          reply.packed.toolCounts.buffer,
        ] as ArrayBuffer[])
      : [],
  )
})
