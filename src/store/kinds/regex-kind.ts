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
 * refused with INVALID_INPUT, as are patterns that do not compile.
 * @module
 */
import type { Candidate, Retriever, RetrieveOptions } from '../../contracts.ts'
import { ToolselError, throwIfAborted } from '../../errors.ts'
import type { Tool } from '../../library/tool.ts'
import type { RetrieverKind } from './retriever-kind.ts'

/** Longest accepted pattern, in characters. */
export const MAX_PATTERN_CHARS = 200
/** Longest field text matched, in characters. */
const MAX_FIELD_CHARS = 2000
const WEIGHTS = { name: 3, description: 1, parameters: 1, namespace: 1 } as const
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
    const minScore = options.minScore ?? Number.NEGATIVE_INFINITY
    const candidates: Candidate[] = []
    for (const tool of this.#tools) {
      let score = 0
      for (const field of ['name', 'description', 'parameters', 'namespace'] as const) {
        if (pattern.test(tool[field])) score += WEIGHTS[field]
      }
      if (score > 0 && score >= minScore) candidates.push({ id: tool.id, score })
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
  rebuildHint: (library) =>
    `Rebuild it with: toolsel index <file> --name ${library} --retriever regex.`,
}

function compile(query: string): RegExp {
  const fail = (why: string) =>
    new ToolselError('INVALID_INPUT', `Regex "${query.slice(0, 80)}" ${why}`, {
      details: { retriever: 'regex', pattern: query.slice(0, MAX_PATTERN_CHARS) },
    })
  if (query.length > MAX_PATTERN_CHARS) {
    throw fail(
      `is ${query.length} characters long; the regex retriever takes at most ${MAX_PATTERN_CHARS}.`,
    )
  }
  if (NESTED_QUANTIFIER.test(query)) {
    throw fail(
      'repeats a repeated group (like "(a+)+"), which can take exponential time; write it without the outer repetition.',
    )
  }
  try {
    return new RegExp(query, 'im')
  } catch (error) {
    throw fail(
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
