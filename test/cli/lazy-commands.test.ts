import { execFile } from 'node:child_process'
import { resolve } from 'node:path'
import { promisify } from 'node:util'
import { describe, expect, it } from 'vitest'

/**
 * The CommonJS packages (in Node's require cache once anything imports them) a fresh process has
 * loaded after `main(argv)` of src/main.ts: a command's libraries load only when it runs.
 */
async function packagesLoadedBy(argv: string[]): Promise<string[]> {
  const script = `
    const { createRequire } = await import('node:module')
    const { main } = await import(${JSON.stringify(resolve('src/main.ts'))})
    const io = { stdout() {}, stderr() {}, env: {}, stderrIsTTY: false }
    const code = await main(${JSON.stringify(argv)}, io)
    const cache = createRequire(import.meta.url).cache
    const names = Object.keys(cache).map((path) => /node_modules\\/((?:@[^/]+\\/)?[^/]+)/.exec(path)?.[1])
    console.log(JSON.stringify({ code, names: [...new Set(names.filter(Boolean))].sort() }))
  `
  const { stdout } = await promisify(execFile)(
    process.execPath,
    ['--import', 'tsx', '--input-type=module', '-e', script],
    { env: { ...process.env, TOOLSEL_RUN_SOURCE: '1' } },
  )
  const { code, names } = JSON.parse(stdout) as { code: number; names: string[] }
  expect(code).toBe(0)
  return names
}

describe('CLI start', () => {
  it('loads no command library for --help, and only its own for index --help', async () => {
    // cross-spawn and content-type: the MCP SDK's client; ajv, yaml, csv-parse: the importers'.
    const heavy = ['ajv', 'cross-spawn', 'content-type', 'yaml', 'csv-parse', 'prom-client']
    const help = await packagesLoadedBy(['--help'])
    expect(help.filter((name) => heavy.includes(name))).toEqual([])
    const indexHelp = await packagesLoadedBy(['index', '--help'])
    expect(indexHelp.filter((name) => heavy.includes(name))).toEqual([])
  }, 120_000)
})
