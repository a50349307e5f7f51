/**
 * Time to tokenize one long run of Han characters (no spaces or punctuation, the worst case for
 * ICU's dictionary word breaks), with this checkout's tokenizer and, with `--before DIR`, another
 * checkout's, side by side. Each timing runs `tokenizeText` once in a fresh child process, killed
 * after `--limit-s` seconds (the old tokenizer takes minutes at 300,000 characters); a size is not
 * tried again for a version once it ran past the limit. Prints the median of `--passes` runs.
 *
 *   node --import tsx bench/han-segment-cost.ts --before /work/ci-base --passes 3 --limit-s 60
 * @module
 */
import { spawnSync } from 'node:child_process'
import { resolve } from 'node:path'
import { benchArgs, wholeNumber } from './bench-args.ts'
import { median } from './lib/measure.ts'

const { values } = benchArgs(import.meta.url, {
  options: {
    before: { type: 'string' },
    sizes: { type: 'string', default: '8000,32000,70000,300000' },
    passes: { type: 'string', default: '3' },
    'limit-s': { type: 'string', default: '60' },
  },
})
const sizes = values.sizes
  .split(',')
  .map((size) => wholeNumber(import.meta.url, '--sizes', size, 1, 500_000))
const passes = wholeNumber(import.meta.url, '--passes', values.passes, 1, 50)
const limitMs = wholeNumber(import.meta.url, '--limit-s', values['limit-s'], 1, 3600) * 1000

const checkouts: [string, string][] = [['after', resolve('.')]]
if (values.before !== undefined) checkouts.unshift(['before', resolve(values.before)])

// Real Chinese words (weather, flights, stocks, mail, translation), repeated without punctuation.
const child = `
const { tokenizeText } = await import(process.argv[1] + '/src/retrieve/bm25/tokenize.ts')
const size = Number(process.argv[2])
const han = '查询明天北京天气预报预订航班东京股票价格发送邮件给经理翻译文档'
const run = han.repeat(Math.ceil(size / han.length)).slice(0, size)
tokenizeText('预热')
const start = performance.now()
const terms = tokenizeText(run)
console.log(JSON.stringify({ ms: performance.now() - start, terms: terms.length }))
`

const rows: Record<string, string | number>[] = []
const gaveUp = new Set<string>()
for (const size of sizes) {
  const row: Record<string, string | number> = { characters: size }
  const medians: Record<string, number> = {}
  for (const [name, dir] of checkouts) {
    if (gaveUp.has(name)) {
      row[`${name} ms`] = 'not run'
      continue
    }
    const times: number[] = []
    let terms = 0
    for (let pass = 0; pass < passes; pass += 1) {
      const result = spawnSync(
        process.execPath,
        ['--import', 'tsx', '--input-type=module', '-e', child, dir, String(size)],
        { cwd: dir, encoding: 'utf8', timeout: limitMs },
      )
      if (result.status !== 0) break
      const parsed = JSON.parse(result.stdout.trim().split('\n').pop() ?? '{}')
      times.push(parsed.ms)
      terms = parsed.terms
    }
    if (times.length < passes) {
      gaveUp.add(name)
      row[`${name} ms`] = `> ${limitMs / 1000} s`
      continue
    }
    medians[name] = median(times)
    row[`${name} ms`] = Math.round(medians[name])
    row[`${name} terms`] = terms
  }
  if (medians.before !== undefined && medians.after !== undefined)
    row['after ÷ before'] = (medians.after / medians.before).toFixed(3)
  rows.push(row)
  console.table([row])
}
console.table(rows)
