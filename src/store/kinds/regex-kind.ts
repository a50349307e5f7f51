/**
 * `regex`: the query is a regular expression (JavaScript syntax, case-insensitive, `^`/`$` per
 * line: the name field is the name and the id on two lines) matched
 * against each tool's name and id, description, parameter names and descriptions, and
 * namespace, like Anthropic's regex tool search. Agents use it for exact-name lookups
 * (`^get_weather`, `slack\.`, `send_(sms|email)`) that BM25 would rank among near matches.
 * A tool scores the summed weights of the fields the pattern matches (name 3, description 1,
 * parameters 1, namespace 1, as BM25's field weights); ties go by id. Nothing is saved: the
 * field texts are rebuilt from the library on load.
 *
 * Every input is bounded: patterns of at most 200 characters, fields cut at 2,000 characters,
 * and patterns that repeat a repeated group (`(a+)+`, the catastrophic-backtracking shape) are
 * refused with INVALID_INPUT, as are patterns that do not compile. That check can't see every
 * slow pattern (`(.|.)*x` is exponential, `.*.*.*x` a power of the field's length), so matching
 * also runs in slices of a few milliseconds under a time limit (`MATCH_TIMEOUT_MS`): a pattern
 * that holds one slice longer is stopped and refused with INVALID_INPUT, and the event loop
 * turns between slices. The limit is wall time (V8's watchdog), so a slice that ran out of it
 * while the process got little CPU (a loaded machine deschedules it; a stopped process) is run
 * again, up to `MAX_SLICE_RETRIES` times a request, rather than refuse a plain pattern.
 * @module
 */
import { createContext, Script, type Context } from 'node:vm'
import type { Candidate, Retriever, RetrieveOptions } from '../../contracts.ts'
import { ToolselError, throwIfAborted } from '../../errors.ts'
import type { Tool } from '../../library/tool.ts'
import type { RetrieverKind } from './retriever-kind.ts'

/** Longest accepted pattern, in characters. */
export const MAX_PATTERN_CHARS = 200
/** Longest field text matched, in characters. */
const MAX_FIELD_CHARS = 2000
const WEIGHTS = { name: 3, description: 1, parameters: 1, namespace: 1 } as const
/**
 * Longest one slice of matching may take, in ms; a pattern that takes longer (a slice ends after
 * the tool in hand, so: on one tool's fields) is stopped and refused. A plain pattern matches a
 * 2,000-character field in microseconds.
 */
export const MATCH_TIMEOUT_MS = 100
/** Matching yields to the event loop once this much of it has run, in ms. */
const SLICE_MS = 10
/**
 * A stopped slice is run again when the process used less than this share of its wall time in
 * CPU: the slice was waiting for a core, not matching. A pattern that backtracks keeps a core
 * busy for the whole limit and is refused at once (the retries add nothing to what it can cost).
 */
const STARVED_CPU_SHARE = 0.5
/** How many stopped slices of one request may run again (their process starved of CPU). */
export const MAX_SLICE_RETRIES = 3
/**
 * `match(…)`: one slice, scoring tools from `from` on (into `scores`) until `sliceMs` have passed;
 * returns the next tool to match. Defined once in a vm context and called there (MATCH_SLICE)
 * because `timeout` can stop a regular expression that backtracks in a vm script (V8 interrupts
 * it); nothing stops one on the event loop. Defined once, it stays compiled across slices; the
 * context's globals are read once per slice, as arguments (each read goes through the context's
 * interceptors). Together: the same time as matching on the event loop (bench/adversarial.ts).
 */
const MATCH_FUNCTION =
  new Script(`globalThis.match = (tools, pattern, scores, from, sliceMs, now) => {
  const until = now() + sliceMs
  let index = from
  while (index < tools.length) {
    const tool = tools[index]
    let score = 0
    if (pattern.test(tool.name)) score += ${WEIGHTS.name}
    if (pattern.test(tool.description)) score += ${WEIGHTS.description}
    if (pattern.test(tool.parameters)) score += ${WEIGHTS.parameters}
    if (pattern.test(tool.namespace)) score += ${WEIGHTS.namespace}
    scores[index] = score
    index += 1
    if (now() >= until) break
  }
  return index
}`)
/** One slice: a call of MATCH_FUNCTION's `match`. */
const MATCH_SLICE = new Script('match(tools, pattern, scores, from, sliceMs, now)')
/** The context MATCH_SLICE runs in: one for the process, its globals set before each slice. */
let sandbox: Context | undefined
/** A group with a quantifier inside, itself quantified: `(a+)+`, `(\w*x)*`, `(a|b+){2,}`. */
const NESTED_QUANTIFIER = /\((?:[^()\\]|\\.)*[+*}](?:[^()\\]|\\.)*\)(?:[+*]|\{\d+,)/

interface ToolFields {
  id: string
  name: string
  description: string
  parameters: string
  namespace: string
}

export class RegexRetriever implements Retriever {
  readonly name = 'regex'
  readonly #tools: readonly ToolFields[]

  constructor(tools: readonly Tool[]) {
    this.#tools = tools.map((tool) => ({
      id: tool.id,
      name: cut(`${tool.name}\n${tool.id}`),
      description: cut(tool.description),
      parameters: cut(parameterText(tool)),
      namespace: cut(tool.namespace ?? ''),
    }))
  }

  async retrieve(query: string, options: RetrieveOptions): Promise<Candidate[]> {
    throwIfAborted(options.signal)
    const k = Math.floor(options.k)
    if (k <= 0 || query.trim() === '') return []
    const pattern = compile(query)
    const tools = this.#tools
    const scores = new Uint8Array(tools.length)
    let retries = 0
    for (let from = 0; from < tools.length;) {
      const next = matchSlice(pattern, tools, from, scores)
      if (next === 'starved' && retries < MAX_SLICE_RETRIES) retries += 1
      else if (typeof next !== 'number') throw backtracks(query)
      else from = next
      if (from < tools.length) {
        await new Promise((resolve) => setImmediate(resolve))
        throwIfAborted(options.signal)
      }
    }
    const minScore = options.minScore ?? Number.NEGATIVE_INFINITY
    const candidates: Candidate[] = []
    for (let index = 0; index < tools.length; index += 1) {
      const score = scores[index]
      if (score > 0 && score >= minScore) candidates.push({ id: tools[index].id, score })
    }
    candidates.sort((a, b) => b.score - a.score || (a.id < b.id ? -1 : a.id > b.id ? 1 : 0))
    return candidates.slice(0, k)
  }
}

export const REGEX_KIND: RetrieverKind = {
  name: 'regex',
  requires: [],
  build: async ({ library }) => ({ retriever: new RegexRetriever(library.tools), entry: {} }),
  load: async ({ library }) => new RegexRetriever(library.tools),
}

function fail(query: string, why: string): ToolselError {
  return new ToolselError('INVALID_INPUT', `Regex "${query.slice(0, 80)}" ${why}`, {
    details: { retriever: 'regex', pattern: query.slice(0, MAX_PATTERN_CHARS) },
  })
}

/** INVALID_INPUT for a pattern that held a slice past MATCH_TIMEOUT_MS. */
function backtracks(query: string): ToolselError {
  return fail(
    query,
    `held the matching for more than ${MATCH_TIMEOUT_MS} ms and was stopped (it backtracks: a repetition of alternatives that can match the same text, like "(.|.)*", or several unbounded repetitions in a row, like ".*.*.*"); write it without them.`,
  )
}

/**
 * Runs one slice of MATCH_SLICE: the next tool to match, or, when it was stopped at
 * MATCH_TIMEOUT_MS, `'starved'` if the process used less than STARVED_CPU_SHARE of that time in
 * CPU (it waited for a core) and `'stopped'` if not (the pattern held it).
 */
function matchSlice(
  pattern: RegExp,
  tools: readonly ToolFields[],
  from: number,
  scores: Uint8Array,
): number | 'starved' | 'stopped' {
  if (sandbox === undefined) {
    sandbox = createContext({ now: () => performance.now() })
    MATCH_FUNCTION.runInContext(sandbox)
  }
  Object.assign(sandbox, { pattern, tools, from, scores, sliceMs: SLICE_MS })
  const startedAt = performance.now()
  const cpuBefore = process.cpuUsage()
  try {
    return MATCH_SLICE.runInContext(sandbox, { timeout: MATCH_TIMEOUT_MS }) as number
  } catch (error) {
    if ((error as { code?: unknown }).code !== 'ERR_SCRIPT_EXECUTION_TIMEOUT') throw error
    const cpu = process.cpuUsage(cpuBefore)
    const cpuMs = (cpu.user + cpu.system) / 1000
    return cpuMs < STARVED_CPU_SHARE * (performance.now() - startedAt) ? 'starved' : 'stopped'
  } finally {
    // The context keeps no library alive between requests.
    Object.assign(sandbox, { pattern: undefined, tools: undefined, scores: undefined })
  }
}

function compile(query: string): RegExp {
  if (query.length > MAX_PATTERN_CHARS) {
    throw fail(
      query,
      `is ${query.length} characters long; the regex retriever takes at most ${MAX_PATTERN_CHARS}.`,
    )
  }
  if (NESTED_QUANTIFIER.test(query)) {
    throw fail(
      query,
      'repeats a repeated group (like "(a+)+"), which can take exponential time; write it without the outer repetition.',
    )
  }
  try {
    return new RegExp(query, 'im')
  } catch (error) {
    throw fail(
      query,
      `is not a valid regular expression (${(error as Error).message}); escape ( ) [ ] { } . * + ? with a backslash to match them literally.`,
    )
  }
}

function parameterText(tool: Tool): string {
  const properties = (tool.parameters as { properties?: Record<string, { description?: unknown }> })
    .properties
  if (!properties || typeof properties !== 'object') return ''
  return Object.entries(properties)
    .map(([name, schema]) =>
      typeof schema?.description === 'string' ? `${name}: ${schema.description}` : name,
    )
    .join('\n')
}

function cut(text: string): string {
  return text.length > MAX_FIELD_CHARS ? text.slice(0, MAX_FIELD_CHARS) : text
}
