/**
 * `toolsel train-data` over a user's examples file: selector prompts byte-equal to what an
 * `llm:openai:` selector sends, a teacher on the protocol-speaking fake server (plans kept only
 * when every step retrieves a gold tool, pairs checked for synonymy), GRPO prompt sets, filter
 * counts, and byte-equal output on a second run.
 */
import { mkdir, mkdtemp, readdir, readFile, writeFile } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { parseConfig } from '../../src/config/load-config.ts'
import {
  completion,
  startFakeChatServer,
  type FakeChatServer,
} from '../models/openai/fake-chat-server.ts'
import { SAMPLE_TOOLS } from '../helpers/sample-tools.ts'
import { main } from '../../src/main.ts'
import { writerTag } from '../../src/store/dead-writers.ts'
import { fixedStepService, runTrainData, SAMPLE_EXAMPLES } from './run-train-data.ts'

const EXAMPLES = SAMPLE_EXAMPLES

let dir: string
let examplesFile: string
let libraryFile: string
let server: FakeChatServer

beforeAll(async () => {
  dir = await mkdtemp(join(tmpdir(), 'toolsel-train-examples-'))
  examplesFile = join(dir, 'examples.jsonl')
  libraryFile = join(dir, 'sample-tools.json')
  await writeFile(examplesFile, EXAMPLES.map((item) => JSON.stringify(item)).join('\n'))
  await writeFile(libraryFile, JSON.stringify(SAMPLE_TOOLS))
  server = await startFakeChatServer()
})
afterAll(() => server?.close())

const source = () => ['--examples', examplesFile, '--library', libraryFile]

describe('toolsel train-data over an examples file', () => {
  it('writes selector records whose prompts are byte-equal to what an llm:openai selector sends', async () => {
    const run = await runTrainData(['selector', ...source(), '--valid-fraction', '0'])
    expect(run.code, run.stderr).toBe(0)
    expect(run.card.excluded).toMatchObject({ unmappable: 0, testFiles: [] })
    expect(run.card.counts.lexicalFilter).toEqual({
      examplesIn: 5,
      goldRemoved: 1,
      examplesDropped: 1,
    })
    const records = run.files['selector.train.jsonl']
    expect(run.files['selector.valid.jsonl']).toEqual([])
    // One record per gold step of the 4 kept examples (2 + 2 + 1 + 1).
    expect(records.map((record) => record.id)).toEqual(['1#1', '1#2', '2#1', '2#2', '3#1', '5#1'])
    const { goldRetrieved, goldNotRetrieved } = run.card.counts.selectorSteps
    expect(goldRetrieved + goldNotRetrieved).toBe(records.length)
    expect(records.filter((record) => record.goldRetrieved).length).toBe(goldRetrieved)

    const config = parseConfig({
      select: { selector: 'llm:openai:student', fallback: '' },
      models: { openai: { baseUrl: server.baseUrl, maxRetries: 0 } },
    })
    const select = await fixedStepService(config)
    for (const record of records) {
      const target = record.messages.at(-1).content as string
      expect(target).toBe(record.gold ?? 'none')
      server.reply({ body: completion(JSON.stringify({ answer: target })) })
      const result = await select(record.step)
      expect(result.steps[0].candidates.map((candidate) => candidate.id)).toEqual(record.candidates)
      expect(result.steps[0].selected).toBe(record.gold)
      const sent = server.requests.at(-1)!.body.messages
      expect(JSON.stringify(sent)).toBe(JSON.stringify(record.messages.slice(0, -1)))
    }
  })

  it('keeps teacher plans only when every step retrieves a gold tool, and checks pairs for synonymy', async () => {
    server.requests.length = 0
    server.reply(...Array.from({ length: 9 }, () => teacherReply))
    const run = await runTrainData(
      ['planner', ...source(), '--teacher', 'llm:openai:teacher', '--concurrency', '1'],
      { TOOLSEL_OPENAI_BASE_URL: server.baseUrl },
    )
    expect(run.code, run.stderr).toBe(0)
    const { synonymFilter, plans } = run.card.counts
    // 4 examples (6 gold pairs) pass the lexical filter: 6 checks, then 3 plans; the hotel pair is refused.
    expect(synonymFilter).toMatchObject({
      examplesIn: 4,
      pairsAsked: 6,
      goldRemoved: 1,
      examplesDropped: 1,
      failed: 0,
    })
    expect(plans).toEqual({
      source: 'teacher',
      checked: 2,
      rejected: 1,
      teacherUnparsable: 1,
      teacherFailed: 0,
    })
    const records = [...run.files['planner.train.jsonl'], ...run.files['planner.valid.jsonl']]
    expect(records).toHaveLength(1)
    expect(records[0]).toMatchObject({ id: '1', target: 'teacher' })
    expect(JSON.parse(records[0].messages.at(-1).content)).toEqual([
      'get the weather forecast for Paris',
      'send an email to Ann with the forecast',
    ])
    // The teacher was told the gold tools; the record keeps the plain inference prompt.
    const planRequest = server.requests.find((request) => !request.body.response_format)!
    expect(JSON.stringify(planRequest.body.messages)).toContain('get_forecast')
    expect(JSON.stringify(records[0].messages)).not.toContain('Hint for this request')
    // Was "Selector steps: 0 with the gold tool …" on a planner card.
    const card = await readFile(join(run.dir, 'data-card.md'), 'utf8')
    expect(card).toContain('Target plans (teacher): 2 checked, 1 rejected')
    expect(card).toContain('Selector steps: not counted (planner records only')
  })

  it('writes GRPO prompt sets with the gold the rewards need, the same bytes on every run', async () => {
    const first = await runTrainData([
      'grpo',
      ...source(),
      '--valid-fraction',
      '0.5',
      '--seed',
      '7',
    ])
    const second = await runTrainData([
      'grpo',
      ...source(),
      '--valid-fraction',
      '0.5',
      '--seed',
      '7',
    ])
    expect(first.code, first.stderr).toBe(0)
    for (const name of [
      'grpo-planner.train.jsonl',
      'grpo-planner.valid.jsonl',
      'grpo-selector.train.jsonl',
      'grpo-selector.valid.jsonl',
      'data-card.json',
      'data-card.md',
    ]) {
      expect(await readFile(join(first.dir, name), 'utf8')).toBe(
        await readFile(join(second.dir, name), 'utf8'),
      )
    }
    const planner = [
      ...first.files['grpo-planner.train.jsonl'],
      ...first.files['grpo-planner.valid.jsonl'],
    ]
    expect(planner.map((record) => record.id).sort()).toEqual(['1', '2', '3', '5'])
    for (const record of planner) {
      expect(record.library).toBe('sample-tools')
      expect(record.prompt.at(-1)).toEqual({ role: 'user', content: record.instruction })
      expect(record.gold.length).toBeGreaterThan(0)
    }
    const selector = first.files['grpo-selector.train.jsonl'][0]
    expect(selector.prompt.map((message: { role: string }) => message.role)).toEqual([
      'system',
      'user',
    ])
    expect(selector).toHaveProperty('candidates')
    // Was "Target plans (description): 0 checked, 0 rejected …": GRPO writes no target plans.
    const card = await readFile(join(first.dir, 'data-card.md'), 'utf8')
    expect(card).toContain('Target plans: none (GRPO prompt sets carry no target')
    expect(card).toMatch(/Selector steps: [1-9]\d* with the gold tool among the candidates/)
  })

  it('writes no empty set: a teacher that never answers, or every target plan rejected, is an error naming the cause', async () => {
    // Was: exit 0, "Training data written", and empty files over the previous set.
    const deadTeacher = join(dir, 'dead-teacher.json')
    await writeFile(
      deadTeacher,
      JSON.stringify({ models: { openai: { baseUrl: 'http://127.0.0.1:9/v1', maxRetries: 0 } } }),
    )
    const dead = await runTrainData([
      'planner',
      ...source(),
      '--teacher',
      'llm:openai:teacher',
      '--config',
      deadTeacher,
    ])
    expect(dead.code).toBe(1)
    // 6 gold pairs checked for synonymy, then 4 plans asked for: every call failed.
    expect(dead.stderr).toContain(
      'error [MODEL_CALL_FAILED]: No training records: 10 of 10 teacher calls failed (first: http://127.0.0.1:9/v1/chat/completions is unreachable',
    )
    expect(dead.stderr).toContain('TOOLSEL_OPENAI_BASE_URL')
    expect(await readdir(dead.dir)).toEqual([])
    // A teacher that fails some calls: the set is written, with a warning counting them.
    server.reset()
    const flaky = join(dir, 'flaky-teacher.json')
    await writeFile(
      flaky,
      JSON.stringify({ models: { openai: { baseUrl: server.baseUrl, maxRetries: 0 } } }),
    )
    server.reply(
      ...Array.from({ length: 9 }, () => (request: { body: Record<string, unknown> }) => {
        const text = JSON.stringify(request.body.messages)
        // The plan for the Boston example fails; every other call answers.
        return !request.body.response_format && text.includes('Boston')
          ? { status: 400, body: { error: { message: 'context length exceeded' } } }
          : teacherReply(request)
      }),
    )
    const partly = await runTrainData([
      'planner',
      ...source(),
      '--teacher',
      'llm:openai:teacher',
      '--config',
      flaky,
    ])
    expect(partly.code, partly.stderr).toBe(0)
    expect(partly.stderr).toMatch(
      /Warning: 1 of 9 teacher calls failed \(first: .*context length exceeded/,
    )
    // 6 pairs checked (the hotel pair refused: its example has no plan asked), 3 plans asked.
    expect(partly.card.counts.plans.teacherFailed).toBe(1)
    server.reset()
    const rejected = await runTrainData(['planner', ...source(), '--k', '1', '--tau', '50'])
    expect(rejected.code).toBe(2)
    expect(rejected.stderr).toContain(
      'No training records: all 4 target plans were rejected: some step of each claims no gold tool within k = 1 at tau = 50',
    )
    expect(await readdir(rejected.dir)).toEqual([])
  })

  it('reads a file of one example (JSON Lines of one line), and refuses an --out that is a file', async () => {
    const one = join(dir, 'one.jsonl')
    await writeFile(one, `${JSON.stringify(EXAMPLES[2])}\n`)
    // Was: 'Examples file "…" must be JSON Lines (or a JSON array)': one line parsed as one object.
    const single = await runTrainData(['planner', '--examples', one, '--library', libraryFile])
    expect(single.code, single.stderr).toBe(0)
    expect(single.card.source.examples).toBe(1)
    const broken = join(dir, 'broken.jsonl')
    await writeFile(broken, `${JSON.stringify(EXAMPLES[2])}\n{"instruction":\n`)
    const notJson = await runTrainData(['planner', '--examples', broken, '--library', libraryFile])
    expect(notJson.code).toBe(2)
    expect(notJson.stderr).toContain(`Invalid usage examples at ${broken} line 2: not JSON`)
    // --out naming a file: was EEXIST from mkdir, exit 1, after the records were made.
    let stderr = ''
    const code = await main(
      ['train-data', 'planner', '--examples', one, '--library', libraryFile, '--out', one],
      {
        stdout: () => {},
        stderr: (text) => (stderr += text),
        env: { TOOLSEL_LOG_LEVEL: 'silent' },
      },
    )
    expect(code).toBe(2)
    expect(stderr).toContain(
      `Cannot write training data to "${one}": a file of that name is in the way`,
    )
  })

  it('numbers records without an id by their line (blank lines counted) or array item, from 1, as its messages do', async () => {
    // Was: the position among the records (a blank line shifted every later id off its line),
    // and "item 0" for a JSON array's first record in messages.
    const spaced = join(dir, 'spaced.jsonl')
    await writeFile(
      spaced,
      `${JSON.stringify(EXAMPLES[0])}\n\n${JSON.stringify({ ...EXAMPLES[2], id: 'rome' })}\n\n${JSON.stringify(EXAMPLES[4])}\n`,
    )
    const lines = await runTrainData(['grpo', '--examples', spaced, '--library', libraryFile])
    expect(lines.code, lines.stderr).toBe(0)
    const ids = (run: typeof lines) =>
      [...run.files['grpo-planner.train.jsonl'], ...run.files['grpo-planner.valid.jsonl']]
        .map((record) => record.id)
        .sort()
    expect(ids(lines)).toEqual(['1', '5', 'rome'])
    const array = join(dir, 'array.json')
    await writeFile(array, JSON.stringify([EXAMPLES[0], EXAMPLES[2]]))
    const items = await runTrainData(['grpo', '--examples', array, '--library', libraryFile])
    expect(items.code, items.stderr).toBe(0)
    expect(ids(items)).toEqual(['1', '2'])
    // The place a message names is the same number, for train and train-data alike.
    await writeFile(array, JSON.stringify([EXAMPLES[0], { ...EXAMPLES[2], tools: ['nope.tool'] }]))
    for (const command of ['train-data', 'train']) {
      let stderr = ''
      const code = await main(
        [
          command,
          ...(command === 'train-data' ? ['grpo', '--out', join(dir, 'unused')] : []),
        ].concat(['--examples', array, '--library', libraryFile]),
        {
          stdout: () => {},
          stderr: (text) => (stderr += text),
          env: { TOOLSEL_LOG_LEVEL: 'silent' },
        },
      )
      expect({ command, code }).toEqual({ command, code: 2 })
      expect(stderr).toContain('has no tool "nope.tool" (item 2)')
    }
  })

  it('refuses examples naming tools the library lacks, as toolsel train and index --examples do', async () => {
    // Was: dropped and counted (unmappable) here, refused by toolsel train: one reader, one rule
    // (POST /v1/libraries/:library/examples refuses them too).
    const stale = join(dir, 'stale.jsonl')
    const lines = [
      ...EXAMPLES,
      { instruction: 'Play some jazz', tools: ['music.play'] },
      { instruction: 'Play it louder', tools: ['music.play', 'send_sms'] },
    ]
    await writeFile(stale, lines.map((item) => JSON.stringify(item)).join('\n'))
    const run = await runTrainData(['selector', '--examples', stale, '--library', libraryFile])
    expect(run.code).toBe(2)
    expect(run.stderr.trim()).toBe(
      `error [INVALID_INPUT]: Invalid usage examples in ${stale}: library "${libraryFile}" has no tool "music.play" (line 6, line 7), "send_sms" (line 7). Did you mean "sms.send_sms" for "send_sms"? Tools are called by their ids, not their names. Name tools by their ids in the library, as \`toolsel select "<instruction>" --library ${libraryFile} --json\` shows them. None of the file was used.`,
    )
    expect(await readdir(run.dir)).toEqual([])
    const empty = join(dir, 'empty.jsonl')
    await writeFile(empty, '\n\n')
    const none = await runTrainData(['planner', '--examples', empty, '--library', libraryFile])
    expect(none.code).toBe(2)
    expect(none.stderr).toContain(`Examples file "${empty}" holds no examples`)
  })

  it('writes the records and their card together: a failed write leaves the previous set whole', async () => {
    const out = await mkdtemp(join(tmpdir(), 'toolsel-train-data-set-'))
    const args = ['planner', ...source(), '--out', out]
    const io = (sink: { stderr: string }) => ({
      stdout: () => {},
      stderr: (text: string) => (sink.stderr += text),
      env: { TOOLSEL_LOG_LEVEL: 'silent' },
    })
    expect(await main(['train-data', ...args], io({ stderr: '' }))).toBe(0)
    const before = await readFile(join(out, 'planner.train.jsonl'), 'utf8')
    // The card's temporary file cannot be written (a directory of that name): the run fails.
    await mkdir(join(out, `data-card.md.${writerTag()}.tmp`))
    const failed = { stderr: '' }
    expect(await main(['train-data', ...args, '--limit', '1'], io(failed))).toBe(2)
    expect(failed.stderr).toContain(`Cannot write training data "${join(out, 'data-card.md')}"`)
    // Was: planner.*.jsonl and data-card.json already replaced by the 1-example run's.
    expect(await readFile(join(out, 'planner.train.jsonl'), 'utf8')).toBe(before)
    expect(
      (await readdir(out)).filter(
        (name) => name.endsWith('.tmp') && !name.startsWith('data-card.md'),
      ),
    ).toEqual([])
  })

  it('takes --library as select and serve do: a saved library by name (--index-dir), else UNKNOWN_LIBRARY', async () => {
    const indexDir = join(dir, 'indexes')
    const quiet = { stdout: () => {}, stderr: () => {}, env: { TOOLSEL_LOG_LEVEL: 'silent' } }
    expect(
      await main(['index', libraryFile, '--name', 'sample', '--index-dir', indexDir], quiet),
    ).toBe(0)
    const fromFile = await runTrainData(['selector', ...source(), '--valid-fraction', '0'])
    // Before: "Cannot read tool path "sample"" (only a tool file was read).
    const byName = await runTrainData([
      'selector',
      '--examples',
      examplesFile,
      '--library',
      'sample',
      '--index-dir',
      indexDir,
      '--valid-fraction',
      '0',
    ])
    expect(byName.code, byName.stderr).toBe(0)
    expect(byName.files['selector.train.jsonl']).toEqual(fromFile.files['selector.train.jsonl'])
    const unknown = await runTrainData([
      'selector',
      '--examples',
      examplesFile,
      '--library',
      'nope',
    ])
    expect(unknown.code).not.toBe(0)
    expect(unknown.stderr).toContain('UNKNOWN_LIBRARY')
    expect(unknown.stderr).toContain('toolsel index <file> --name nope')
  })

  it('refuses a test split and a suite without a training split, saying what to use', async () => {
    const testSplit = await runTrainData(['planner', '--suite', 'toolbench-g3', '--split', 'test'])
    expect(testSplit.code).toBe(2)
    expect(testSplit.stderr).toContain('--split must be train')
    const noSplit = await runTrainData(['planner', '--suite', 'craft-math'])
    expect(noSplit.code).toBe(2)
    expect(noSplit.stderr).toContain('toolbench-g3, toollens')
    expect(noSplit.stderr).toContain('--examples')
  })
})

/** The teacher: synonymy checks (json_schema enum) and plans, keyed on the request text. */
function teacherReply(request: { body: Record<string, unknown> }) {
  const messages = request.body.messages as Array<{ content: string }>
  const text = messages.at(-1)!.content
  if (request.body.response_format) {
    const refuse = text.includes('Rome') && text.includes('book_hotel')
    return { body: completion(JSON.stringify({ answer: refuse ? 'no' : 'yes' })) }
  }
  if (text.includes('Paris'))
    return {
      body: completion(
        '["get the weather forecast for Paris", "send an email to Ann with the forecast"]',
      ),
    }
  if (text.includes('Boston')) return { body: completion('["plan the trip"]') }
  return { body: completion('Sure, I can help with that.') }
}
