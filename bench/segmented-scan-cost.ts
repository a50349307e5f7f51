/**
 * What the scan for no-space-script terms costs a BM25 build (store/kinds/tokenizer-probe.ts
 * `holdsSegmentedTerms`, over the postings' term dictionary, once per build): its time over
 * `--terms` ASCII terms (none of those scripts, so every term is looked at) and the longest the
 * event loop waited meanwhile (the largest gap between two setImmediate ticks run beside it).
 * Round 36 made it yield to the event loop every 10 ms; `--before` runs a checkout from before
 * (one synchronous scan) in the same process, the two alternating.
 *
 *   node --import tsx bench/segmented-scan-cost.ts [--terms 1000000] [--turns 7] [--before /work/ci-base]
 * @module
 */
import { join } from 'node:path'
import { fileURLToPath, pathToFileURL } from 'node:url'
import { benchArgs } from './bench-args.ts'
import { loadAverage, medianAndEachMs } from './lib/measure.ts'

const { values: args } = benchArgs(import.meta.url, {
  options: {
    terms: { type: 'string', default: '1000000' },
    turns: { type: 'string', default: '7' },
    before: { type: 'string' },
  },
})

const size = Number(args.terms)
const turns = Number(args.turns)
if (!Number.isInteger(size) || size < 1) throw new Error('--terms takes a positive integer')
if (!Number.isInteger(turns) || turns < 1) throw new Error('--turns takes a positive integer')

type Scan = (terms: Iterable<string>) => boolean | Promise<boolean>
const scanOf = async (root: string): Promise<Scan> =>
  (await import(pathToFileURL(join(root, 'src/store/kinds/tokenizer-probe.ts')).href))
    .holdsSegmentedTerms as Scan

const checkouts = [
  { name: 'this checkout', scan: await scanOf(fileURLToPath(new URL('..', import.meta.url))) },
  ...(args.before !== undefined ? [{ name: 'before', scan: await scanOf(args.before) }] : []),
]

// Term-like strings (stems, identifier pieces, numbers) in a Map, as the postings keep them.
const termIndex = new Map<string, number>()
for (let at = 0; termIndex.size < size; at++) {
  termIndex.set(`${'abcdefghij'[at % 10]}${at.toString(36)}${at % 7 === 0 ? 'ing' : ''}`, at)
}

/** The scan's time and the longest gap between setImmediate ticks while it ran, in ms. */
async function measure(scan: Scan): Promise<{ total: number; block: number }> {
  let running = true
  let last = performance.now()
  let block = 0
  const tick = () => {
    const now = performance.now()
    block = Math.max(block, now - last)
    last = now
    if (running) setImmediate(tick)
  }
  setImmediate(tick)
  await new Promise((resolve) => setImmediate(resolve))
  const started = performance.now()
  last = started
  const found = await scan(termIndex.keys())
  const total = performance.now() - started
  block = Math.max(block, performance.now() - last)
  running = false
  if (found) throw new Error('the ASCII terms hold no no-space script')
  return { total, block }
}

const results = new Map(
  checkouts.map(({ name }) => [name, [] as { total: number; block: number }[]]),
)
for (let turn = 0; turn < turns; turn++) {
  for (const { name, scan } of checkouts) results.get(name)!.push(await measure(scan))
}
console.log(`holdsSegmentedTerms over ${size} terms, ${turns} turns, load ${loadAverage()}`)
for (const [name, list] of results) {
  console.log(`${name}:`)
  console.log(`  scan time:          ${medianAndEachMs(list.map((turn) => turn.total))}`)
  console.log(`  longest event-loop wait: ${medianAndEachMs(list.map((turn) => turn.block))}`)
}
