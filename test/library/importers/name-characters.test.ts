/**
 * Tool ids and names that display as something else (`rtl\u202etxt.exe` reads `rtlexe.txt`)
 * or write terminal escapes (`\u001b[2J`): imported as they are with one warning naming them
 * escaped (a real ToolBench API name holds a U+0008; refusing would fail a whole suite), while the
 * gateway skips them from an upstream. The format characters real catalogs hold (a ZWJ in an
 * emoji, a U+200B pasted before a ToolBench API name) and ToolBench's ids over 128 characters
 * are taken without a warning.
 */
import { mkdtemp, writeFile } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { describe, expect, it } from 'vitest'
import {
  importToolsFromFile,
  importToolsFromText,
} from '../../../src/library/importers/import-tools.ts'
import { summarizeImport } from '../../../src/library/importers/import-summary.ts'
import { refusedNameCharacter, shownName } from '../../../src/library/name-characters.ts'
import { listenApp } from '../../helpers/listen-app.ts'
import { createTestApp } from '../../server/test-service.ts'

const REFUSED: Array<[string, string]> = [
  ['rtl\u202etxt.exe', 'U+202E'],
  ['clear\u001b[2J', 'U+001B'],
  ['line\nbreak', 'U+000A'],
  ['csi\u009b31m', 'U+009B'],
  ['isolate\u2067x', 'U+2067'],
  ['lone\ud800surrogate', 'U+D800'],
]

/** What no warning string may hold raw: controls, bidi controls, lone surrogates. */
const RAW = /[\u0000-\u001f\u007f-\u009f\u202a-\u202e\u2066-\u2069\ud800-\udfff]/
const WARNING = 'tool(s) have an id or name holding a control character'

function nameWarnings(warnings: readonly string[]): string[] {
  return warnings.filter((warning) => warning.includes(WARNING))
}

/** PUT /v1/libraries/spoof with `tools` over HTTP: the 201 answer's text. */
async function putSpoof(url: string, tools: unknown[]): Promise<string> {
  const answer = await fetch(`${url}/v1/libraries/spoof`, {
    method: 'PUT',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify({ tools }),
  })
  expect(answer.status).toBe(201)
  return answer.text()
}

describe('tool names that display as something else', () => {
  it('refusedNameCharacter: controls, bidi controls and lone surrogates; ZWJ and ZWSP pass', () => {
    expect(refusedNameCharacter('rtl\u202etxt.exe')).toEqual({ codePoint: 'U+202E', index: 3 })
    expect(refusedNameCharacter('Search Users 🔎👨\u200d🦱')).toBeUndefined()
    expect(refusedNameCharacter('\u200bGet Product Details')).toBeUndefined()
    // The gateway's stricter rule refuses every format character.
    expect(refusedNameCharacter('\u200bGet', { anyFormat: true })).toEqual({
      codePoint: 'U+200B',
      index: 0,
    })
  })

  it('an import naming one takes the file as it is, with one warning naming it escaped', () => {
    for (const [name, codePoint] of REFUSED) {
      const tools = [
        { name: 'fine', description: 'A fine tool' },
        { name, description: 'A tool' },
      ]
      for (const [format, text] of [
        ['functions', JSON.stringify(tools)],
        [
          'mcp',
          JSON.stringify({
            tools: tools.map((tool) => ({ ...tool, inputSchema: { type: 'object' } })),
          }),
        ],
        ['openai', JSON.stringify(tools.map((tool) => ({ type: 'function', function: tool })))],
      ] as const) {
        const result = importToolsFromText(text, { format })
        // Ids and names unchanged: gold labels and answers still name the tool as written.
        expect(result.tools.map((tool) => [tool.id, tool.name])).toEqual([
          ['fine', 'fine'],
          [name, name],
        ])
        const warnings = nameWarnings(result.warnings)
        expect(warnings).toHaveLength(1)
        const index = name.indexOf(String.fromCodePoint(parseInt(codePoint.slice(2), 16)))
        expect(warnings[0]).toContain(
          `<input>: 1 ${WARNING}, bidi override or isolate, or lone surrogate (imported as they are; such a tool may display as another one): `,
        )
        expect(warnings[0]).toContain(
          `: name holds ${codePoint} at ${index}, id holds ${codePoint} at ${index}. Rename them at the source`,
        )
        expect(warnings[0]).not.toMatch(RAW)
      }
    }
  })

  it('counts every such tool and lists the first three, the id escaped', () => {
    const names = ['a\u202eb', 'c\u001bd', 'e\nf', 'g\u2066h', 'fine']
    const { tools, warnings } = importToolsFromText(
      JSON.stringify(names.map((name) => ({ name, description: 'A tool' }))),
      { format: 'functions' },
    )
    expect(tools).toHaveLength(5)
    expect(nameWarnings(warnings)).toEqual([
      `<input>: 4 ${WARNING}, bidi override or isolate, or lone surrogate (imported as they are; such a tool may display as another one): "a\\u202eb": name holds U+202E at 1, id holds U+202E at 1; "c\\u001bd": name holds U+001B at 1, id holds U+001B at 1; "e\\nf": name holds U+000A at 1, id holds U+000A at 1; …. Rename them at the source; they are shown escaped in CLI output and logs.`,
    ])
  })

  it('an id made from a namespace holding one is named as the id', () => {
    const { tools, warnings } = importToolsFromText(
      JSON.stringify([{ name: 'send', description: 'Send' }]),
      { format: 'functions', namespace: 'mail\u202e' },
    )
    expect(tools[0].id).toBe('mail\u202e.send')
    expect(nameWarnings(warnings)).toHaveLength(1)
    expect(nameWarnings(warnings)[0]).toContain('"mail\\u202e.send": id holds U+202E at 4.')
  })

  it('takes the format characters and the long ids real catalogs hold', () => {
    const names = [
      'Search Users 🔎👨\u200d🦱',
      '\u200bGet Product Details(All countries)',
      `getArticles_for_${'x'.repeat(140)}`,
    ]
    const { tools, warnings } = importToolsFromText(
      JSON.stringify(names.map((name) => ({ name, description: 'A tool' }))),
      { format: 'functions' },
    )
    expect(tools.map((tool) => tool.name)).toEqual(names)
    expect(nameWarnings(warnings)).toEqual([])
  })

  it('a file read (toolsel index, the bench suites): the same warning', async () => {
    const dir = await mkdtemp(join(tmpdir(), 'toolsel-names-'))
    const file = join(dir, 'tools.jsonl')
    await writeFile(
      file,
      ['ok', 'rtl\u202etxt.exe'].map((name) => JSON.stringify({ name })).join('\n') + '\n',
    )
    const { tools, warnings } = await importToolsFromFile(file, { format: 'functions' })
    expect(tools.map((tool) => tool.id)).toEqual(['ok', 'rtl\u202etxt.exe'])
    expect(nameWarnings(warnings)).toEqual([expect.stringContaining(`tools.jsonl: 1 ${WARNING}`)])
    expect(nameWarnings(warnings)[0]).toContain('"rtl\\u202etxt.exe": name holds U+202E at 3')
  })

  it('PUT /v1/libraries/:library over HTTP: made, the warning escaped, the id as imported', async () => {
    const { app } = await createTestApp()
    const server = await listenApp(app.fetch)
    try {
      const tools = [
        { name: 'send_sms', description: 'Send an SMS', inputSchema: { type: 'object' } },
        { name: 'rtl\u202etxt.exe', description: 'Open a file', inputSchema: { type: 'object' } },
      ]
      const text = await putSpoof(server.url, tools)
      // The answer's own text: the warning holds `\\u202e` escaped twice over, never U+202E.
      expect(text).not.toContain('\u202e')
      const body = JSON.parse(text) as { warnings: string[] }
      const warnings = nameWarnings(body.warnings)
      expect(warnings).toHaveLength(1)
      expect(warnings[0]).toContain(
        '"spoof.rtl\\u202etxt.exe": name holds U+202E at 3, id holds U+202E at 9',
      )
      expect(warnings[0]).not.toMatch(RAW)
      const tool = await fetch(`${server.url}/v1/libraries/spoof/tools/spoof.rtl%E2%80%AEtxt.exe`)
      expect(tool.status).toBe(200)
      const { tool: served } = (await tool.json()) as { tool: { id: string; name: string } }
      expect(served).toMatchObject({ id: 'spoof.rtl\u202etxt.exe', name: 'rtl\u202etxt.exe' })
    } finally {
      await server.close()
    }
  })

  it('PUT over HTTP: import.suspiciousIds lists each such field, the id escaped, capped', async () => {
    const { app } = await createTestApp()
    const server = await listenApp(app.fetch)
    try {
      const long = `long${'\u2066'.repeat(70)}`
      const tools = [
        { name: 'send_sms', description: 'Send an SMS', inputSchema: { type: 'object' } },
        { name: 'rtl\u202etxt.exe', description: 'Open a file', inputSchema: { type: 'object' } },
        { name: 'zero\u200bwidth', description: 'No warning', inputSchema: { type: 'object' } },
        { name: long, description: 'A long one', inputSchema: { type: 'object' } },
      ]
      const text = await putSpoof(server.url, tools)
      expect(text).not.toMatch(RAW)
      const body = JSON.parse(text) as {
        import: { counts: { suspiciousIds: number }; suspiciousIds: unknown[] }
      }
      expect(body.import.counts.suspiciousIds).toBe(4)
      expect(body.import.suspiciousIds).toEqual([
        { id: 'spoof.rtl\\u202etxt.exe', tool: 1, field: 'name', codePoint: 'U+202E', index: 3 },
        { id: 'spoof.rtl\\u202etxt.exe', tool: 1, field: 'id', codePoint: 'U+202E', index: 9 },
        {
          id: `spoof.long${'\\u2066'.repeat(54)}…`,
          tool: 3,
          field: 'name',
          codePoint: 'U+2066',
          index: 4,
        },
        {
          id: `spoof.long${'\\u2066'.repeat(54)}…`,
          tool: 3,
          field: 'id',
          codePoint: 'U+2066',
          index: 10,
        },
      ])
      // The escaped id is JSON string text: parsed, it is the id the tool is served under.
      const [first] = body.import.suspiciousIds as Array<{ id: string }>
      const id = JSON.parse(`"${first.id}"`) as string
      const tool = await fetch(`${server.url}/v1/libraries/spoof/tools/${encodeURIComponent(id)}`)
      expect(tool.status).toBe(200)
    } finally {
      await server.close()
    }
  })

  it('the summary lists up to its limit and counts every field', () => {
    const imported = importToolsFromText(
      JSON.stringify(
        ['a\u202e', 'b\u0007', 'ok', 'c\u2069'].map((name) => ({ name, description: 'A tool' })),
      ),
      { format: 'functions' },
    )
    const summary = summarizeImport(imported, 2)
    expect(summary.counts.suspiciousIds).toBe(6)
    expect(summary.suspiciousIds).toEqual([
      { id: 'a\\u202e', tool: 0, field: 'name', codePoint: 'U+202E', index: 1 },
      { id: 'a\\u202e', tool: 0, field: 'id', codePoint: 'U+202E', index: 1 },
    ])
    const clean = summarizeImport(
      importToolsFromText(JSON.stringify([{ name: 'ok', description: 'A tool' }]), {
        format: 'functions',
      }),
    )
    expect(clean.suspiciousIds).toEqual([])
    expect(clean.counts.suspiciousIds).toBe(0)
  })
})

describe('shownName (warnings and log lines)', () => {
  it('escapes C0 and C1 controls, bidi and zero-width characters, and cuts at 64 with "…" after the quotes', () => {
    // The gateway's own version left DEL and the C1 controls (U+009B: a terminal's CSI) raw.
    expect(shownName('csi\u009b31m\u007f')).toBe('"csi\\u009b31m\\u007f"')
    expect(shownName('rtl\u202etxt zero\u200bwidth\u0007')).toBe(
      '"rtl\\u202etxt zero\\u200bwidth\\u0007"',
    )
    expect(shownName('n'.repeat(100))).toBe(`"${'n'.repeat(64)}"…`)
    expect(shownName(undefined)).toBe('"undefined"')
  })
})
