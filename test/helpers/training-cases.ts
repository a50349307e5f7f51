/**
 * Training data on the sample library (sample-tools.ts) for the learned-model tests: cases from
 * `[instruction, gold tool ids]` pairs and a training source over the sample tools.
 */
import type { TrainingCase } from '../../src/learn/training-data.ts'
import type { TrainingSource } from '../../src/learn/train-model.ts'
import { SAMPLE_TOOLS } from './sample-tools.ts'

/** Cases with ids q0, q1, … in the order of `pairs`. */
export function trainingCases(
  pairs: ReadonlyArray<readonly [string, readonly string[]]>,
): TrainingCase[] {
  return pairs.map(([instruction, gold], index) => ({
    id: `q${index}`,
    instruction,
    gold: [...gold],
  }))
}

/** A training source named `sample` over the sample tools, without single-clause cases. */
export function sampleSource(cases: TrainingCase[]): TrainingSource {
  return { name: 'sample', tools: [...SAMPLE_TOOLS], cases, notes: [], singleClauses: false }
}

/** The requests the dense-feature tests (plain and learned space) train on. */
export const DENSE_SAMPLE_CASES = trainingCases([
  ['What is the weather in Paris tomorrow', ['weather.get_forecast']],
  ['Is it raining in Oslo right now', ['weather.get_current_weather']],
  ['Email the report to Ann', ['mail.send_email']],
  ['Text my brother that I am late', ['sms.send_sms']],
  ['Find flights from Rome to Madrid', ['travel.search_flights']],
  [
    'Book a hotel in Lisbon, and email the booking to Ann',
    ['travel.book_hotel', 'mail.send_email'],
  ],
  ['How is the AAPL stock doing', ['finance.get_stock_quote']],
  ['Any mail from Bob in my inbox?', ['mail.search_inbox']],
])
