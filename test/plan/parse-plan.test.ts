import fc from 'fast-check'
import { describe, expect, it } from 'vitest'
import { isToolselError } from '../../src/errors.ts'
import { listItem, parsePlan } from '../../src/plan/parse-plan.ts'
import { busyMsSync } from '../helpers/busy-time.ts'

const PLAN = ['get the weather forecast for Paris tomorrow', 'email it to Ann']

describe('parsePlan', () => {
  it.each([
    ['a bare JSON list', JSON.stringify(PLAN)],
    ['a fenced JSON list', `\`\`\`json\n${JSON.stringify(PLAN, null, 2)}\n\`\`\``],
    [
      'a think block before the list',
      `<think>\nTwo things: ["weather"].\n</think>\n\n${JSON.stringify(PLAN)}`,
    ],
    ['a think block and a fence', `<think>hmm</think>\n\`\`\`\n${JSON.stringify(PLAN)}\n\`\`\``],
    [
      'an answer that starts inside thinking',
      `the user wants two things</think>${JSON.stringify(PLAN)}`,
    ],
    [
      'prose around the list',
      `Here is the plan:\n${JSON.stringify(PLAN)}\nLet me know if you need more.`,
    ],
    ['an object with steps', JSON.stringify({ steps: PLAN, reason: 'two capabilities' })],
    ['an object with a plan of objects', JSON.stringify({ plan: PLAN.map((step) => ({ step })) })],
    ['a numbered list', `1. ${PLAN[0]}\n2) ${PLAN[1]}`],
    ['a bulleted list with prose', `Plan:\n- **${PLAN[0]}**\n* ${PLAN[1]}\nThat's all.`],
    ['Step N: lines', `Step 1: ${PLAN[0]}\nStep 2 - ${PLAN[1]}`],
    ['a list cut off by the token limit', `["${PLAN[0]}", "${PLAN[1]}", "send a mess`],
  ])('reads %s', (_, raw) => {
    expect(parsePlan(raw)).toEqual(PLAN)
  })

  it('skips JSON that holds no plan and reads the list after it', () => {
    expect(parsePlan(`{"tools": ["a", "b"]} ${JSON.stringify(PLAN)}`)).toEqual(PLAN)
  })

  it('collapses whitespace, drops empty and repeated steps, and cuts at maxSteps', () => {
    const raw = JSON.stringify(['  a\n step ', '', 'A step', 'b', 'c', 'd'])
    expect(parsePlan(raw, { maxSteps: 3 })).toEqual(['a step', 'b', 'c'])
  })

  it('returns an explicit empty list as no steps', () => {
    expect(parsePlan('[]')).toEqual([])
  })

  it.each([
    ['prose', 'I cannot help with that, sorry.'],
    ['an unclosed think block', '<think>Let me think about the weather and'],
    ['a list of numbers', '[1, 2, 3]'],
    ['an object without steps', '{"answer": "weather"}'],
    ['nothing', ''],
  ])('throws PLAN_UNPARSABLE keeping the raw text for %s', (_, raw) => {
    let caught: unknown
    try {
      parsePlan(raw)
    } catch (error) {
      caught = error
    }
    expect(isToolselError(caught, 'PLAN_UNPARSABLE')).toBe(true)
    expect(caught).toMatchObject({
      details: { raw },
      message: expect.stringContaining('no list of steps'),
    })
  })

  it('reads back any list of plain steps it is given as JSON, capped at maxSteps', () => {
    const step = fc
      .stringMatching(/^[a-z][a-z ]{0,30}[a-z]$/)
      .filter((text) => !text.includes('  '))
    fc.assert(
      fc.property(
        fc.uniqueArray(step, { minLength: 1, maxLength: 12 }),
        fc.integer({ min: 1, max: 10 }),
        (steps, maxSteps) => {
          const unique = steps.filter(
            (text, index) =>
              steps.findIndex((other) => other.toLowerCase() === text.toLowerCase()) === index,
          )
          expect(parsePlan(`Sure!\n${JSON.stringify(steps)}\nDone.`, { maxSteps })).toEqual(
            unique.slice(0, maxSteps),
          )
        },
      ),
    )
  })
})

describe('list items in linear time', () => {
  // The expression listItem replaced (it was quadratic in a run of spaces inside a line).
  const LIST_ITEM = /^\s*(?:\d+\s*[.)]|[-*•]|step\s*\d+\s*[:.)-])\s+(.+?)\s*$/i

  it('reads every line as the expression did', () => {
    const pieces = ['1', '12', '.', ')', '-', '*', '•', 'step', 'Step ', ':', ' ', '  ', '\t']
    const more = ['\r', '\u2028', '\u00a0', '\ufeff', 'a', 'x y', '.', '\u2029']
    fc.assert(
      fc.property(fc.array(fc.constantFrom(...pieces, ...more), { maxLength: 12 }), (parts) => {
        const line = parts.join('')
        expect(listItem(line)).toBe(LIST_ITEM.exec(line)?.[1])
      }),
      { numRuns: 5000 },
    )
  })

  it('32,000 unclosed or nested brackets (seconds each before) end at once, unparsable', () => {
    const texts = ['{'.repeat(32_000), `${'['.repeat(15_999)}x${']'.repeat(16_000)}`]
    for (const text of texts) {
      // CPU time where the machine is loaded (busy-time.ts).
      expect(
        busyMsSync(() => expect(() => parsePlan(text)).toThrow(/no list of steps/)),
      ).toBeLessThan(1000)
    }
    // Within the budget the search is as before: a plan after a few hundred stray brackets, or
    // after 30,000 characters of prose and JSON objects that hold no plan.
    expect(parsePlan(`${'{'.repeat(300)} ${JSON.stringify(PLAN)}`)).toEqual(PLAN)
    const prose = 'The user wants {"city": "Paris"} and [the forecast] first. '.repeat(520)
    expect(prose.length).toBeGreaterThan(30_000)
    expect(parsePlan(`${prose}\n${JSON.stringify({ steps: PLAN })}`)).toEqual(PLAN)
  })

  it('a 32,000-space run inside a list line (seconds before) parses at once', () => {
    const line = `1. a${' '.repeat(32_000)}b`
    let steps: unknown
    expect(busyMsSync(() => (steps = parsePlan(`${line}\n- c`)))).toBeLessThan(1000)
    expect(steps).toEqual(['a b', 'c'])
  })
})
