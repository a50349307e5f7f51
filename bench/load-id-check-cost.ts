/**
 * What the load-time check of tool ids costs (not a test): a saved index's ids section (a JSON
 * array, as `tools.idx` holds it) of `--size` ids made from ToolBench's 46,985 real API names
 * (ToolGen's virtual_tokens.txt: non-ASCII names, a ZWSP, a ZWJ and a U+0008 among them), each
 * copy suffixed `#n`. Per turn: `PackedIds.of` (what every load of such an index already does)
 * and `unshowableIdPositions` (the check a load adds), medians of `--turns`.
 *
 *   node --import tsx bench/load-id-check-cost.ts [--size 1000000] [--turns 7] [--data ../shared/data]
 * @module
 */
import { readFileSync } from 'node:fs'
import { join } from 'node:path'
import { benchArgs } from './bench-args.ts'
import { loadAverage, median } from './lib/measure.ts'

const { values } = benchArgs(import.meta.url, {
  options: {
    size: { type: 'string', default: '1000000' },
    turns: { type: 'string', default: '7' },
    data: { type: 'string', default: '../shared/data' },
  },
})
// What it measures only once the flags are good: --help and a bad flag answer without it.
const { unshowableIdPositions } = await import('../src/library/name-characters.ts')
const { PackedIds } = await import('../src/library/packed-ids.ts')
const size = Number(values.size)
const turns = Number(values.turns)
const names = readFileSync(
  join(values.data!, 'toolbench/ToolGen/training/src/configs/virtual_tokens.txt'),
  'utf8',
)
  .split('\n')
  .map((line) => line.replace(/^<</, '').replace(/>>$/, ''))
  .filter((name) => name.length > 0)
const ids = Array.from(
  { length: size },
  (_, at) => `${names[at % names.length]}#${Math.floor(at / names.length)}`,
)
const bytes = Buffer.from(JSON.stringify(ids))
const packMs: number[] = []
const checkMs: number[] = []
let found = 0
for (let turn = 0; turn < turns; turn += 1) {
  let started = performance.now()
  const list = PackedIds.of(bytes, size)!
  packMs.push(performance.now() - started)
  started = performance.now()
  found = unshowableIdPositions(list).length
  checkMs.push(performance.now() - started)
}
console.log(
  `${size} ids (${(bytes.length / 2 ** 20).toFixed(1)} MiB of ids section), ${found} with a control or bidi character: ` +
    `PackedIds.of median ${median(packMs).toFixed(1)} ms, check median ${median(checkMs).toFixed(1)} ms ` +
    `(turns: ${checkMs.map((ms) => ms.toFixed(1)).join(', ')}); load average ${loadAverage()}`,
)
