import { readFile } from 'node:fs/promises'
import { describe, expect, it } from 'vitest'
import { ConfigSchema, defaultConfig } from '../../src/config/schema.ts'

const readDoc = (path: string) => readFile(new URL(`../../${path}`, import.meta.url), 'utf8')

/** The zod schema under a default, an optional or a transform (readKeys). */
function unwrap(schema: unknown): unknown {
  let current = schema as { def?: { innerType?: unknown; in?: unknown } } | undefined
  while (current?.def?.innerType !== undefined || current?.def?.in !== undefined) {
    current = (current.def.innerType ?? current.def.in) as typeof current
  }
  return current
}

/** Whether `path` (`server.bodyLimitBytes`, `retrieve.bm25.fieldWeights.examples`) is a setting. */
function isSetting(path: string): boolean {
  let schema: unknown = ConfigSchema
  for (const key of path.split('.')) {
    const shape = (unwrap(schema) as { shape?: Record<string, unknown> } | undefined)?.shape
    if (shape === undefined || !Object.hasOwn(shape, key)) return false
    schema = shape[key]
  }
  return true
}

/** `section.key` names a text gives in backticks whose first part is a config section. */
function settingNames(text: string): string[] {
  const sections = Object.keys(ConfigSchema.shape)
  const names = [...text.matchAll(/`([a-z]+(?:\.[a-zA-Z0-9]+)+)(?::[^`]*)?`/g)]
    .map((match) => match[1])
    .filter((name) => sections.includes(name.split('.')[0]))
  return [...new Set(names)]
}

/** Backticked names with a section's spelling that are not settings: ids, files, response fields. */
const NOT_SETTINGS = new Set(['server.tool', 'examples.jsonl', 'examples.decided'])

/** The rows of the markdown table that follows `heading`: `[key cell, default cell]`. */
function tableAfter(text: string, heading: string): Array<[string, string]> {
  const lines = text.slice(text.indexOf(heading)).split('\n').slice(1)
  const start = lines.findIndex((line) => line.startsWith('|'))
  const rows: Array<[string, string]> = []
  for (const line of lines.slice(start + 2)) {
    if (!line.startsWith('|')) break
    const [key, value] = line.split('|').slice(1, 3)
    rows.push([key.trim(), value.trim()])
  }
  return rows
}

/** A default cell (`` `300000` ``, `` `""` ``, `` `[]` ``) as the value it stands for. */
function cellValue(cell: string): unknown {
  const text = cell.replace(/`/g, '').trim()
  try {
    return JSON.parse(text)
  } catch {
    return text
  }
}

describe('the settings the docs name', () => {
  it('README and docs/mcp.md name only settings src/config/schema.ts has', async () => {
    for (const path of ['README.md', 'docs/mcp.md']) {
      const names = settingNames(await readDoc(path)).filter((name) => !NOT_SETTINGS.has(name))
      expect(names.length, path).toBeGreaterThan(10)
      expect({ path, unknown: names.filter((name) => !isSetting(name)) }).toEqual({
        path,
        unknown: [],
      })
    }
    // The check itself: a misspelt or removed key is caught.
    expect(isSetting('server.maxConnectionsPerAddress')).toBe(true)
    expect(isSetting('auth.readKeys')).toBe(true)
    expect(isSetting('gateway.listTimeoutMs')).toBe(true)
    expect(isSetting('server.maxConnectionPerAddress')).toBe(false)
    expect(isSetting('mcp.searchK.x')).toBe(false)
  })

  it("docs/mcp.md's configuration tables list every mcp and gateway key with the schema's default", async () => {
    const text = await readDoc('docs/mcp.md')
    const defaults = defaultConfig()
    for (const section of ['mcp', 'gateway'] as const) {
      const rows = tableAfter(text, `\`${section}\` section:`)
      const documented: Record<string, unknown> = {}
      for (const [keys, value] of rows) {
        const names = [...keys.matchAll(/`(\w+)`/g)].map((match) => match[1])
        const values = names.length > 1 ? value.split(',').map(cellValue) : [cellValue(value)]
        names.forEach((name, at) => (documented[name] = values[at] ?? values[0]))
      }
      const actual: Record<string, unknown> = { ...defaults[section] }
      // Not set by default: the table names what stands in for it.
      if (section === 'gateway') actual.listTimeoutMs = 'connectTimeoutMs'
      expect(documented, section).toEqual(actual)
    }
  })
})
