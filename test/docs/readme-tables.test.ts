import { readFile } from 'node:fs/promises'
import { describe, expect, it } from 'vitest'
import { IMPORT_FORMAT_NAMES } from '../../src/library/importers/import-formats.ts'
import { TOOL_FORMATS } from '../../src/library/provider-tools.ts'

/** The first cells of the table whose header row starts with `| ${header}`. */
function firstColumn(text: string, header: string): string[] {
  const lines = text.split('\n')
  const start = lines.findIndex((line) => new RegExp(`^\\|\\s*${header}\\s*\\|`).test(line))
  expect(start, header).toBeGreaterThanOrEqual(0)
  const cells: string[] = []
  for (const line of lines.slice(start + 2)) {
    if (!line.startsWith('|')) break
    cells.push(line.split('|')[1].trim().replace(/`/g, ''))
  }
  return cells
}

describe("README's tables of formats", () => {
  it('the import formats are the importers toolsel has, and the tool formats the ones it answers in', async () => {
    const readme = await readFile(new URL('../../README.md', import.meta.url), 'utf8')
    expect(firstColumn(readme, 'format').sort()).toEqual([...IMPORT_FORMAT_NAMES].sort())
    expect(firstColumn(readme, '`toolFormat`').sort()).toEqual([...TOOL_FORMATS].sort())
  })
})
