import { mkdtempSync, mkdirSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { describe, expect, it } from 'vitest'
import {
  loadTaskbenchShapes,
  taskbenchShapeFiles,
  taskbenchShapes,
} from '../../src/learn/training-data.ts'
import {
  fitTrainingSets,
  shapeMatch,
  trainingSets,
  type TrainingSource,
} from '../../src/learn/train-model.ts'
import { BM25_SETTINGS } from '../helpers/feature-input.ts'
import { SAMPLE_TOOLS } from '../helpers/sample-tools.ts'
import { sampleSource, trainingCases } from '../helpers/training-cases.ts'

/** A TaskBench-like data root: three tools, five requests, two of them evaluated records. */
function dataRoot(): string {
  const root = mkdtempSync(join(tmpdir(), 'toolsel-tbshapes-'))
  const files = taskbenchShapeFiles('demo')
  for (const file of Object.values(files)) mkdirSync(join(root, file, '..'), { recursive: true })
  const node = (id: string) => ({ id, desc: `${id} tool`, parameters: [] })
  writeFileSync(
    join(root, files.tools),
    JSON.stringify({ nodes: [node('Translation'), node('Summarization'), node('Text-to-Speech')] }),
  )
  const evaluated = [
    {
      id: '1',
      user_request: 'Translate this text to French.',
      task_nodes: [{ task: 'Translation' }],
    },
    {
      id: '2',
      user_request: 'Summarize  the article, then READ it aloud.',
      task_nodes: [{ task: 'Summarization' }, { task: 'Text-to-Speech' }],
    },
  ]
  writeFileSync(
    join(root, files.evaluated),
    evaluated.map((record) => JSON.stringify(record)).join('\n'),
  )
  const requests = [
    // Evaluated by id (its text differs) and by text (another id, other case and spacing).
    { id: '1', user_request: 'Some other wording with the evaluated id.' },
    { id: '9', user_request: 'summarize the article, then read it aloud.' },
    { id: '4', user_request: 'I have a long text. Please summarize it for me.' },
    { id: '5', user_request: 'Summarize my notes and read the summary aloud.' },
    { id: '6', user_request: 'Translate the menu, and read it to me.' },
  ]
  writeFileSync(
    join(root, files.requests),
    requests.map((record) => JSON.stringify(record)).join('\n'),
  )
  writeFileSync(
    join(root, files.shapes),
    JSON.stringify({
      node_alignment_id: { single: ['1', '4', '6'], chain: ['5', '9'], dag: [] },
      // 6 is a dag in another check: conflicting shapes, left out.
      link_alignment_id: { single: ['4'], chain: [], dag: ['6'] },
    }),
  )
  return root
}

describe('TaskBench request shapes (count-only training data)', () => {
  it('takes the union of the checks and drops an id with two shapes', () => {
    const shapes = taskbenchShapes({
      a: { single: ['1', '2'], chain: ['3'] },
      b: { single: ['1'], dag: ['2', '4'], other: ['5'] },
    })
    expect([...shapes.entries()].sort()).toEqual([
      ['1', 'single'],
      ['3', 'multi'],
      ['4', 'multi'],
    ])
  })

  it('leaves out every evaluated record, by id and by normalised text', async () => {
    const set = await loadTaskbenchShapes(dataRoot(), 'demo')
    expect(set.cases.map(({ id, shape, gold }) => ({ id, shape, gold }))).toEqual([
      { id: 'tb-demo:4', shape: 'single', gold: [] },
      { id: 'tb-demo:5', shape: 'multi', gold: [] },
    ])
    expect(set.excluded).toBe(2)
    expect(set.conflicting).toBe(1)
    expect(set.tools.map((tool) => tool.id)).toContain('Summarization')
    expect(set.notes[0]).toMatch(/2 left out because their id or text is an evaluated record/)
    const texts = set.cases.map((trainingCase) => trainingCase.instruction.toLowerCase())
    expect(texts.some((text) => text.includes('evaluated id'))).toBe(false)
    expect(texts.some((text) => text.includes('then read it aloud'))).toBe(false)
  })

  it('says whether a placed set has the size its shape needs', () => {
    expect(shapeMatch(['a'], 'single')).toBe(1)
    expect(shapeMatch(['a', 'b'], 'single')).toBe(0)
    expect(shapeMatch(['a', 'a'], 'single')).toBe(1)
    expect(shapeMatch(['a'], 'multi')).toBe(0)
    expect(shapeMatch(['a', 'b', 'c'], 'multi')).toBe(1)
  })

  it('trains the count only: the candidate model and the rule stay those of the gold sources', () => {
    const gold = sampleSource(
      trainingCases([
        ['What is the weather in Paris tomorrow', ['weather.get_forecast']],
        ['Email the report to Ann', ['mail.send_email']],
        [
          'Book a hotel in Lisbon, and email the booking to Ann',
          ['travel.book_hotel', 'mail.send_email'],
        ],
        ['Forecast for Berlin, and text it to Ben', ['weather.get_forecast', 'sms.send_sms']],
        [
          'Find flights from Rome to Madrid, then text Carla',
          ['travel.search_flights', 'sms.send_sms'],
        ],
        ['Send an SMS to Carla saying hi', ['sms.send_sms']],
      ]),
    )
    const shapes: TrainingSource = {
      name: 'shapes',
      tools: [...SAMPLE_TOOLS],
      cases: [
        ['I am in Paris next week, and I wonder what the weather will be', 'single'],
        ['Check the forecast for Rome, and email it to Ann', 'multi'],
        ['I am late again, so text my brother', 'single'],
        ['Search flights to Oslo, and book a hotel there', 'multi'],
      ].map(([instruction, shape], index) => ({
        id: `s${index}`,
        instruction,
        gold: [],
        shape: shape as 'single' | 'multi',
      })),
      notes: ['shapes note'],
      singleClauses: false,
      countOnly: true,
    }
    const options = { bm25: BM25_SETTINGS }
    const without = fitTrainingSets(trainingSets([gold], options), options)
    const sets = trainingSets([gold, shapes], options)
    expect(sets.sets.map((set) => [set.name, set.countOnly ?? false])).toEqual([
      ['sample', false],
      ['shapes', true],
    ])
    const withShapes = fitTrainingSets(sets, options)
    expect(withShapes.model).toEqual(without.model)
    expect(withShapes.rule).toEqual(without.rule)
    expect(withShapes.dataCard.notes).toContain('shapes note')
    expect(withShapes.dataCard.heldOut.splits.map((split) => split.name)).toEqual([
      ...without.dataCard.heldOut.splits.map((split) => split.name),
      'shapes (right count)',
    ])
    // Without count-only sets the fit is the one it always was.
    expect(fitTrainingSets(trainingSets([gold], options), options)).toEqual(without)
  })
})
