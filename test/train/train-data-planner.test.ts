/**
 * Acceptance for `toolsel train-data planner --suite toolbench-g3 --split train`: its prompts are
 * byte-equal to what an `llm:openai:…` planner sends over HTTP, and no benchmark test query (by
 * id or text) ever appears in the records.
 */
import { readFileSync } from 'node:fs'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { createComponents } from '../../src/components.ts'
import { parseConfig } from '../../src/config/load-config.ts'
import { createMemoryLogger } from '../../src/log.ts'
import { dataPath, hasData } from '../helpers/data-dir.ts'
import {
  completion,
  startFakeChatServer,
  type FakeChatServer,
} from '../models/openai/fake-chat-server.ts'
import { runTrainData, type TrainDataRun } from './run-train-data.ts'

const normalize = (text: string) => text.replace(/\s+/g, ' ').trim().toLowerCase()

/** The G3 test queries, read straight from the published files (not through toolsel). */
function g3TestQueries(): { ids: Set<string>; texts: Set<string> } {
  const files = [
    dataPath('toolbench', 'toolplanner', 'data', 'retrieval', 'G3_clear', 'test.json'),
    dataPath(
      'toolbench',
      'StableToolBench',
      'solvable_queries',
      'test_instruction',
      'G3_instruction.json',
    ),
  ]
  const records = files.flatMap(
    (file) => JSON.parse(readFileSync(file, 'utf8')) as Array<{ query_id: number; query: string }>,
  )
  expect(records).toHaveLength(218 + 61)
  return {
    ids: new Set(records.map((record) => String(record.query_id))),
    texts: new Set(records.map((record) => normalize(record.query))),
  }
}

describe.skipIf(!hasData('toolbench', 'toolplanner'))(
  'toolsel train-data planner --suite toolbench-g3 (skipped: no toolbench data)',
  () => {
    let run: TrainDataRun
    let server: FakeChatServer
    beforeAll(async () => {
      run = await runTrainData(['planner', '--suite', 'toolbench-g3', '--split', 'train'])
      server = await startFakeChatServer()
    }, 120_000)
    afterAll(() => server?.close())

    it('writes planner records and a data card with every exclusion and filter count', () => {
      expect(run.code, run.stderr).toBe(0)
      const train = run.files['planner.train.jsonl']
      const valid = run.files['planner.valid.jsonl']
      expect(train.length).toBeGreaterThan(4000)
      expect(valid.length).toBeGreaterThan(100)
      expect(run.card.excluded).toMatchObject({ byId: 227, byText: 0, unmappable: 19 })
      expect(run.card.counts.lexicalFilter.goldRemoved).toBeGreaterThan(0)
      expect(run.card.files).toEqual({
        'planner.train.jsonl': train.length,
        'planner.valid.jsonl': valid.length,
      })
      const { checked, rejected } = run.card.counts.plans
      expect(train.length + valid.length).toBe(checked - rejected)
      for (const record of train.slice(0, 50)) {
        const plan = JSON.parse(record.messages.at(-1).content) as string[]
        expect(record.messages.at(-1).role).toBe('assistant')
        expect(plan).toHaveLength(record.gold.length)
      }
    })

    it('never contains a ToolPlanner G3_clear or StableToolBench G3 test query, by id or text', () => {
      const { ids, texts } = g3TestQueries()
      const records = [...run.files['planner.train.jsonl'], ...run.files['planner.valid.jsonl']]
      const leakedIds = records.filter((record) => ids.has(String(record.id)))
      const leakedTexts = records.filter((record) =>
        texts.has(normalize(record.messages.at(-2).content)),
      )
      expect(leakedIds).toEqual([])
      expect(leakedTexts).toEqual([])
    })

    it('has prompts byte-equal to what an llm:openai planner sends', async () => {
      const config = parseConfig({
        plan: { planner: 'llm:openai:student', fallback: '' },
        models: { openai: { baseUrl: server.baseUrl, maxRetries: 0 } },
      })
      const planner = createComponents(config, createMemoryLogger()).planner()
      const records = [
        ...run.files['planner.train.jsonl'].slice(0, 20),
        ...run.files['planner.valid.jsonl'].slice(0, 5),
      ]
      for (const record of records) {
        const target = record.messages.at(-1).content as string
        server.reply({ body: completion(target) })
        const instruction = record.messages.at(-2).content as string
        const result = await planner.plan(instruction)
        expect(result.steps).toEqual(JSON.parse(target))
        const sent = server.requests.at(-1)!.body.messages
        expect(JSON.stringify(sent)).toBe(JSON.stringify(record.messages.slice(0, -1)))
      }
    })
  },
)
