import { describe, expect, it } from 'vitest'
import { NonePlanner } from '../../src/plan/none-planner.ts'
import { collapseWhitespace, RulePlanner } from '../../src/plan/rule-planner.ts'

const planner = new RulePlanner()

describe('RulePlanner', () => {
  it('splits two requests joined by "and"', () => {
    expect(
      planner.split('What is the weather in Paris tomorrow, and email the forecast to Ann'),
    ).toEqual(['What is the weather in Paris tomorrow', 'email the forecast to Ann'])
  })

  it('drops pure context sentences', () => {
    expect(
      planner.split(
        "I'm planning a trip to Lisbon next week. Find me flights from Berlin and book a hotel near the old town.",
      ),
    ).toEqual(['Find me flights from Berlin', 'book a hotel near the old town'])
  })

  it('keeps "X and Y" noun phrases in one step', () => {
    expect(planner.split('Compare the weather in Paris and London.')).toEqual([
      'Compare the weather in Paris and London',
    ])
  })

  it('splits at "then", "after that" and sentence-leading "Also,"', () => {
    expect(planner.split('Translate this to French, then send it to Marie on Slack.')).toEqual([
      'Translate this to French',
      'send it to Marie on Slack',
    ])
    expect(
      planner.split('Get the AAPL quote. After that, post it to #finance. Also, remind me at 5pm.'),
    ).toEqual(['Get the AAPL quote', 'post it to #finance', 'remind me at 5pm'])
  })

  it('drops context clauses inside a request sentence', () => {
    const steps = planner.split(
      "I'm a football fan and I want to know Messi's career stats. Can you fetch the latest transfer news?",
    )
    expect(steps).toEqual([
      "I want to know Messi's career stats",
      'Can you fetch the latest transfer news?',
    ])
  })

  it('returns the whole instruction when it finds no request', () => {
    expect(planner.split('text my mom that I am running late')).toEqual([
      'text my mom that I am running late',
    ])
    expect(planner.split('Just some context.')).toEqual(['Just some context.'])
  })

  it('caps the number of steps, merging the rest into the last one', () => {
    const capped = new RulePlanner({ maxSteps: 2 }).split('Find a. Get b. Send c. Book d.')
    expect(capped).toEqual(['Find a', 'Get b; Send c; Book d'])
  })

  it('reports its name in the plan result', async () => {
    expect(await planner.plan('Find flights')).toEqual({ steps: ['Find flights'], planner: 'rule' })
  })
})

describe('NonePlanner', () => {
  it('returns the whole instruction as one step', async () => {
    expect(await new NonePlanner().plan('  Find flights and book a hotel  ')).toEqual({
      steps: ['Find flights and book a hotel'],
      planner: 'none',
    })
  })
})

describe('collapseWhitespace', () => {
  it('gives the text of replacing every run of spaces and tabs, on random whitespace-heavy text', () => {
    const reference = (text: string) => text.replace(/[^\S\n]+/g, ' ').replace(/ ?\n\s*/g, '\n')
    const pieces = ['a', 'word', ' ', '  ', '\t', '\n', ' \n ', '\u00a0', '\r', '\u2003', ',', 'é']
    let seed = 7
    const random = () => (seed = (seed * 1103515245 + 12345) % 2147483648) / 2147483648
    for (let round = 0; round < 2000; round += 1) {
      let text = ''
      const length = Math.floor(random() * 12)
      for (let at = 0; at < length; at += 1) text += pieces[Math.floor(random() * pieces.length)]
      expect(collapseWhitespace(text), JSON.stringify(text)).toBe(reference(text))
    }
  })
})
