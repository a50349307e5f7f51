/**
 * Tools in the shapes model APIs take as they are (`toolFormat` of `POST /v1/select-tools`, the
 * schema batch, the client and `toolsel select`), and the tool names those APIs allow.
 *
 * - `openai`: OpenAI Chat Completions, `{type: "function", function: {name, description,
 *   parameters}}` (`tools` of https://platform.openai.com/docs/api-reference/chat/create;
 *   `ChatCompletionFunctionTool` of the `openai` package).
 * - `openai-responses`: the OpenAI Responses API, `{type: "function", name, description,
 *   parameters, strict: false}` (`tools` of
 *   https://platform.openai.com/docs/api-reference/responses/create; `FunctionTool` of the
 *   `openai` package, where `strict` is a required field). `strict: false` because strict mode
 *   takes only a subset of JSON Schema (every property required, no additional ones), which an
 *   imported tool's schema rarely is.
 * - `anthropic`: Anthropic Messages, `{name, description, input_schema}` (`tools` of
 *   https://docs.anthropic.com/en/api/messages).
 *
 * The schema goes as the library holds it, in each: an OpenAPI tool that keeps its spec's shared
 * schemas in `$defs` (openapi-defs.ts) keeps them there, as `parameters` and `input_schema` are
 * JSON Schema objects, which have `$defs` and local `$ref`s (OpenAI documents them for strict
 * mode too, recursion included).
 *
 * Both providers want a tool name matching `^[a-zA-Z0-9_-]{1,64}$`; tool ids (`sms.send_sms`,
 * `The Cocktail DB::List of Cocktails`) often are not, and names repeat across namespaces
 * (`github.create_issue`, `linear.create_issue`) where ids do not. So a provider tool is named by
 * its id, written with `providerToolName`:
 *
 * - letters, digits and `_` stay as they are;
 * - `.` becomes `--` (`sms.send_sms` → `sms--send_sms`) and `-` becomes `-_`
 *   (`brave-search.web_search` → `brave-_search--web_search`), the two common separators;
 * - every other UTF-16 code unit becomes `-` and its code in lowercase hex, two digits up to
 *   0xff (space → `-20`, `:` → `-3a`), else `-u` and four digits.
 *
 * That is a prefix-free code, so distinct ids get distinct names and `toolIdOfProviderName`
 * reads the id back. An id whose name would be longer than 64 characters is named by the first
 * 50 characters of it (cut before an escape, never inside one), `-h` and the first 12 hex digits
 * of the id's SHA-256: `-h` is no escape of the code above, so such a name is never another id's
 * plain name, cannot be read back by itself, and two long ids share one only if they share the
 * prefix and 48 bits of hash. Every answer therefore also carries `toolIds`, provider name → tool
 * id, for the names of its tools.
 * @module
 */
import { sha256, type JsonSchema, type Tool } from './tool.ts'

export const TOOL_FORMATS = ['toolsel', 'openai', 'openai-responses', 'anthropic'] as const
export type ToolFormat = (typeof TOOL_FORMATS)[number]
/** The formats of a model API (every one but toolsel's own). */
export type ProviderToolFormat = Exclude<ToolFormat, 'toolsel'>

/** What model APIs accept as a tool name (OpenAI and Anthropic alike). */
export const PROVIDER_TOOL_NAME = /^[a-zA-Z0-9_-]{1,64}$/

/** Longest provider tool name. */
const MAX_NAME = 64
/** Hex digits of the id's SHA-256 in a shortened name. */
const HASH_DIGITS = 12
/** Characters of the written id a shortened name keeps: 64 - "-h" - the hash. */
const KEPT = MAX_NAME - 2 - HASH_DIGITS

export interface OpenAIChatTool {
  type: 'function'
  function: { name: string; description: string; parameters: JsonSchema }
}
export interface OpenAIResponsesTool {
  type: 'function'
  name: string
  description: string
  parameters: JsonSchema
  strict: false
}
export interface AnthropicTool {
  name: string
  description: string
  input_schema: JsonSchema
}
/** A tool in the shape of `format`. */
export type ProviderTool<F extends ProviderToolFormat = ProviderToolFormat> = {
  openai: OpenAIChatTool
  'openai-responses': OpenAIResponsesTool
  anthropic: AnthropicTool
}[F]

function hex(code: number, digits: number): string {
  return code.toString(16).padStart(digits, '0')
}

/** The id written in the code of the module comment, without the length limit. */
function written(id: string): string {
  let name = ''
  for (let at = 0; at < id.length; at += 1) {
    const code = id.charCodeAt(at)
    if (
      (code >= 0x30 && code <= 0x39) ||
      (code >= 0x41 && code <= 0x5a) ||
      (code >= 0x61 && code <= 0x7a) ||
      code === 0x5f
    )
      name += id[at]
    else if (code === 0x2e) name += '--'
    else if (code === 0x2d) name += '-_'
    else if (code <= 0xff) name += `-${hex(code, 2)}`
    else name += `-u${hex(code, 4)}`
  }
  return name
}

/** The provider tool name of tool id `id` (see the module comment); valid for every provider. */
export function providerToolName(id: string): string {
  const name = written(id)
  if (name.length <= MAX_NAME) return name
  // The longest run of whole characters and escapes that fits in KEPT (never half an escape).
  let cut = 0
  while (cut < name.length) {
    const next = name[cut + 1]
    const length = name[cut] !== '-' ? 1 : next === '-' || next === '_' ? 2 : next === 'u' ? 6 : 3
    if (cut + length > KEPT) break
    cut += length
  }
  return `${name.slice(0, cut)}-h${sha256(id).slice(0, HASH_DIGITS)}`
}

/**
 * The tool id a provider tool name was written from, or undefined when `name` is not one
 * `providerToolName` writes in full (a shortened name ending `-h<hash>`: look it up in the
 * answer's `toolIds`; not a provider name at all).
 */
export function toolIdOfProviderName(name: string): string | undefined {
  if (!PROVIDER_TOOL_NAME.test(name)) return undefined
  let id = ''
  let at = 0
  while (at < name.length) {
    const char = name[at]
    if (char !== '-') {
      id += char
      at += 1
      continue
    }
    const next = name[at + 1]
    if (next === '-' || next === '_') {
      id += next === '-' ? '.' : '-'
      at += 2
      continue
    }
    const digits = next === 'u' ? name.slice(at + 2, at + 6) : name.slice(at + 1, at + 3)
    if (!/^[0-9a-f]+$/.test(digits) || digits.length !== (next === 'u' ? 4 : 2)) return undefined
    id += String.fromCharCode(Number.parseInt(digits, 16))
    at += next === 'u' ? 6 : 3
  }
  // Only the canonical writing reads back (`-2e` is not another way to write "."): one name per id.
  return providerToolName(id) === name ? id : undefined
}

/** `tool` in the shape of `format`, named by `providerToolName(tool.id)`. */
export function providerTool<F extends ProviderToolFormat>(tool: Tool, format: F): ProviderTool<F> {
  const name = providerToolName(tool.id)
  const { description, parameters } = tool
  switch (format) {
    case 'openai':
      return { type: 'function', function: { name, description, parameters } } as ProviderTool<F>
    case 'openai-responses':
      return { type: 'function', name, description, parameters, strict: false } as ProviderTool<F>
    default:
      return { name, description, input_schema: parameters } as ProviderTool<F>
  }
}

/**
 * `tools` in `format`'s shape with `toolIds`, provider tool name → tool id: what every answer in
 * a provider format holds (select-tools, the schema batch).
 */
export function providerToolsAnswer<F extends ProviderToolFormat>(
  tools: readonly Tool[],
  format: F,
): { tools: ProviderTool<F>[]; toolIds: Record<string, string> } {
  return { tools: tools.map((tool) => providerTool(tool, format)), toolIds: providerToolIds(tools) }
}

/** Provider tool name → tool id for `tools` (what an answer in a provider format carries). */
export function providerToolIds(tools: readonly Tool[]): Record<string, string> {
  // fromEntries defines own properties: a tool named "__proto__" is a key like any other.
  return Object.fromEntries(tools.map((tool) => [providerToolName(tool.id), tool.id]))
}
