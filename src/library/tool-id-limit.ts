/**
 * How long a tool id (and, since round 46, its name, namespace, tags and title) may be. An id,
 * wherever one enters: imports (PUT /v1/libraries, `toolsel index`),
 * usage examples and feedback, rewards requests, `POST …/tools/batch`, `GET …/tools/:id` and
 * MCP `get_tool_schemas`.
 *
 * The longest id in the benchmark data is 144 characters (a ToolBench `tool::api` id whose API
 * name is its URL path, StableToolBench G1); gateway ids are at most 64 + 1 + 128 = 193 (server
 * and upstream tool name bounds). 500 leaves more than three times the longest real id, and was
 * already the bound of ids in examples, feedback and rewards requests.
 * @module
 */
import { z } from 'zod'
import { ToolselError } from '../errors.ts'
import type { IdList } from './id-table.ts'
import type { Tool } from './tool.ts'
import { shownName } from './name-characters.ts'

/** Most UTF-16 code units in a tool id. */
export const MAX_TOOL_ID_CHARS = 500

/** `tool id "abc…" is 612 characters long; a tool id has at most 500`: the id escaped and cut. */
export function toolIdTooLong(id: string): string {
  return `tool id ${shownName(id)} is ${id.length} characters long; a tool id has at most ${MAX_TOOL_ID_CHARS}`
}

/** A tool id in a request: 1 to MAX_TOOL_ID_CHARS characters, a longer one named in the error. */
export const ToolIdSchema = z
  .string()
  .min(1)
  .max(MAX_TOOL_ID_CHARS, {
    error: (issue) => (typeof issue.input === 'string' ? toolIdTooLong(issue.input) : undefined),
  })

/** The first of `items` whose `id` is longer than MAX_TOOL_ID_CHARS. */
export function firstTooLongId<T extends { id: string }>(items: readonly T[]): T | undefined {
  return items.find((item) => item.id.length > MAX_TOOL_ID_CHARS)
}

/**
 * Most UTF-16 code units in a tool's name, its namespace, each of its tags and its MCP `title`:
 * one limit for the short texts of a tool that every answer, listing and log line naming it
 * repeats (a 1 MB name went into each, unbounded before round 46; ids are bounded above). The
 * longest real ones: a ToolBench API name of 190 characters in ToolGen's list of 46,984 (205 with
 * its tool's name), 115 among the benchmark suites' libraries, a namespace of 59 and a tag of 103
 * (Gorilla's Hugging Face APIs). 500, the id's limit, leaves more than twice the longest.
 */
export const MAX_TOOL_NAME_CHARS = 500

/** A name-like field of a tool longer than MAX_TOOL_NAME_CHARS (`firstTooLongName`). */
export interface TooLongName {
  tool: Tool
  /** `name`, `namespace`, `tags[3]` or `source.title`. */
  field: string
  length: number
}

/** The first of `tools` whose name, namespace, a tag or MCP title passes MAX_TOOL_NAME_CHARS. */
export function firstTooLongName(tools: readonly Tool[]): TooLongName | undefined {
  for (const tool of tools) {
    const fields: Array<[string, unknown]> = [
      ['name', tool.name],
      ['namespace', tool.namespace],
      ...(tool.tags ?? []).map((tag, at): [string, unknown] => [`tags[${at}]`, tag]),
      ['source.title', tool.source?.title],
    ]
    for (const [field, text] of fields) {
      if (typeof text === 'string' && text.length > MAX_TOOL_NAME_CHARS) {
        return { tool, field, length: text.length }
      }
    }
  }
  return undefined
}

/**
 * Most tags of one tool. Each is at most MAX_TOOL_NAME_CHARS, but their number was bounded only
 * by the 8 MiB of an uploaded tool's line (16,000 tags of 500 characters) and not at all in a
 * file given to `toolsel index`; ToolBench and COLT corpus records that repeat an API add their
 * category to its tags, each checked against the others (a record of a million repeats with
 * distinct categories: a million squared comparisons). Real tools hold at most 6 (a Gorilla Hugging
 * Face API; bench/README "Round 47: tool field limits"); 256 leaves more than forty times that.
 */
export const MAX_TOOL_TAGS = 256

/**
 * Most UTF-16 code units in a tool's description. Before round 47 bounded only by the 8 MiB of an
 * uploaded tool's line, and not at all in a file given to `toolsel index`; BM25 indexes the first
 * 500,000 characters of it (MAX_FIELD_CHARS) and the gateway cuts an upstream's at 16,384. The
 * longest real ones: 23,532 among the 1,075 specs over 50 KB of APIs.guru's directory (atlassian
 * jira `createWorkflow`, bench/README round 22), 8,018 in the benchmark data (a ToolBench API).
 * 100,000 leaves more than four times the longest.
 */
export const MAX_TOOL_DESCRIPTION_CHARS = 100_000

/**
 * Most UTF-16 code units in a tool's `source` metadata as JSON (the importer's format, file and
 * record, and what the format carries besides: Anthropic `input_examples`, Gorilla's example
 * code, ToolBench's `template_response`, an MCP tool's `annotations` and `outputSchema`). Before
 * round 48 bounded only by the 8 MiB of an uploaded tool's line, and not at all in a file given to
 * `toolsel index`; every answer with a tool's schemas, and every read of its saved line, carries
 * it. The longest real one is 3,927 characters (a Gorilla Hugging Face API's example code; 6,569
 * tools of the benchmark data and the demo servers, `bench/tool-field-sizes.ts`); the gateway
 * keeps an upstream's `outputSchema` and `annotations` up to 65,536 characters each
 * (MAX_UPSTREAM_SCHEMA_CHARS). 262,144 leaves both, and more than sixty times the longest real.
 */
export const MAX_TOOL_SOURCE_CHARS = 262_144

/** A field of a tool past its limit (`firstOverFieldLimit`): how large it is, and the limit. */
export interface OverFieldLimit {
  tool: Tool
  /** `tags` (counted), `description` (characters) or `source` (characters of its JSON). */
  field: 'tags' | 'description' | 'source'
  size: number
  limit: number
}

/**
 * Characters of `source` as JSON; past MAX_TOOL_SOURCE_CHARS for one nested deeper than
 * `JSON.stringify` recurses (it could not be saved either).
 */
function sourceChars(source: unknown): number {
  if (source === undefined) return 0
  try {
    return JSON.stringify(source)?.length ?? 0
  } catch {
    return Number.POSITIVE_INFINITY
  }
}

/**
 * The first of `tools` holding more than MAX_TOOL_TAGS tags, a too long description or too much
 * `source` metadata.
 */
export function firstOverFieldLimit(tools: readonly Tool[]): OverFieldLimit | undefined {
  for (const tool of tools) {
    const tags = tool.tags?.length ?? 0
    if (tags > MAX_TOOL_TAGS) return { tool, field: 'tags', size: tags, limit: MAX_TOOL_TAGS }
    const description = typeof tool.description === 'string' ? tool.description.length : 0
    if (description > MAX_TOOL_DESCRIPTION_CHARS) {
      return { tool, field: 'description', size: description, limit: MAX_TOOL_DESCRIPTION_CHARS }
    }
    const source = sourceChars(tool.source)
    if (source > MAX_TOOL_SOURCE_CHARS) {
      return { tool, field: 'source', size: source, limit: MAX_TOOL_SOURCE_CHARS }
    }
  }
  return undefined
}

/** `it has 300 tags; a tool has at most 256`: what `firstOverFieldLimit` found, said. */
export function overFieldLimit({ field, size, limit }: OverFieldLimit): string {
  const count = (value: number) => value.toLocaleString('en-US')
  if (field === 'tags') return `it has ${count(size)} tags; a tool has at most ${count(limit)}`
  if (field === 'description')
    return `its description is ${count(size)} characters long; a tool's description has at most ${count(limit)}`
  const length = Number.isFinite(size)
    ? `is ${count(size)} characters of JSON`
    : 'nests too deeply to be written as JSON'
  return `its source metadata ${length}; a tool's source has at most ${count(limit)}`
}

/** `its name is 612 characters long; a tool's name, …`: what `firstTooLongName` found, said. */
export function toolNameTooLong({ field, length }: TooLongName): string {
  return `its ${field} is ${length} characters long; a tool's name, namespace, tags and title have at most ${MAX_TOOL_NAME_CHARS} characters each`
}

/** Throws INVALID_INPUT naming the first id of `ids` longer than MAX_TOOL_ID_CHARS. */
export function assertToolIdLengths(ids: readonly string[]): void {
  const long = ids.find((id) => id.length > MAX_TOOL_ID_CHARS)
  if (long === undefined) return
  throw new ToolselError('INVALID_INPUT', `The ${toolIdTooLong(long)}.`, {
    details: { length: long.length, maxChars: MAX_TOOL_ID_CHARS },
  })
}

/**
 * Positions (ascending) of the ids in `ids` longer than MAX_TOOL_ID_CHARS: a saved index imported
 * before ids were bounded (a load warns of them). A list of an index's bytes (`PackedIds`) names
 * the few candidates by their bytes without decoding the others; an array is checked id by id.
 */
export function overlongIdPositions(
  ids: IdList & { longerThan?(bytes: number): number[] },
): number[] {
  const candidates =
    ids.longerThan?.(MAX_TOOL_ID_CHARS) ?? Array.from({ length: ids.length }, (_, at) => at)
  return candidates.filter((position) => (ids.at(position)?.length ?? 0) > MAX_TOOL_ID_CHARS)
}
