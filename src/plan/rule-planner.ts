/**
 * A planner without a model: splits an instruction into request clauses and drops sentences that
 * only give context. It is the embedded default and the fallback of the LLM planner, so it must
 * never fail: when it finds no request it returns the whole instruction as one step.
 * @module
 */
import { DEFAULT_PLAN_OPTIONS } from './plan-options.ts'
import type { Planner, PlanResult } from '../contracts.ts'
import { isRequest, startsWithAction } from './request-cues.ts'

export interface RulePlannerOptions {
  /** Most steps returned; extra clauses are merged into the last step. Default 8. */
  maxSteps?: number
}

/** Sentence ends: ! ? ; line breaks, and a period before a capital (not "3.5" or "e.g. arenas"). */
const SENTENCE_BREAK = /(?<=[!?;])\s+|(?<=\.)\s+(?=[\p{Lu}\p{N}"'(])|\n+/u

/** Where one request can end and the next begin inside a sentence. */
const CLAUSE_BREAK =
  /(\s*(?:,\s*(?:and\s+)?(?:then|also|after that|afterwards|finally|plus)\b|\b(?:and\s+then|and\s+also|and\s+afterwards|after\s+that|as\s+well\s+as|then)\b|,?\s+and\b|,\s+(?=(?:please\s+)?[a-z]+\b)|:\s+)\s*)/iu

/** Words that introduce a step but carry no capability. */
const LEADING_FILLER =
  /^(?:(?:and|also|then|so|plus|finally|lastly|additionally|moreover|afterwards|after that|please|kindly|first(?:ly)?|second(?:ly)?|next)\b[\s,]*)+/iu

export class RulePlanner implements Planner {
  readonly name = 'rule'
  readonly #maxSteps: number

  constructor(options: RulePlannerOptions = {}) {
    this.#maxSteps = options.maxSteps ?? DEFAULT_PLAN_OPTIONS.maxSteps
  }

  async plan(instruction: string): Promise<PlanResult> {
    return { steps: this.split(instruction), planner: this.name }
  }

  /** Synchronous core of `plan`. */
  split(instruction: string): string[] {
    const steps: string[] = []
    for (const sentence of collapseWhitespace(instruction).split(SENTENCE_BREAK))
      steps.push(...splitClauses(sentence))
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
 * and I want…") are dropped.
 */
function splitClauses(sentence: string): string[] {
  // With a capturing group, split() interleaves parts (even indexes) and separators (odd).
  const pieces = sentence.split(CLAUSE_BREAK)
  const clauses: string[] = [pieces[0] ?? '']
  for (let index = 1; index + 1 < pieces.length; index += 2) {
    const separator = pieces[index]
    const part = pieces[index + 1]
    if (startsWithAction(part)) clauses.push(part)
    else clauses[clauses.length - 1] += separator + part
  }
  return clauses.filter((clause) => isRequest(clause))
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
function cleanStep(step: string): string {
  const text = step.replace(LEADING_FILLER, '')
  let start = 0
  let end = text.length
  while (start < end && LEADING_PUNCTUATION.has(text[start])) start += 1
  while (end > start && TRAILING_PUNCTUATION.has(text[end - 1])) end -= 1
  return text.slice(start, end).trim()
}
