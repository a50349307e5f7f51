/** Synthetic usage examples for tests of large example sets. */
import type { UsageExample } from '../../src/examples/usage-example.ts'
import { SAMPLE_TOOLS } from './sample-tools.ts'

const WORDS = (
  'send mail text forecast weather city book flight hotel translate french note remind ' +
  'tomorrow list files search web price stock convert currency schedule meeting call ' +
  'order pizza play song volume alarm wake timer news sports score map route traffic'
).split(' ')

/** Deterministic synthetic examples over the sample tools: `count` distinct instructions. */
export function syntheticExamples(count: number): UsageExample[] {
  let seed = 7
  const next = () => (seed = (seed * 1_103_515_245 + 12_345) % 2_147_483_648) / 2_147_483_648
  return Array.from({ length: count }, (_, index) => {
    const words = Array.from(
      { length: 6 + Math.floor(next() * 8) },
      () => WORDS[Math.floor(next() * WORDS.length)],
    )
    const first = SAMPLE_TOOLS[Math.floor(next() * SAMPLE_TOOLS.length)].id
    const second = SAMPLE_TOOLS[Math.floor(next() * SAMPLE_TOOLS.length)].id
    return {
      instruction: `${words.join(' ')} n${index}`,
      tools: next() < 0.5 ? [first] : [...new Set([first, second])],
    }
  })
}
