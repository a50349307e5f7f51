/**
 * A planner without a model: splits an instruction into request clauses and drops sentences that
 * only give context. It is the embedded default and the fallback of the LLM planner, so it must
 * never fail: when it finds no request it returns the whole instruction as one step.
 * @module
 */
import { DEFAULT_PLAN_OPTIONS } from './plan-options.ts'
import type { Planner, PlanResult } from '../contracts.ts'
import {
  ACTION_VERBS,
  CENSUS_VERBS,
  isRequest,
  namesAThing,
  startsWithAction,
} from './request-cues.ts'

export interface RulePlannerOptions {
  /** Most steps returned; extra clauses are merged into the last step. Default 8. */
  maxSteps?: number
  /**
   * Give a second object joined by "and" its own step with the clause's lead ("Find flights … and
   * a hotel …" → "Find flights …", "Find a hotel …"). Default true; `trainingPlanner` turns it off.
   */
  secondObjects?: boolean
  /**
   * Keep a sentence's first clause when it names a thing without a verb and "and" or "then" joins
   * it to a request ("weather in Paris and email Ann the forecast" → "weather in Paris", "email
   * Ann the forecast"), instead of dropping it as context. Default true; `trainingPlanner` turns
   * it off (the rows keep the plans the shipped model was fitted on, as for `secondObjects`).
   */
  verblessClauses?: boolean
  /**
   * Read a clause opened by one of the training census's imperatives (`CENSUS_VERBS`: "Conduct
   * …", "Investigate …", "Use the X API to …") as a request, so it is a step of its own instead of
   * context or part of the clause before it. Default true; `trainingPlanner` turns it off (round
   * 47, as for `verblessClauses`).
   */
  censusVerbs?: boolean
}

/**
 * The planner `toolsel train` builds its rows with: the rule planner without `secondObjects`.
 * Round 19 measured the model refitted on rows with the split: better on the held-out training
 * folds, but its rule moved and Gorilla fell more than a point below its `--planner none`
 * (bench/README.md, round 19), so the rows keep the plans the shipped model was fitted on and the
 * split is a serving setting, as the one-clause dense features are.
 */
export function trainingPlanner(maxSteps?: number): RulePlanner {
  return new RulePlanner({
    maxSteps,
    secondObjects: false,
    verblessClauses: false,
    censusVerbs: false,
  })
}

/** Sentence ends: ! ? ; line breaks, and a period before a capital (not "3.5" or "e.g. arenas"). */
export const SENTENCE_BREAK = /(?<=[!?;])\s+|(?<=\.)\s+(?=[\p{Lu}\p{N}"'(])|\n+/u

/** Where one request can end and the next begin inside a sentence. */
export const CLAUSE_BREAK =
  /(\s*(?:,\s*(?:and\s+)?(?:then|also|after that|afterwards|finally|plus)\b|\b(?:and\s+then|and\s+also|and\s+afterwards|after\s+that|as\s+well\s+as|then)\b|,?\s+and\b|,\s+(?=(?:please\s+)?[a-z]+\b)|:\s+)\s*)/iu

/** Words that introduce a step but carry no capability. */
const LEADING_FILLER =
  /^(?:(?:and|also|then|so|plus|finally|lastly|additionally|moreover|afterwards|after that|please|kindly|first(?:ly)?|second(?:ly)?|next)\b[\s,]*)+/iu

export class RulePlanner implements Planner {
  readonly name = 'rule'
  readonly #maxSteps: number
  readonly #secondObjects: boolean
  readonly #verblessClauses: boolean
  readonly #censusVerbs: boolean

  constructor(options: RulePlannerOptions = {}) {
    this.#maxSteps = options.maxSteps ?? DEFAULT_PLAN_OPTIONS.maxSteps
    this.#secondObjects = options.secondObjects ?? true
    this.#verblessClauses = options.verblessClauses ?? true
    this.#censusVerbs = options.censusVerbs ?? true
  }

  async plan(instruction: string): Promise<PlanResult> {
    return { steps: this.split(instruction), planner: this.name }
  }

  /** Synchronous core of `plan`. */
  split(instruction: string): string[] {
    const steps: string[] = []
    for (const sentence of collapseWhitespace(instruction).split(SENTENCE_BREAK))
      steps.push(
        ...splitClauses(sentence, {
          secondObjects: this.#secondObjects,
          verbless: this.#verblessClauses,
          census: this.#censusVerbs,
        }),
      )
    const cleaned = steps.map(cleanStep).filter((step) => /[\p{L}\p{N}]/u.test(step))
    if (cleaned.length === 0) return [instruction.trim()]
    if (cleaned.length <= this.#maxSteps) return cleaned
    const kept = cleaned.slice(0, this.#maxSteps - 1)
    kept.push(cleaned.slice(this.#maxSteps - 1).join('; '))
    return kept
  }
}

/**
 * Splits a request sentence at conjunctions, but only where the right-hand part starts a new
 * action ("…in Paris and email it to Ann"); in "Paris and London" the part is glued back, with its
 * original separator, to the clause before it. Clauses that ask for nothing ("I'm a football fan,
 * and I want…") are dropped, unless (`verbless`) the first one names a thing without a verb and
 * "and" or "then" joins it to the request after it ("weather in Paris and email Ann …").
 */
function splitClauses(
  sentence: string,
  {
    secondObjects,
    verbless,
    census,
  }: { secondObjects: boolean; verbless: boolean; census: boolean },
): string[] {
  // With a capturing group, split() interleaves parts (even indexes) and separators (odd).
  const pieces = sentence.split(CLAUSE_BREAK)
  const clauses: string[] = [pieces[0] ?? '']
  // The separator before the second clause (only a sentence's first clause can be a non-request:
  // every later one opens with an action or carries one's lead).
  let secondJoin = ''
  for (let index = 1; index + 1 < pieces.length; index += 2) {
    const separator = pieces[index]
    const part = pieces[index + 1]
    if (startsWithAction(part, census)) {
      if (clauses.length === 1) secondJoin = separator
      clauses.push(part)
      continue
    }
    const lead =
      secondObjects && JOINS_OBJECTS.test(separator)
        ? objectLead(clauses[clauses.length - 1], part, census)
        : ''
    if (lead) {
      if (clauses.length === 1) secondJoin = separator
      clauses.push(`${lead} ${part}`)
    } else clauses[clauses.length - 1] += separator + part
  }
  // "My family and I want …": the first clause is part of the second one's subject.
  const keepFirst =
    verbless &&
    clauses.length > 1 &&
    JOINS_REQUESTS.test(secondJoin) &&
    !SUBJECT_FIRST.test(clauses[1])
  return clauses.filter(
    (clause, at) => isRequest(clause, census) || (at === 0 && keepFirst && namesAThing(clause)),
  )
}

/** A clause opened by a subject pronoun ("I want …", "we need …"). */
const SUBJECT_FIRST = /^\s*(?:i|we|you|he|she|they)(?![\p{L}])/iu

/** Separators that join two requests ("…, and", "then", "and after that"), not a bare comma. */
const JOINS_REQUESTS = /\b(?:and|then|also|plus|after\s+that|afterwards|as\s+well\s+as)\b/iu

/** Separators that can join a second object to the first clause's verb ("… and a hotel …"). */
const JOINS_OBJECTS = /^\s*,?\s*(?:and|as\s+well\s+as|plus)\s*$/iu

/** A noun phrase opened by one of these after "and" is a second object, not "Paris and London". */
const OBJECT_DETERMINER =
  /^(?:a|an|the|any|some|my|your|our|their|its|his|her|(?!(?:it|that|what|there|here|he|she|who|where|how|let)['’]s\s)\p{L}+['’]s)\s/iu

/** Most words a carried lead ("Show me", "What is", "Can you find") may have. */
const LEAD_WORDS = 4

/** How much of a clause's start `objectLead` reads. */
const LEAD_CHARS = 120

/** How much of a clause's end `objectLead` reads (for `inName` and `inPair`). */
const TAIL_CHARS = 120

/**
 * The words to carry to a second object joined by "and" ("Find flights … and a hotel …" →
 * "Find a hotel …"): the clause's words before its first determiner when the clause opens with an
 * action or a request, or its action verb alone; '' when the part opens no determined noun phrase
 * or the clause has no short lead.
 */
function objectLead(clause: string, part: string, census: boolean): string {
  const object = part.trimStart()
  if (!OBJECT_DETERMINER.test(object)) return ''
  // The lead is in the clause's first words and the pair or name before "and" in its last: a
  // clause glued from many parts is never read whole (once per "and" would be quadratic).
  const head = clause.trimStart().slice(0, LEAD_CHARS)
  if (!startsWithAction(head, census)) return ''
  const tail = clause.slice(-TAIL_CHARS).trimEnd().split(' ')
  if (inName(tail, object) || inPair(tail)) return ''
  const words = head.split(' ')
  const determiner = words.findIndex((word, at) => at > 0 && OBJECT_DETERMINER.test(`${word} `))
  if (determiner > 0 && determiner <= LEAD_WORDS) return words.slice(0, determiner).join(' ')
  const verb = (words[0] ?? '').toLowerCase()
  if (!ACTION_VERBS.has(verb) && !(census && CENSUS_VERBS.has(verb))) return ''
  return /^(?:me|us)$/iu.test(words[1] ?? '') ? words.slice(0, 2).join(' ') : words[0]
}

/**
 * True, from the clause's last words, for "and" that closes a pair the clause opened ("between
 * the airport and the station", "both the title and the author") or joins a person to a pronoun
 * ("for me and my wife"): one noun phrase, not a second object.
 */
function inPair(tail: string[]): boolean {
  if (/^(?:me|us|you|him|her|them)$/iu.test(tail[tail.length - 1] ?? '')) return true
  return tail.slice(-PAIR_WORDS).some((word) => /^(?:between|both)$/iu.test(word))
}

/** How many of the clause's last words `inPair` looks back for "between" or "both". */
const PAIR_WORDS = 8

/**
 * True, from the clause's last words, for "and" inside a capitalised name or title ("Beauty and
 * the Beast", "Tom and the Toms"): the word before it and the word after the determiner both open
 * with a capital.
 */
function inName(tail: string[], object: string): boolean {
  const before = tail[tail.length - 1] ?? ''
  const after = object.split(' ', 2)[1] ?? ''
  return /^\p{Lu}/u.test(before) && /^\p{Lu}/u.test(after)
}

/**
 * One space for every run of spaces and tabs, one line break for every run of blank lines. The
 * clause expressions combine `\s*` and `\s+`, which backtrack over long runs of white space (8,000
 * spaces took minutes); after this every run is one character long, so they stay linear. A line
 * break eats the whitespace around it.
 */
export function collapseWhitespace(text: string): string {
  // Runs of spaces and tabs become one space; a run that already is one space is left alone (the
  // same text as replacing every run, without rebuilding the string at each word).
  const spaced = text.replace(/[^\S\n]{2,}|[^\S\n ]/g, ' ')
  return spaced.includes('\n') ? spaced.replace(/ ?\n\s*/g, '\n') : spaced
}

const LEADING_PUNCTUATION = new Set([...' \t\n,;:–-'])
const TRAILING_PUNCTUATION = new Set([...' \t\n,;:.–-'])

/** Strips filler words and surrounding punctuation; by index, since `[…]+$` backtracks on long runs. */
export function cleanStep(step: string): string {
  const text = step.replace(LEADING_FILLER, '')
  let start = 0
  let end = text.length
  while (start < end && LEADING_PUNCTUATION.has(text[start])) start += 1
  while (end > start && TRAILING_PUNCTUATION.has(text[end - 1])) end -= 1
  return text.slice(start, end).trim()
}
