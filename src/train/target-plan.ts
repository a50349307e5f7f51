/**
 * The target plan of a planner record when no teacher writes one: one step per gold tool, in gold
 * order, written from the tool's own description: its first sentence, turned into a short
 * imperative phrase ("This endpoint returns the BNB balance …" → "return the BNB balance …"), or
 * from its name when the description is too short to say what the tool does. The planner
 * reward decides whether such a step is good enough: records keep only plans whose every step
 * retrieves a gold tool within K.
 * @module
 */
import { oneLineDescription, type Tool } from '../library/tool.ts'

/** Fewest words a description sentence needs to stand for the tool on its own. */
const MIN_DESCRIPTION_WORDS = 3
/** Most words of a step: plan steps are short phrases. */
const MAX_STEP_WORDS = 16

/** "This endpoint will", "The API", "Use this route to", … at the start of a description. */
const SUBJECT =
  /^(?:(?:this|the|an?)\s+(?:endpoint|api|tool|function|method|service|route|call|request)s?(?:\s+(?:will|can|is used to|allows? (?:you|users) to|lets you))?|use this (?:endpoint|api|route) to|this)\s+/i
/** Third-person verbs to their base form: returns → return, fetches → fetch, retrieves → retrieve. */
const THIRD_PERSON = /^([a-z]+?)(?:(?<=(?:ch|sh|ss|x|z))es|s)\b/i

export function descriptionStep(tool: Pick<Tool, 'name' | 'description'>): string {
  const sentence = imperative(oneLineDescription(tool.description))
  const words = sentence.split(/\s+/).filter(Boolean)
  if (words.length >= MIN_DESCRIPTION_WORDS) return words.slice(0, MAX_STEP_WORDS).join(' ')
  const name = tool.name.replace(/[_/]+/g, ' ').trim()
  return sentence === '' || sentence.toLowerCase() === name.toLowerCase()
    ? name
    : `${name}: ${sentence}`
}

function imperative(sentence: string): string {
  let text = sentence
    .replace(/[.!?…]+$/, '')
    .replace(/^[*\-•\s]+/, '')
    .trim()
  text = text.replace(SUBJECT, '')
  const verb = THIRD_PERSON.exec(text)
  if (
    verb &&
    /^(?:return|retrieve|get|fetch|provide|give|search|list|find|show|create|send|convert|calculate|check|generate|look|allow|display|obtain|translate|verify|validate|add|delete|update|upload|download)$/i.test(
      verb[1],
    )
  ) {
    text = verb[1] + text.slice(verb[0].length)
  }
  text = text.replace(/^return back\b/i, 'return')
  // Lower-case a leading capitalised word ("Get" → "get"), not an acronym ("GET", "API").
  return /^[A-Z][a-z]/.test(text) ? text[0].toLowerCase() + text.slice(1) : text
}
