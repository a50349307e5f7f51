/**
 * The arguments section of a Google-style docstring, in the two spellings CRAFT's tools use:
 *
 *     Args:                              Parameters:
 *         name (str): The name.          x1, y1 (float): The first point.
 *
 * @module
 */

export interface DocumentedArgument {
  /** The type in parentheses, e.g. `float` or `pd.DataFrame`. */
  type?: string
  /** The entry's text, continuation lines joined with spaces. */
  description: string
}

const SECTION = /^\s*(?:Args|Arguments|Parameters|Params|Keyword Args|Keyword Arguments)\s*:\s*$/i
/**
 * `Returns:`, `Raises:`… The same lines as `^\s*[A-Z][A-Za-z ]*\s*:\s*$`, written so that no two
 * repetitions can share a run of spaces: that one tried every split of a line's spaces between
 * `[A-Za-z ]*` and `\s*` (`A` + 32,000 spaces + `b`: seconds).
 */
const OTHER_SECTION = /^\s*[A-Z](?:[A-Za-z ]*[A-Za-z])?\s*:\s*$/
/**
 * `name (type): text`. The white space before the optional `(type)` and after it is one `\s*`
 * each side of the group (`\s*(?:\(…\)\s*)?:`), the same lines as `\s*(?:\(…\))?\s*:`, whose two
 * adjacent `\s*` tried every split of a run of spaces (`a` + 32,000 spaces + `b`: 2.2 s).
 */
const ENTRY =
  /^\s*(\*{0,2}[A-Za-z_]\w*(?:\s*,\s*\*{0,2}[A-Za-z_]\w*)*)\s*(?:\(([^)]*)\)\s*)?:\s*(.*)$/

/**
 * Argument name → type and description. One entry may document several names
 * (`x1, y1 (float): …`). Lines that are not entries continue the previous entry's description.
 * The section ends at the next section header (`Returns:`, `Raises:`…) or the end.
 */
export function docstringArguments(docstring: string): Map<string, DocumentedArgument> {
  const documented = new Map<string, DocumentedArgument>()
  const lines = docstring.split('\n')
  const start = lines.findIndex((line) => SECTION.test(line))
  if (start === -1) return documented
  let current: DocumentedArgument[] = []
  for (const line of lines.slice(start + 1)) {
    if (line.trim() === '') continue
    if (OTHER_SECTION.test(line)) break
    const entry = ENTRY.exec(line)
    if (entry) {
      const argument: DocumentedArgument = { description: entry[3].trim() }
      if (entry[2] !== undefined && entry[2].trim() !== '') argument.type = entry[2].trim()
      const names = entry[1].split(',').map((name) => name.trim().replace(/^\*{1,2}/, ''))
      current = names.map(() => ({ ...argument }))
      names.forEach((name, index) => documented.set(name, current[index]))
      continue
    }
    for (const argument of current) {
      argument.description = `${argument.description} ${line.trim()}`.trim()
    }
  }
  return documented
}
