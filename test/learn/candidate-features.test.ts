import fc from 'fast-check'
import { describe, expect, it } from 'vitest'
import { ToolLibrary } from '../../src/library/tool-library.ts'
import {
  extractCandidateFeatures,
  FEATURE_NAMES,
  setTermNumbersLimit,
  setTermPoolLimit,
} from '../../src/learn/candidate-features.ts'
import type { FeatureInput } from '../../src/learn/candidate-features.ts'
import { featureInputFor as inputFor } from '../helpers/feature-input.ts'
import { SAMPLE_TOOLS } from '../helpers/sample-tools.ts'

const feature = (values: number[], name: (typeof FEATURE_NAMES)[number]) =>
  values[FEATURE_NAMES.indexOf(name)]

describe('extractCandidateFeatures', () => {
  it('gives every distinct candidate one finite vector in FEATURE_NAMES order', () => {
    const input = inputFor(
      'What is the weather in Paris, and email the forecast to Ann',
      SAMPLE_TOOLS,
    )
    const features = extractCandidateFeatures(input)
    expect(features.length).toBeGreaterThan(1)
    expect(new Set(features.map((f) => f.id)).size).toBe(features.length)
    for (const { values } of features) {
      expect(values).toHaveLength(FEATURE_NAMES.length)
      for (const value of values) expect(Number.isFinite(value)).toBe(true)
    }
    const [top] = features
    expect(top.id).toBe(input.whole[0].id)
    expect(feature(top.values, 'whole_rel')).toBe(1)
    expect(feature(top.values, 'whole_top1')).toBe(1)
    expect(feature(top.values, 'steps')).toBe(2 / 8)
    expect(feature(top.values, 'example_vote')).toBe(0)
  })

  it('reads the example-memory vote when the library has one', () => {
    const input = inputFor('email the forecast to Ann', SAMPLE_TOOLS)
    const [first] = extractCandidateFeatures(input)
    const voted = extractCandidateFeatures({
      ...input,
      exampleVotes: new Map([[first.id, 0.75]]),
    })
    expect(feature(voted[0].values, 'example_vote')).toBe(0.75)
  })

  it('does not depend on tool ids: renaming every tool gives the same features', () => {
    fc.assert(
      fc.property(fc.string({ minLength: 1, maxLength: 6 }), (prefix) => {
        const renamed = SAMPLE_TOOLS.map((tool) => ({ ...tool, id: `${prefix}/${tool.id}` }))
        const instruction = 'Find the forecast for Berlin and send it by email'
        const original = extractCandidateFeatures(inputFor(instruction, SAMPLE_TOOLS))
        const other = extractCandidateFeatures(inputFor(instruction, renamed))
        expect(other.map((f) => f.values)).toEqual(original.map((f) => f.values))
      }),
      { numRuns: 10 },
    )
  })

  it('gives the same values when it reads the terms from the library (once per version)', () => {
    const lines = SAMPLE_TOOLS.map((tool) => `${JSON.stringify(tool)}\n`).join('')
    const library = ToolLibrary.fromJsonLines('sample', Buffer.from(lines))
    for (const instruction of [
      'What is the weather in Paris, and email the forecast to Ann',
      'Find the forecast for Berlin and send it by email',
    ]) {
      const input = inputFor(instruction, SAMPLE_TOOLS)
      const expected = extractCandidateFeatures(input)
      const first = extractCandidateFeatures({ ...input, library })
      const again = extractCandidateFeatures({ ...input, library })
      expect(first).toEqual(expected)
      expect(again).toEqual(expected)
    }
  })

  it("reads a library's terms from its pool by position: the same values when the pool starts over, for tools without numbers, and with wrong position hints", () => {
    const marked = SAMPLE_TOOLS.map((tool, at) =>
      at % 2 === 0
        ? { ...tool, name: `${tool.name}_qpv`, description: `${tool.description} Uses qpxw.` }
        : { ...tool },
    )
    const library = () =>
      ToolLibrary.fromJsonLines(
        'pooled',
        Buffer.from(marked.map((tool) => `${JSON.stringify(tool)}\n`).join('')),
      )
    const instructions = [
      'Send the qpxw forecast by email to Ann, then get the weather in Paris',
      'What is the current qpv weather? Also email it to Ann',
    ]
    const expected = instructions.map((text) => extractCandidateFeatures(inputFor(text, marked)))
    const pooled = library()
    const withLibrary = (text: string, shift = 0) => {
      const input = inputFor(text, marked)
      // Hints that point at another tool's position are ignored (the tool is found by id).
      const hinted = (list: FeatureInput['whole']) =>
        list.map((candidate) => ({
          ...candidate,
          position: (pooled.positionOf(candidate.id)! + shift) % pooled.size,
        }))
      return extractCandidateFeatures({
        ...input,
        library: pooled,
        whole: hinted(input.whole),
        steps: input.steps.map((step) => ({ ...step, candidates: hinted(step.candidates) })),
      })
    }
    expect(instructions.map((text) => withLibrary(text))).toEqual(expected)
    expect(instructions.map((text) => withLibrary(text, 1))).toEqual(expected)
    const previousPool = setTermPoolLimit(0)
    try {
      // Every request finds the pool over its limit and starts it over.
      expect(instructions.map((text) => withLibrary(text))).toEqual(expected)
      expect(instructions.map((text) => withLibrary(text))).toEqual(expected)
    } finally {
      setTermPoolLimit(previousPool)
    }
    // Tools whose words no test has numbered yet, read with no numbers left: from term sets.
    const unnumbered = SAMPLE_TOOLS.map((tool, at) =>
      at % 2 === 0
        ? { ...tool, name: `${tool.name}_qrv`, description: `${tool.description} Uses qrxw.` }
        : { ...tool },
    )
    const texts = ['Send the qrxw forecast by email to Ann', 'What is the qrv weather in Paris?']
    const previousNumbers = setTermNumbersLimit(0)
    let fromSets: ReturnType<typeof extractCandidateFeatures>[]
    try {
      const fresh = ToolLibrary.fromJsonLines(
        'unnumbered',
        Buffer.from(unnumbered.map((tool) => `${JSON.stringify(tool)}\n`).join('')),
      )
      fromSets = texts.map((text) =>
        extractCandidateFeatures({ ...inputFor(text, unnumbered), library: fresh }),
      )
    } finally {
      setTermNumbersLimit(previousNumbers)
    }
    expect(fromSets).toEqual(
      texts.map((text) => extractCandidateFeatures(inputFor(text, unnumbered))),
    )
  })

  it('gives the same values for tools whose terms ran out of numbers (read from their term sets)', () => {
    // Every other tool gets words no other test uses: with no numbers left, those tools (and
    // the instructions' new words) have none, and their hits come from the term sets instead.
    const marked = () =>
      SAMPLE_TOOLS.map((tool, at) =>
        at % 2 === 0
          ? { ...tool, name: `${tool.name}_qzv`, description: `${tool.description} Uses qzxw.` }
          : { ...tool },
      )
    const instructions = [
      'Send the qzxw forecast by email to Ann, then get the weather in Paris',
      'What is the current qzv weather? Also email it to Ann',
      'Find the forecast for Berlin and send it by email',
    ]
    const previous = setTermNumbersLimit(0)
    let fromSets: ReturnType<typeof extractCandidateFeatures>[]
    try {
      fromSets = instructions.map((text) => extractCandidateFeatures(inputFor(text, marked())))
    } finally {
      setTermNumbersLimit(previous)
    }
    // New tool objects: their terms are derived again, now with numbers.
    const fromNumbers = instructions.map((text) =>
      extractCandidateFeatures(inputFor(text, marked())),
    )
    expect(fromNumbers).toEqual(fromSets)
    const covered = fromSets.flat().map(({ values }) => feature(values, 'cover_name'))
    expect(covered.some((value) => value > 0 && value < 1)).toBe(true)
  })
})
