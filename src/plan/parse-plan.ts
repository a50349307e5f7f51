/**
 * Reads a plan out of what a planner model wrote. Small models wrap their JSON in code fences,
 * think aloud first (`<think>…</think>`), answer with a numbered list, an object with a `steps`
 * key, or add prose after the list; all of that is accepted. Anything else is PLAN_UNPARSABLE
 * with the raw text kept, so reports can show what the model said.
 * @module
 */
import { DEFAULT_PLAN_OPTIONS } from './plan-options.ts'
import { ToolselError } from '../errors.ts'

export interface ParsePlanOptions {
  /** Steps kept; later ones are dropped. Default 8. */
  maxSteps?: number
}

/** Keys of an object answer that may hold the step list. */
const STEP_LIST_KEYS = ['steps', 'plan', 'subtasks', 'sub_steps']
/** Keys of an object step that may hold its text. */
const STEP_TEXT_KEYS = ['step', 'task', 'description', 'text', 'action']
/** `1. x`, `2) x`, `- x`, `* x`, `• x`, `Step 3: x`. */
const LIST_ITEM = /^\s*(?:\d+\s*[.)]|[-*•]|step\s*\d+\s*[:.)-])\s+(.+?)\s*$/i
/** LIST_ITEM's marker and the white space after it (all of it: `\s+` is greedy). */
const LIST_MARKER = /^\s*(?:\d+\s*[.)]|[-*•]|step\s*\d+\s*[:.)-])\s+/i
/** Characters `.` does not match (besides `\n`, which never is inside a line). */
const LINE_TERMINATOR = /[\r\u2028\u2029]/

/**
 * The steps in `raw`, cleaned (whitespace collapsed, empty and repeated steps dropped) and cut
 * to `maxSteps`. An explicit empty JSON list gives `[]`. Throws PLAN_UNPARSABLE (details.raw).
 */
export function parsePlan(raw: string, options: ParsePlanOptions = {}): string[] {
  const answer = withoutThinking(raw)
  const fenced = [...answer.matchAll(/```[\w-]*[ \t]*\n?([\s\S]*?)```/g)].map((match) => match[1])
  for (const text of [...fenced, answer]) {
    const steps = stepsFromJson(text)
    if (steps) return clean(steps, options.maxSteps ?? DEFAULT_PLAN_OPTIONS.maxSteps)
  }
  const listed = answer.split('\n').flatMap((line) => listItem(line) ?? [])
  if (listed.length > 0) return clean(listed, options.maxSteps ?? DEFAULT_PLAN_OPTIONS.maxSteps)
  throw new ToolselError(
    'PLAN_UNPARSABLE',
    `The planner answered no list of steps: "${raw.length > 200 ? `${raw.slice(0, 200)}…` : raw}".`,
    { details: { raw } },
  )
}

/**
 * `LIST_ITEM.exec(line)?.[1]` in time linear in the line. The expression's lazy `(.+?)\s*$` tries
 * `\s*$` at every character, and each try runs over the white space that follows: quadratic in a
 * long run of spaces inside the line (32,000 of them: seconds). Its answer, found directly: after
 * the marker and its white space, the rest of the line without trailing white space, unless that
 * holds a character `.` does not match (then no match). When nothing follows the marker's white
 * space, the expression gives one of those white-space characters back to `(.+?)`; that case runs
 * the expression itself, which then backtracks one character at a time (linear).
 */
export function listItem(line: string): string | undefined {
  const marker = LIST_MARKER.exec(line)
  if (marker === null) return undefined
  const rest = line.slice(marker[0].length).trimEnd()
  if (rest === '') return LIST_ITEM.exec(line)?.[1]
  return LINE_TERMINATOR.test(rest) ? undefined : rest
}

/** The text after the last `</think>`; with an unclosed `<think>`, the text before it. */
function withoutThinking(raw: string): string {
  const closed = raw.lastIndexOf('</think>')
  if (closed >= 0) return raw.slice(closed + '</think>'.length)
  const open = raw.indexOf('<think>')
  return open >= 0 ? raw.slice(0, open) : raw
}

/**
 * Characters the JSON search of one text may read (its bracket scans and parses), about 5 ms of
 * work. The search tries every `[` and `{`, each reading up to the end of the text: quadratic in
 * texts of many unclosed or nested brackets (32,000 of them: seconds). A real answer reads a few
 * times its length; past the budget the text is read as holding no JSON.
 */
export const JSON_SEARCH_BUDGET = 2_000_000

/** Steps from the first JSON list (or object with a step list) in `text`. */
function stepsFromJson(text: string): string[] | undefined {
  let budget = JSON_SEARCH_BUDGET
  for (let start = 0; start < text.length; start++) {
    const char = text[start]
    if (char !== '[' && char !== '{') continue
    const end = matchingBracket(text, start)
    budget -= (end < 0 ? text.length : end + 1) - start
    if (budget < 0) return undefined
    if (end < 0) {
      // A list cut off by the token limit: keep the steps that were complete.
      if (char !== '[') continue
      const complete = [...text.slice(start).matchAll(/"(?:[^"\\]|\\.)*"/g)].map(
        (match) => JSON.parse(match[0]) as string,
      )
      return complete.length > 0 ? complete : undefined
    }
    budget -= end + 1 - start
    if (budget < 0) return undefined
    const value = tryParse(text.slice(start, end + 1))
    const steps = stepsFromValue(value)
    if (steps) return steps
    // Valid JSON without steps ({"tools": [...]}): don't read lists nested inside it as a plan.
    if (value !== undefined) start = end
  }
  return undefined
}

function stepsFromValue(value: unknown): string[] | undefined {
  if (Array.isArray(value)) {
    const steps = value.flatMap((item) => stepText(item) ?? [])
    return steps.length > 0 || value.length === 0 ? steps : undefined
  }
  if (typeof value === 'object' && value !== null) {
    const record = value as Record<string, unknown>
    const key = STEP_LIST_KEYS.find((candidate) => Array.isArray(record[candidate]))
    return key === undefined ? undefined : stepsFromValue(record[key])
  }
  return undefined
}

function stepText(item: unknown): string | undefined {
  if (typeof item === 'string') return item
  if (typeof item !== 'object' || item === null) return undefined
  const record = item as Record<string, unknown>
  const key = STEP_TEXT_KEYS.find((candidate) => typeof record[candidate] === 'string')
  return key === undefined ? undefined : (record[key] as string)
}

/** Index of the bracket closing the one at `start`, skipping brackets inside strings; -1 if none. */
function matchingBracket(text: string, start: number): number {
  let depth = 0
  let inString = false
  for (let index = start; index < text.length; index++) {
    const char = text[index]
    if (inString) {
      if (char === '\\') index++
      else if (char === '"') inString = false
    } else if (char === '"') inString = true
    else if (char === '[' || char === '{') depth++
    else if (char === ']' || char === '}') {
      depth--
      if (depth === 0) return index
    }
  }
  return -1
}

function tryParse(json: string): unknown {
  try {
    return JSON.parse(json)
  } catch {
    return undefined
  }
}

function clean(steps: string[], maxSteps: number): string[] {
  const seen = new Set<string>()
  const kept: string[] = []
  for (const step of steps) {
    const text = step.replace(/\*\*/g, '').replace(/\s+/g, ' ').trim()
    const key = text.toLowerCase()
    if (text === '' || seen.has(key)) continue
    seen.add(key)
    kept.push(text)
  }
  return kept.slice(0, maxSteps)
}
