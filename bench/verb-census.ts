/**
 * Round 47 (plan17, #10): a census of the words that open a clause in the TRAINING splits'
 * instructions (ToolPlanner G3 train minus every G3 test query, ToolLens train: what `toolsel
 * train` reads; no test query), to find imperative verbs missing from `ACTION_VERBS`
 * (src/plan/request-cues.ts). Each sentence is cut at every place the rule planner may cut
 * (`SENTENCE_BREAK`, `CLAUSE_BREAK`); a part that does not open with an action or a request
 * (`startsWithAction`) is counted by its first word, once per instruction, with how many of those
 * instructions need more tools than the training planner makes steps (a missed split). The list is
 * read by a person: the words that are verbs in the imperative are the candidates. Sorted by the
 * instructions with the word after a clause separator, or (`--by-start`) at a sentence's start.
 *
 *   npx tsx bench/verb-census.ts --data ../shared/data --top 200 --by-start
 * @module
 */
import { benchArgs, wholeNumber } from './bench-args.ts'

const { values } = benchArgs(import.meta.url, {
  options: {
    data: { type: 'string', default: '../shared/data' },
    top: { type: 'string', default: '60' },
    'by-start': { type: 'boolean', default: false },
  },
})
const top = wholeNumber(import.meta.url, '--top', values.top)
// The code it reads with is loaded once the flags are read (--help loads none of it).
const { loadToolLensTrain, loadToolPlannerG3 } = await import('../src/learn/training-data.ts')
const { CLAUSE_BREAK, collapseWhitespace, SENTENCE_BREAK, trainingPlanner } =
  await import('../src/plan/rule-planner.ts')
const { ACTION_VERBS, startsWithAction } = await import('../src/plan/request-cues.ts')

/** Leading words that carry no verb ("and", "also", "then", "please"). */
const FILLER =
  /^(?:(?:and|also|then|so|plus|finally|lastly|additionally|moreover|afterwards|after that|please|kindly|first(?:ly)?|second(?:ly)?|next|just)\b[\s,]*)+/iu

interface Count {
  /** Instructions with a clause opened by the word. */
  instructions: number
  /** Of those, the ones whose gold set is larger than the training planner's step count. */
  underSplit: number
  /** Of those, the ones with the word after a clause separator (the rest: at a sentence's start). */
  afterSeparator: number
  example: string
}

const planner = trainingPlanner()
const counts = new Map<string, Count>()
let instructions = 0
for (const set of [await loadToolPlannerG3(values.data!), await loadToolLensTrain(values.data!)]) {
  for (const { instruction, gold } of set.cases) {
    instructions++
    const seen = new Map<string, boolean>()
    for (const sentence of collapseWhitespace(instruction).split(SENTENCE_BREAK)) {
      const pieces = sentence.split(CLAUSE_BREAK)
      for (let index = 0; index < pieces.length; index += 2) {
        const part = pieces[index].replace(FILLER, '')
        if (startsWithAction(part)) continue
        const word = /^[\p{L}']+/u.exec(part.toLowerCase())?.[0]
        if (!word || ACTION_VERBS.has(word)) continue
        seen.set(word, (seen.get(word) ?? false) || index > 0)
      }
    }
    if (seen.size === 0) continue
    const under = gold.length > planner.split(instruction).length
    for (const [word, after] of seen) {
      const count = counts.get(word) ?? {
        instructions: 0,
        underSplit: 0,
        afterSeparator: 0,
        example: instruction.slice(0, 140),
      }
      count.instructions++
      if (under) count.underSplit++
      if (after) count.afterSeparator++
      counts.set(word, count)
    }
  }
}
const byStart = values['by-start']!
const rows = [...counts].sort((a, b) =>
  byStart
    ? b[1].instructions - b[1].afterSeparator - (a[1].instructions - a[1].afterSeparator)
    : b[1].afterSeparator - a[1].afterSeparator,
)
console.log(`${instructions} training instructions; words opening a non-action clause part:`)
console.log('| word | instructions | after a separator | gold > steps | example |')
console.log('| --- | ---: | ---: | ---: | --- |')
for (const [word, count] of rows.slice(0, top)) {
  console.log(
    `| ${word} | ${count.instructions} | ${count.afterSeparator} | ${count.underSplit} | ${count.example.replace(/\|/g, '/')} |`,
  )
}
