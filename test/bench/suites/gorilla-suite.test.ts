import { fileURLToPath } from 'node:url'
import { describe, expect, it } from 'vitest'
import { parseGorillaQuestion } from '../../../src/bench/suites/gorilla-questions.ts'
import { hasData } from '../../helpers/data-dir.ts'
import { loadSuite } from './load-suite.ts'

const fixture = (name: string) =>
  fileURLToPath(new URL(`../fixtures/gorilla/${name}`, import.meta.url))

describe.skipIf(!hasData('gorilla'))(
  'gorilla suites on shared/data (skipped: no gorilla data)',
  () => {
    it('loads the 837 TorchHub train questions, each with one gold API of the 94', async () => {
      const { splits } = await loadSuite('gorilla-torchhub')
      const [split] = splits
      expect(split.cases).toHaveLength(837)
      expect(split.tools).toHaveLength(94)
      expect(split.stats.unmappedGold).toBe(0)
      expect(split.cases[0].instruction).toMatch(
        /^I need an API that can estimate the relative depth/,
      )
      expect(split.cases[0].instruction).not.toContain("'Output'")
      expect(
        split.matchKey?.(split.tools.find((tool) => tool.id === split.cases[0].gold[0])!),
      ).toBe("torch.hub.load(repo_or_dir='intel-isl/MiDaS', model='DPT_Hybrid', pretrained=True)")
    })

    it('reports HuggingFace and TF Hub as "no queries available" without --queries', async () => {
      for (const name of ['gorilla-huggingface', 'gorilla-tensorflow']) {
        const { splits, skipped } = await loadSuite(name)
        expect(splits).toEqual([])
        expect(skipped[0].reason).toMatch(/^no queries available/)
      }
    })
  },
)

describe('gorilla suites on eval-form fixtures', () => {
  it('reads ###Instruction questions and finds gold by api_data, api_call or <<<api_call>>>', async () => {
    const { splits } = await loadSuite('gorilla-huggingface', {
      queries: fixture('huggingface_eval.jsonl'),
      tools: fixture('huggingface_api.jsonl'),
    })
    const [split] = splits
    expect(split.cases.map((item) => [item.instruction.slice(0, 30), item.gold])).toEqual([
      ['I need to translate my English', ['huggingface_api:0']],
      ['Transcribe the speech in this ', ['huggingface_api:2']],
      ['Give me a short summary of thi', ['huggingface_api:3']],
    ])
  })

  it('matches TF Hub by api_call class: records sharing a call are interchangeable', async () => {
    const { splits } = await loadSuite('gorilla-tensorflow', {
      queries: fixture('tensorflowhub_eval.jsonl'),
      tools: fixture('tensorflowhub_api.jsonl'),
    })
    const [split] = splits
    const key = (id: string) => split.matchKey!(split.tools.find((tool) => tool.id === id)!)
    expect(key('tensorflowhub_api:0')).toBe(key('tensorflowhub_api:1'))
    expect(split.cases.map((item) => item.gold)).toEqual([
      ['tensorflowhub_api:0'],
      ['tensorflowhub_api:2'],
    ])
    expect(split.notes[0]).toMatch(/3 APIs, 2 distinct api_calls/)
  })
})

describe('parseGorillaQuestion', () => {
  it('reads the train form and the eval form', () => {
    const train = parseGorillaQuestion({
      code: "{'Instruction': Find a model for depth, please., 'Output': {'api_call': 'x'}}",
      api_call: 'x()',
    })
    expect(train).toMatchObject({ instruction: 'Find a model for depth, please.', apiCall: 'x()' })
    const evalForm = parseGorillaQuestion({
      code: '###Instruction: Classify cats.\n###Output: <<<api_call>>>: y()\n<<<api_provider>>>: z',
    })
    expect(evalForm).toMatchObject({ instruction: 'Classify cats.', apiCall: 'y()' })
    expect(parseGorillaQuestion({ code: 'no instruction here' })).toBeUndefined()
  })
})
