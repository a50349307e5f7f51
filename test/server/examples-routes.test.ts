/**
 * Usage examples over real HTTP (a real port, `fetch`): adding them, feedback, validation, the
 * cap, de-duplication, a library swap, and a restart of the service on the saved index.
 */
import { createHash } from 'node:crypto'
import { mkdtemp, readFile, writeFile } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { sendInHalves } from '../helpers/half-body.ts'
import { listenApp } from '../helpers/listen-app.ts'
import { afterEach, describe, expect, it } from 'vitest'
import { createComponents } from '../../src/components.ts'
import { parseConfig, type ConfigLayer } from '../../src/config/load-config.ts'
import { cachedSelfCheck, exampleMemoryFor } from '../../src/examples/memory-selection.ts'
import { createMemoryLogger } from '../../src/log.ts'
import { createApp } from '../../src/server/app.ts'
import { MAX_EXAMPLE_TOOLS } from '../../src/examples/usage-example.ts'
import { checkOnWorker, EXAMPLES_BODY_THREAD_ABOVE_BYTES } from '../../src/server/examples-body.ts'
import { workerSlot, workerSlotsInUse } from '../../src/worker-slots.ts'
import { idleWorkerThreads } from '../../src/kept-workers.ts'
import { ToolselError } from '../../src/errors.ts'
import { MAX_EXAMPLES_PER_REQUEST } from '../../src/server/schemas.ts'
import { ToolselService } from '../../src/service/toolsel-service.ts'
import { SAMPLE_TOOLS } from '../helpers/sample-tools.ts'

interface Running {
  url: string
  service: ToolselService
  close(): Promise<void>
}

const running: Running[] = []

afterEach(async () => {
  for (const server of running.splice(0)) await server.close()
})

/** `toolsel serve` in process: the service loads `library.default` from disk, on port 0. */
async function start(indexDir: string, layer: ConfigLayer = {}): Promise<Running> {
  const config = parseConfig({
    ...layer,
    library: { default: 'sample', indexDir, ...(layer.library as object | undefined) },
  })
  const logger = createMemoryLogger()
  const service = new ToolselService(config, logger, createComponents(config, logger))
  await service.start()
  const { url, close } = await listenApp(createApp(service).fetch)
  const handle: Running = { url, service, close }
  running.push(handle)
  return handle
}

/** A fresh index directory holding the sample tools as a tool file (`library.default` = it). */
async function sampleDir(): Promise<{ indexDir: string; toolFile: string }> {
  const indexDir = await mkdtemp(join(tmpdir(), 'toolsel-examples-'))
  const toolFile = join(indexDir, 'sample.json')
  await writeFile(toolFile, JSON.stringify(SAMPLE_TOOLS))
  return { indexDir, toolFile }
}

/** The default library's cached example-memory self-check (undefined: not run yet). */
function selfCheckOf(service: ToolselService) {
  const examples = service.library().examples
  const resolved = exampleMemoryFor(examples, service.config.examples)
  return resolved && cachedSelfCheck(resolved.memory, resolved.options)
}

async function post(url: string, body: unknown): Promise<{ status: number; json: any }> {
  const response = await fetch(url, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify(body),
  })
  return { status: response.status, json: await response.json() }
}

// Words that appear in no sample tool: only the examples can connect them to a tool.
const SLANG = 'holler at the crew about the gig tonight'
const EXAMPLES = [
  { instruction: 'holler at the crew about the gig tonight', tools: ['sms.send_sms'] },
  { instruction: 'holler at the crew about the gig tomorrow', tools: ['sms.send_sms'] },
  { instruction: 'holler at the crew about the gig on friday', tools: ['sms.send_sms'] },
  {
    instruction: 'Is it going to rain in Oslo and wire me the numbers',
    tools: ['weather.get_forecast', 'mail.send_email'],
  },
]

describe('usage examples over HTTP', () => {
  it('adds examples, skips duplicates, refuses unknown tool ids, and survives a restart', async () => {
    const { indexDir, toolFile } = await sampleDir()
    const first = await start(indexDir, { library: { default: toolFile } })
    const library = first.service.defaultLibraryName
    expect(library).toBe('sample')

    const before = await post(`${first.url}/v1/select-tools`, { instruction: SLANG })
    expect(before.json.examples).toBeUndefined()
    expect(before.json.tools.map((tool: { id: string }) => tool.id)).not.toEqual(['sms.send_sms'])

    const added = await post(`${first.url}/v1/libraries/sample/examples`, { examples: EXAMPLES })
    expect(added.status).toBe(200)
    expect(added.json).toEqual({
      library: 'sample',
      added: 4,
      duplicates: 0,
      evicted: 0,
      examples: 4,
      version: 1,
    })
    // Same instruction in other case and spacing, same tools: a duplicate.
    const again = await post(`${first.url}/v1/libraries/sample/examples`, {
      examples: [
        { instruction: '  HOLLER at the crew   about the gig tonight ', tools: ['sms.send_sms'] },
      ],
    })
    expect(again.json).toMatchObject({ added: 0, duplicates: 1, examples: 4, version: 1 })

    const unknown = await post(`${first.url}/v1/libraries/sample/examples`, {
      examples: [
        { instruction: 'book a table', tools: ['food.book_table', 'sms.send_sms', 'x.y'] },
      ],
    })
    expect(unknown.status).toBe(400)
    expect(unknown.json.error.code).toBe('INVALID_INPUT')
    expect(unknown.json.error.message).toContain('"food.book_table", "x.y"')
    const invalid = await post(`${first.url}/v1/libraries/sample/examples`, {
      examples: [{ instruction: '', tools: [] }],
    })
    expect(invalid.status).toBe(400)
    // The records of an examples file posted as they are: the answer says what to wrap them in.
    const bare = await post(`${first.url}/v1/libraries/sample/examples`, EXAMPLES)
    expect(bare.status).toBe(400)
    expect(bare.json.error.message).toBe(
      'Invalid request body: send the examples as {"examples": [{"instruction": "…", "tools": ["<tool id>", …]}, …]}, not a bare array.',
    )
    expect(
      (await post(`${first.url}/v1/libraries/none/examples`, { examples: EXAMPLES })).status,
    ).toBe(404)
    const deleteDefault = await fetch(`${first.url}/v1/libraries/sample`, { method: 'DELETE' })
    expect(deleteDefault.status).toBe(400)
    expect((await deleteDefault.json()).error.message).toBe(
      'Library "sample" is the default library and can\'t be deleted; restart the service with another default first (library.default: serve --library <name>, TOOLSEL_LIBRARY).',
    )
    const badName = await post(`${first.url}/v1/libraries/-sample/examples`, { examples: EXAMPLES })
    expect(badName.json.error.message).toContain('starting with a letter or digit')

    // The memory's self-check ran when the examples were added, not on the next request.
    expect(selfCheckOf(first.service)).toMatchObject({ proposed: expect.any(Number) })
    const after = await post(`${first.url}/v1/select-tools`, { instruction: SLANG })
    expect(after.json.tools.map((tool: { id: string }) => tool.id)).toEqual(['sms.send_sms'])
    expect(after.json.examples).toEqual({ similarity: 1, applied: true })

    // Stored with the index: the tool file became a saved index holding the examples.
    const manifest = JSON.parse(await readFile(join(indexDir, 'sample', 'manifest.json'), 'utf8'))
    expect(manifest.examples).toMatchObject({ file: 'examples.jsonl', count: 4, version: 1 })
    const lines = (await readFile(join(indexDir, 'sample', 'examples.jsonl'), 'utf8'))
      .trim()
      .split('\n')
    expect(lines.map((line) => JSON.parse(line).instruction)).toEqual(
      EXAMPLES.map((e) => e.instruction),
    )
    await first.close()
    running.splice(running.indexOf(first), 1)

    // Restart on the saved index: same examples, same answer.
    const second = await start(indexDir)
    expect(selfCheckOf(second.service)).toEqual(selfCheckOf(first.service))
    const summary = (await (await fetch(`${second.url}/v1/libraries/sample`)).json()) as any
    expect(summary.examples).toEqual({ count: 4, version: 1, cap: 20_000 })
    const restarted = await post(`${second.url}/v1/select-tools`, { instruction: SLANG })
    expect(restarted.json.tools.map((tool: { id: string }) => tool.id)).toEqual(['sms.send_sms'])
    expect(restarted.json.examples.applied).toBe(true)
    await second.close()
    running.splice(running.indexOf(second), 1)

    // Restart exactly as before (the tool file as the library): the tools come from the file,
    // the saved examples are carried over, not shadowed.
    const third = await start(indexDir, { library: { default: toolFile } })
    const fromFile = (await (await fetch(`${third.url}/v1/libraries/sample`)).json()) as any
    expect(fromFile.examples).toEqual({ count: 4, version: 1, cap: 20_000 })
    const again3 = await post(`${third.url}/v1/select-tools`, { instruction: SLANG })
    expect(again3.json.tools.map((tool: { id: string }) => tool.id)).toEqual(['sms.send_sms'])
  })

  it('abstains where each tool has one example and similar past requests name other tools', async () => {
    // CRAFT-like: every example is about its own tool, and its closest neighbour about another.
    const single = [
      {
        instruction: 'what is the weather in Oslo right now',
        tools: ['weather.get_current_weather'],
      },
      { instruction: 'what is the weather in Oslo next week', tools: ['weather.get_forecast'] },
      { instruction: 'send Ann a note about the gig tonight', tools: ['mail.send_email'] },
      { instruction: 'send Ann a text about the gig tonight', tools: ['sms.send_sms'] },
      { instruction: 'find flights to Lisbon for Friday', tools: ['travel.search_flights'] },
      { instruction: 'find a hotel in Lisbon for Friday', tools: ['travel.book_hotel'] },
    ]
    const request = 'what is the weather in Oslo this week'
    const ids = (json: any) => json.tools.map((tool: { id: string }) => tool.id)
    for (const [minPrecision, applied] of [
      [undefined, false],
      [0, true],
    ] as const) {
      const { indexDir, toolFile } = await sampleDir()
      const server = await start(indexDir, {
        library: { default: toolFile },
        ...(minPrecision !== undefined && { examples: { minPrecision } }),
      })
      const before = await post(`${server.url}/v1/select-tools`, { instruction: request })
      const added = await post(`${server.url}/v1/libraries/sample/examples`, { examples: single })
      expect(added.json).toMatchObject({ added: single.length })
      const after = await post(`${server.url}/v1/select-tools`, { instruction: request })
      expect(after.json.examples.similarity).toBeGreaterThanOrEqual(0.6)
      expect(after.json.examples.applied).toBe(applied)
      // Answering, it is the closest example's tool set.
      if (applied) expect(ids(after.json)).toEqual(['weather.get_forecast'])
      // Abstaining, the answer is the one the library gave before it had examples.
      else expect(ids(after.json)).toEqual(ids(before.json))
    }
  })

  it('records agent feedback as an example of the default or named library', async () => {
    const { indexDir, toolFile } = await sampleDir()
    const server = await start(indexDir, { library: { default: toolFile } })
    const feedback = await post(`${server.url}/v1/feedback`, {
      instruction: 'tell Ann the flight landed',
      used: ['sms.send_sms', 'sms.send_sms'],
    })
    expect(feedback.status).toBe(200)
    expect(feedback.json).toMatchObject({ library: 'sample', added: 1, examples: 1, version: 1 })
    const named = await post(`${server.url}/v1/feedback`, {
      instruction: 'tell Ann the flight landed',
      library: 'sample',
      used: ['sms.send_sms'],
    })
    expect(named.json).toMatchObject({ added: 0, duplicates: 1, version: 1 })
    const bad = await post(`${server.url}/v1/feedback`, { instruction: 'x', used: ['nope.tool'] })
    expect(bad.status).toBe(400)
    expect(bad.json.error.message).toContain('"nope.tool"')
    // The message speaks of the field the client sent, not of "usage examples".
    expect(bad.json.error.message).toMatch(
      /^The feedback's `used` names tools that library "sample" does not have: "nope\.tool"\./,
    )
    const badExamples = await post(`${server.url}/v1/libraries/sample/examples`, {
      examples: [{ instruction: 'x', tools: ['nope.tool'] }],
    })
    expect(badExamples.json.error.message).toMatch(/^Usage examples name tools that library/)
    expect((await post(`${server.url}/v1/feedback`, { instruction: 'x', used: [] })).status).toBe(
      400,
    )
    expect(
      (await post(`${server.url}/v1/feedback`, { instruction: 'x', library: 'other', used: ['a'] }))
        .status,
    ).toBe(404)
  })

  it('keeps the newest examples within library.maxExamples', async () => {
    const { indexDir, toolFile } = await sampleDir()
    const server = await start(indexDir, { library: { default: toolFile, maxExamples: 3 } })
    const result = await post(`${server.url}/v1/libraries/sample/examples`, { examples: EXAMPLES })
    expect(result.json).toMatchObject({ added: 3, evicted: 1, examples: 3, version: 1 })
    const lines = (await readFile(join(indexDir, 'sample', 'examples.jsonl'), 'utf8'))
      .trim()
      .split('\n')
    expect(lines.map((line) => JSON.parse(line).instruction)).toEqual(
      EXAMPLES.slice(1).map((example) => example.instruction),
    )
    const more = await post(`${server.url}/v1/feedback`, {
      instruction: 'wire Bo the report',
      used: ['mail.send_email'],
    })
    expect(more.json).toMatchObject({ added: 1, evicted: 1, examples: 3, version: 2 })
  })

  it('keeps examples consistent when the library is replaced', async () => {
    const { indexDir, toolFile } = await sampleDir()
    const server = await start(indexDir, { library: { default: toolFile } })
    await post(`${server.url}/v1/libraries/sample/examples`, { examples: EXAMPLES })
    const withoutSms = SAMPLE_TOOLS.filter((tool) => tool.id !== 'sms.send_sms')
    const put = await fetch(`${server.url}/v1/libraries/sample`, {
      method: 'PUT',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify(withoutSms),
    })
    expect(put.status).toBe(200)
    const body = (await put.json()) as any
    expect(body.examples).toEqual({ count: 1, version: 2, cap: 20_000 })
    expect(body.warnings.join(' ')).toContain('sms.send_sms')
    const lines = (await readFile(join(indexDir, 'sample', 'examples.jsonl'), 'utf8'))
      .trim()
      .split('\n')
    expect(lines.map((line) => JSON.parse(line).tools)).toEqual([
      ['weather.get_forecast', 'mail.send_email'],
    ])

    const dropped = await fetch(`${server.url}/v1/libraries/sample?examples=drop`, {
      method: 'PUT',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify(SAMPLE_TOOLS),
    })
    expect(((await dropped.json()) as any).examples).toEqual({ count: 0, version: 3, cap: 20_000 })
  })

  it('saves the same examples.jsonl bytes for a fixed write of more examples than one chunk of lines', async () => {
    // Round 51 (ex55) writes the file from its chunks of lines instead of concatenating them
    // first (a 32 MB Buffer.concat was one turn of ~0.1-0.3 s after the rebuild); the bytes are
    // the ones saved before (the digest was taken from the code of f489ab5e), and the set's own
    // JSON lines.
    const { indexDir, toolFile } = await sampleDir()
    const server = await start(indexDir, { library: { default: toolFile } })
    const examples = Array.from({ length: 700 }, (_, at) => ({
      instruction: `${['text', 'café', '中文 message', 'lone \ud800 half', 'tab\there'][at % 5]} ${at}`,
      tools: at % 3 === 0 ? ['sms.send_sms', 'weather.get_forecast'] : ['sms.send_sms'],
    }))
    const answer = await post(`${server.url}/v1/libraries/sample/examples`, { examples })
    expect(answer).toMatchObject({ status: 200, json: { added: 700, examples: 700 } })
    const saved = await readFile(join(indexDir, 'sample', 'examples.jsonl'))
    expect(saved.equals(Buffer.from(server.service.library().examples!.set.toJsonLines()))).toBe(
      true,
    )
    expect(createHash('sha256').update(saved).digest('hex')).toBe(
      '7e63ec9e5cad84f3b49bda54dfb1a16440a8b4fe4c0e90c62a7831075fac8680',
    )
  })

  it('keeps the event loop turning while a maximal examples body is decoded, validated and normalised', async () => {
    // 2,000 instructions of one-character words (16 MB). Before round 48 decoding, zod's check and
    // collapsing their 8 M runs of spaces were one event-loop turn (1.6 s at load 10); in round 48
    // each piece was a turn of its own, the normalising sliced, but decoding (0.2-0.9 s) and
    // JSON.parse with zod (0.3-0.6 s) were still one turn each on this thread (load 4-15). Since
    // round 49 (hard53) a body over 4 MiB is decoded, parsed and checked on a worker thread, and
    // its strings come back in one buffer, unpacked in slices. Checked here as what this thread
    // does, not by a clock (a 1 ms ticker's longest gap at load 15 was 0.6-1.0 s before and
    // 0.26-0.33 s after, against 0.27 s for parsing and checking the body: too close to tell
    // apart reliably): no decoding and no JSON.parse of the large body on this thread.
    const { indexDir, toolFile } = await sampleDir()
    const server = await start(indexDir, { library: { default: toolFile } })
    const examples = Array.from({ length: 2000 }, (_, at) => ({
      instruction: `${'a '.repeat(3990)}${at}`,
      tools: ['sms.send_sms'],
    }))
    const body = new Blob([JSON.stringify({ examples })])
    const large: string[] = []
    const { parse } = JSON
    const { decode } = TextDecoder.prototype
    JSON.parse = function (this: unknown, text: string, reviver?: Parameters<typeof parse>[1]) {
      if (typeof text === 'string' && text.length > EXAMPLES_BODY_THREAD_ABOVE_BYTES)
        large.push(`JSON.parse of ${text.length} characters`)
      return parse.call(this, text, reviver)
    } as typeof parse
    TextDecoder.prototype.decode = function (
      this: TextDecoder,
      input?: Parameters<typeof decode>[0],
      options?: Parameters<typeof decode>[1],
    ) {
      if (input && input.byteLength > EXAMPLES_BODY_THREAD_ABOVE_BYTES)
        large.push(`decode of ${input.byteLength} bytes`)
      return decode.call(this, input, options)
    }
    try {
      const response = await fetch(`${server.url}/v1/libraries/sample/examples`, {
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body,
      })
      expect(await response.json()).toMatchObject({ added: 2000, examples: 2000, version: 1 })
    } finally {
      JSON.parse = parse
      TextDecoder.prototype.decode = decode
    }
    expect(large).toEqual([])
    expect(server.service.library().examples!.set.examples[1999]).toEqual({
      instruction: `${'a '.repeat(3990)}1999`,
      tools: ['sms.send_sms'],
    })
  }, 120_000)

  it('answers a body checked on the worker thread as it answers the same body checked in place', async () => {
    // Bodies over EXAMPLES_BODY_THREAD_ABOVE_BYTES are checked on a worker thread: the same
    // body padded with whitespace past it gets the same answer, error or examples.
    const { indexDir, toolFile } = await sampleDir()
    const server = await start(indexDir, { library: { default: toolFile } })
    const padding = Buffer.from(' '.repeat(EXAMPLES_BODY_THREAD_ABOVE_BYTES + 1))
    const post = async (bytes: Buffer, large: boolean) => {
      const response = await fetch(`${server.url}/v1/libraries/sample/examples`, {
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body: (large ? Buffer.concat([bytes, padding]) : bytes) as Uint8Array<ArrayBuffer>,
      })
      const answer = (await response.json()) as { error?: { requestId?: string } }
      if (answer.error) delete answer.error.requestId
      return { status: response.status, answer }
    }
    const bodies = [
      '{"examples":[{"instruction":" ","tools":[]}],"exampels":1}',
      '[{"instruction":"send a text","tools":["sms.send_sms"]}]',
      '{"examples":[{"instruction":"send a text","tools":["sms.send_sms"]}',
      `{"examples":[${'1,'.repeat(MAX_EXAMPLES_PER_REQUEST * (MAX_EXAMPLE_TOOLS + 6))}1]}`,
      '{"examples":[{"instruction":"send a text","tools":["no.such_tool"]}]}',
    ].map((text) => Buffer.from(text))
    bodies.push(
      Buffer.from('{"examples":[{"instruction":"caf\xff","tools":["sms.send_sms"]}]}', 'latin1'),
    )
    for (const bytes of bodies) {
      const small = await post(bytes, false)
      expect(small.status).toBeGreaterThanOrEqual(400)
      expect(await post(bytes, true)).toEqual(small)
    }
    // Strings come back exactly: latin1, other characters, a lone surrogate (JSON's \ud800).
    const instructions = ['  café  olé ', 'send 中文 text \ud800 now', 'plain']
    const examples = instructions.map((instruction) => ({
      instruction,
      tools: ['sms.send_sms', 'sms.send_sms'],
    }))
    const added = await post(Buffer.from(JSON.stringify({ examples })), true)
    expect(added).toEqual({
      status: 200,
      answer: { library: 'sample', added: 3, duplicates: 0, evicted: 0, examples: 3, version: 1 },
    })
    expect(server.service.library().examples!.set.examples).toEqual([
      { instruction: 'café olé', tools: ['sms.send_sms'] },
      { instruction: 'send 中文 text \ud800 now', tools: ['sms.send_sms'] },
      { instruction: 'plain', tools: ['sms.send_sms'] },
    ])
  }, 120_000)

  it('starts no more examples-body threads than server.importWorkers: a large body waits for a slot, in turn with uploads', async () => {
    const { indexDir, toolFile } = await sampleDir()
    const server = await start(indexDir, { library: { default: toolFile } })
    expect(server.service.config.server.importWorkers).toBe(1)
    // The one slot taken, as an upload's import takes it: the large body waits, then is checked.
    const free = await workerSlot(1, undefined)
    const body = Buffer.concat([
      Buffer.from('{"examples":[{"instruction":"send a text","tools":["sms.send_sms"]}]}'),
      Buffer.from(' '.repeat(EXAMPLES_BODY_THREAD_ABOVE_BYTES + 1)),
    ])
    let settled = false
    const answer = fetch(`${server.url}/v1/libraries/sample/examples`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: body as Uint8Array<ArrayBuffer>,
    }).finally(() => (settled = true))
    const deadline = Date.now() + 30_000
    while (workerSlotsInUse().waiting === 0 && !settled && Date.now() < deadline)
      await new Promise((resolve) => setTimeout(resolve, 20))
    expect(settled).toBe(false)
    expect(workerSlotsInUse()).toEqual({ running: 1, waiting: 1 })
    free()
    const response = await answer
    expect(response.status, await response.clone().text()).toBe(200)
    expect(workerSlotsInUse()).toEqual({ running: 0, waiting: 0 })
  }, 120_000)

  it('answers an examples body whose parse runs its worker out of memory 413, naming the heap limit', async () => {
    const text = `{"examples":[${'{"instruction":"send a text","tools":["sms.send_sms"]},'.repeat(200_000)}{"instruction":"x","tools":[]}]}`
    const bytes = new Uint8Array(Buffer.from(text))
    const error = await checkOnWorker(
      { bytes, maxValues: 10_000_000, maxExamples: 1_000_000 },
      new AbortController().signal,
      { limitMb: 16, workers: 1 },
    ).then(
      () => undefined,
      (thrown: unknown) => thrown,
    )
    expect(error).toBeInstanceOf(ToolselError)
    expect((error as ToolselError).code).toBe('PAYLOAD_TOO_LARGE')
    expect((error as ToolselError).message).toMatch(/heap limit \(16 MiB\)/)
  }, 120_000)

  it("gives a body at its thread's heap limit the same answer on a fresh thread and on a kept one", async () => {
    // server.bodyLimitBytes 5 MiB: an examples thread's heap limit is 64 + 6 x 5 = 94 MiB.
    // `under` (1,500 examples of 64 numbers for tool ids, padded past the 4 MiB of the thread
    // path) is refused 400 with 96,000 issues, `over` (5,000 of them) runs the thread out of heap
    // building its issues: 413. Each is sent through a fresh thread and through one kept from the
    // body before: a kept thread's leftovers must not move the boundary.
    const { indexDir, toolFile } = await sampleDir()
    const server = await start(indexDir, {
      library: { default: toolFile },
      server: { bodyLimitBytes: 5 * 2 ** 20 },
    })
    const module = new URL('../../src/server/examples-body-worker.ts', import.meta.url)
    const tools = Array.from({ length: MAX_EXAMPLE_TOOLS }, () => '1').join(',')
    const body = (count: number) =>
      Buffer.from(
        `{"examples":[${Array.from({ length: count }, () => `{"instruction":"a","tools":[${tools}]}`).join(',')}]}`.padEnd(
          EXAMPLES_BODY_THREAD_ABOVE_BYTES + 1,
        ),
      )
    const send = async (bytes: Buffer) => {
      const response = await fetch(`${server.url}/v1/libraries/sample/examples`, {
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body: bytes as Uint8Array<ArrayBuffer>,
      })
      const answer = (await response.json()) as { error?: { requestId?: string } }
      delete answer.error?.requestId
      return { status: response.status, answer, idle: idleWorkerThreads(module) }
    }
    const [under, over] = [body(1500), body(5000)]
    const first = await send(under) // a fresh thread
    expect(first.status).toBe(400)
    expect(first.idle).toHaveLength(1)
    const again = await send(under) // the thread kept from the first
    expect(again).toEqual(first)
    const tooLarge = await send(over) // the kept thread again: out of heap, ended
    expect(tooLarge).toMatchObject({
      status: 413,
      answer: { error: { code: 'PAYLOAD_TOO_LARGE' } },
      idle: [],
    })
    expect((tooLarge.answer as { error: { message: string } }).error.message).toMatch(
      /heap limit \(94 MiB\)/,
    )
    expect(await send(over)).toEqual(tooLarge) // a fresh thread
    const last = await send(under) // a fresh thread after the one that failed, then kept
    expect(last).toMatchObject({ status: 400, answer: first.answer })
    expect(last.idle).toHaveLength(1)
    expect(last.idle).not.toEqual(first.idle)
  }, 180_000)

  it('starts the examples-body thread while a large body comes, and the check takes that thread', async () => {
    const { indexDir, toolFile } = await sampleDir()
    const server = await start(indexDir, { library: { default: toolFile } })
    const module = new URL('../../src/server/examples-body-worker.ts', import.meta.url)
    // Another test's kept thread (or none) is not this body's: wait for none idle.
    await expect.poll(() => idleWorkerThreads(module), { timeout: 15_000 }).toEqual([])
    // Valid examples padded with spaces past the thread path's 4 MiB.
    const body = Buffer.from(
      JSON.stringify({ examples: EXAMPLES }).padEnd(EXAMPLES_BODY_THREAD_ABOVE_BYTES + 1),
    )
    const { status, text, readied } = await sendInHalves(
      `${server.url}/v1/libraries/sample/examples`,
      'POST',
      body,
      () => idleWorkerThreads(module),
    )
    expect({ status, json: JSON.parse(text) }).toMatchObject({
      status: 200,
      json: { added: EXAMPLES.length },
    })
    expect(readied).toHaveLength(1)
    // The body was checked on the thread started during the read, kept for the next body.
    expect(idleWorkerThreads(module)).toEqual(readied)
  }, 60_000)

  it('keeps a sound examples-body thread for the next body; one aborted or out of memory is ended, not kept', async () => {
    const module = new URL('../../src/server/examples-body-worker.ts', import.meta.url)
    const settings = { limitMb: 64, workers: 1 }
    const body = (text: string) => ({
      bytes: new Uint8Array(Buffer.from(text)),
      maxValues: 1_000,
      maxExamples: 100,
    })
    const valid = JSON.stringify({ examples: EXAMPLES })
    const signal = new AbortController().signal
    const first = await checkOnWorker(body(valid), signal, settings)
    const [thread] = idleWorkerThreads(module)
    expect(thread).toBeTypeOf('number')
    // The same thread answers the next bodies, the same way (a malformed one leaves it sound).
    expect(await checkOnWorker(body(valid), signal, settings)).toEqual(first)
    expect(await checkOnWorker(body('{"examples":['), signal, settings)).toEqual({
      malformed: true,
    })
    expect(idleWorkerThreads(module)).toEqual([thread])
    // Aborted while it works: rejected, the thread ended.
    const abort = new AbortController()
    const aborted = checkOnWorker(body(valid), abort.signal, settings).catch((error) => error)
    expect(idleWorkerThreads(module)).toEqual([])
    abort.abort()
    expect((await aborted).code).toBe('ABORTED')
    expect(idleWorkerThreads(module)).toEqual([])
    const next = await checkOnWorker(body(valid), signal, settings)
    expect(next).toEqual(first)
    const [fresh] = idleWorkerThreads(module)
    expect(fresh).not.toBe(thread)
    // Out of memory: 413, the thread not kept.
    const huge = `{"examples":[${'{"instruction":"send a text","tools":["sms.send_sms"]},'.repeat(200_000)}{"instruction":"x","tools":[]}]}`
    const error = await checkOnWorker(
      { ...body(huge), maxValues: 10_000_000, maxExamples: 1_000_000 },
      signal,
      { limitMb: 16, workers: 1 },
    ).catch((thrown: unknown) => thrown)
    expect((error as ToolselError).code).toBe('PAYLOAD_TOO_LARGE')
    expect(idleWorkerThreads(module)).toEqual([])
  }, 120_000)
})
