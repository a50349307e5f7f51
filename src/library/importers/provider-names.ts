/**
 * OpenAI and Anthropic tool lists that toolsel itself wrote (`toolFormat`, provider-tools.ts)
 * name each tool by its id in a code (`sms.send_sms` → `sms--send_sms`). Imported back (tools
 * exported into an agent stack, that file imported into another library), those names are read
 * back as the ids they were written from, when the file shows that it is such an export:
 *
 * 1. With the export's `toolIds` (provider name → tool id; a whole saved answer of select-tools,
 *    the schema batch or `toolsel select --tool-format`): every tool's name must be a key of it
 *    whose id writes exactly that name (`providerToolName(id) === name`; shortened `…-h<hash>`
 *    names too). A map that does not fit every name is not used.
 * 2. Without it (the bare tool list): every name must read back by itself
 *    (`toolIdOfProviderName`, the one way toolsel writes that id), the ids hold no control,
 *    Latin-1 or lone surrogate characters (`-db`, `-fe` in a hand-written `search-db`,
 *    `get-feed` are read as such), and at least one name holds a separator as toolsel writes it:
 *    `--` (`.`), `-_` (`-`) or `-3a-3a` (`::`). Names that read back as themselves (`get_weather`)
 *    change nothing.
 *
 * All names of a file or none: a list where one name does not read back is not toolsel's
 * (toolsel writes every name in the code), so every name stays as it is. A decoded id `a.b` gives
 * the tool namespace `a` and name `b` (the part after the last `.` or `::`), the namespace option
 * still prefixes the id, and `source.providerName` keeps the name the file had. The option
 * `providerNames: "keep"` (`--provider-names keep`) imports every name as it is.
 * @module
 */
import { providerToolName, toolIdOfProviderName } from '../provider-tools.ts'
import type { JsonSchema, Tool, ToolSource } from '../tool.ts'
import { addWarning, sourceOf, type ImportContext } from './import-context.ts'

/** The id, name and namespace of an imported provider tool. */
interface ProviderNamedTool {
  id: string
  name: string
  namespace?: string
  /** The name the file had, when it was read back as another id. */
  providerName?: string
}

/** Characters a name read back without `toolIds` may not stand for (see the module comment). */
const UNLIKELY = /[\u0000-\u001f\u007f-\u00ff\ud800-\udfff]/
/** A separator as toolsel writes it: `.`, `-` or `::`. */
const SEPARATOR = /--|-_|-3a-3a/

/**
 * The tools of the provider tool list `document` (`definitions` in file order, each with its
 * record), ids and names read back as the module comment says; `fields` gives each tool's
 * description and parameters and may add to its `source`.
 */
export function providerTools<D extends { name: string }>(
  definitions: readonly { definition: D; record: number }[],
  document: unknown,
  context: ImportContext,
  format: 'openai' | 'anthropic',
  fields: (definition: D, source: ToolSource) => { description: string; parameters: JsonSchema },
): Tool[] {
  const named = providerNamedTools(
    definitions.map(({ definition }) => definition.name),
    document,
    context,
  )
  return definitions.map(({ definition, record }, at) => {
    const { providerName, namespace, ...ids } = named[at]
    const source = sourceOf(context, format, record)
    const { description, parameters } = fields(definition, source)
    if (providerName !== undefined) source.providerName = providerName
    const tool: Tool = { ...ids, description, parameters, source }
    if (namespace !== undefined) tool.namespace = namespace
    return tool
  })
}

/** The ids, names and namespaces of the tools named `names`, read back as the module comment says. */
function providerNamedTools(
  names: readonly string[],
  document: unknown,
  context: ImportContext,
): ProviderNamedTool[] {
  const ids = context.providerNames === 'keep' ? undefined : decodedIds(names, document)
  const namespace = context.namespace
  const named = names.map((name, index): ProviderNamedTool => {
    const decoded = ids?.[index]
    const tool: ProviderNamedTool =
      decoded === undefined || decoded === name
        ? { id: name, name }
        : { ...splitId(decoded), providerName: name }
    if (namespace === undefined) return tool
    return { ...tool, id: `${namespace}.${tool.id}`, namespace }
  })
  const renamed = named.filter((tool) => tool.providerName !== undefined)
  if (renamed.length > 0) {
    const first = renamed[0]
    addWarning(
      context,
      undefined,
      `${renamed.length} tool name(s) written by toolsel read back as tool ids (${first.providerName} → ${first.id}); to keep the names as they are, import with providerNames "keep" (--provider-names keep)`,
    )
  }
  return named
}

/** Each name's id when the file is a toolsel export (see the module comment), else undefined. */
function decodedIds(names: readonly string[], document: unknown): string[] | undefined {
  const map = toolIdsOf(document)
  if (map !== undefined) {
    const ids = names.map((name) => (Object.hasOwn(map, name) ? map[name] : undefined))
    if (ids.every((id, at) => typeof id === 'string' && providerToolName(id) === names[at]))
      return ids as string[]
  }
  if (!names.some((name) => SEPARATOR.test(name))) return undefined
  const ids: string[] = []
  for (const name of names) {
    const id = toolIdOfProviderName(name)
    if (id === undefined || UNLIKELY.test(id)) return undefined
    ids.push(id)
  }
  return ids
}

/** The `toolIds` object of a saved answer, if the document is one. */
function toolIdsOf(document: unknown): Record<string, unknown> | undefined {
  if (typeof document !== 'object' || document === null || Array.isArray(document)) return
  const { toolIds } = document as { toolIds?: unknown }
  if (typeof toolIds !== 'object' || toolIds === null || Array.isArray(toolIds)) return
  return toolIds as Record<string, unknown>
}

/** `a.b` → namespace `a`, name `b` (after the last `.` or `::`); an id without either is its own name. */
function splitId(id: string): ProviderNamedTool {
  const dot = id.lastIndexOf('.')
  const colons = id.lastIndexOf('::')
  const [at, length] = dot > colons ? [dot, 1] : [colons, 2]
  const name = id.slice(at + length)
  if (at <= 0 || name === '') return { id, name: id }
  return { id, name, namespace: id.slice(0, at) }
}
