/**
 * Tool ids and names that display as something else (`rtl\u202etxt.exe` reads `rtlexe.txt`)
 * or write terminal escapes (`\u001b[2J`): refused on every way in, as the gateway refuses them
 * from an upstream. The format characters real catalogs hold (a ZWJ in an emoji, a U+200B
 * pasted before a ToolBench API name) and ToolBench's ids over 128 characters are taken.
 */
import { mkdtemp, writeFile } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { describe, expect, it } from 'vitest'
import {
  importToolsFromFile,
  importToolsFromText,
} from '../../../src/library/importers/import-tools.ts'
import { refusedNameCharacter } from '../../../src/library/name-characters.ts'
import { isToolselError } from '../../../src/errors.ts'
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

function importError(run: () => unknown): { code: string; message: string; details: object } {
  try {
    run()
  } catch (error) {
    if (isToolselError(error)) return error
    throw error
  }
  throw new Error('the import went through')
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

  it('an import naming one refuses the whole file, naming the record, field and code point', () => {
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
        const error = importError(() => importToolsFromText(text, { format }))
        expect(error.code).toBe('IMPORT_FAILED')
        expect(error.message).toMatch(
          new RegExp(
            `^<input>: record 1: field "name": tool name ".*" holds ${codePoint.replace('+', '\\+')} at \\d+`,
          ),
        )
        expect(error.message).toContain('Nothing was imported.')
        expect(error.message).not.toMatch(/[\u0000-\u001f\u007f-\u009f\u202a-\u202e\u2066-\u2069]/)
        expect(error.details).toMatchObject({ record: 1, field: 'name', codePoint })
      }
    }
  })

  it('an id made from a namespace holding one is refused as the id', () => {
    const error = importError(() =>
      importToolsFromText(JSON.stringify([{ name: 'send', description: 'Send' }]), {
        format: 'functions',
        namespace: 'mail\u202e',
      }),
    )
    expect(error.message).toContain('field "id": tool id "mail\\u202e.send" holds U+202E at 4')
  })

  it('takes the format characters and the long ids real catalogs hold', () => {
    const names = [
      'Search Users 🔎👨\u200d🦱',
      '\u200bGet Product Details(All countries)',
      `getArticles_for_${'x'.repeat(140)}`,
    ]
    const { tools } = importToolsFromText(
      JSON.stringify(names.map((name) => ({ name, description: 'A tool' }))),
      { format: 'functions' },
    )
    expect(tools.map((tool) => tool.name)).toEqual(names)
  })

  it('toolsel index reads a file: the same refusal', async () => {
    const dir = await mkdtemp(join(tmpdir(), 'toolsel-names-'))
    const file = join(dir, 'tools.jsonl')
    await writeFile(
      file,
      ['ok', 'rtl\u202etxt.exe'].map((name) => JSON.stringify({ name })).join('\n') + '\n',
    )
    await expect(importToolsFromFile(file, { format: 'functions' })).rejects.toMatchObject({
      code: 'IMPORT_FAILED',
      message: expect.stringContaining(': line 2: field "name": tool name "rtl\\u202etxt.exe"'),
    })
  })

  it('PUT /v1/libraries/:library over HTTP: 400 IMPORT_FAILED and no library made', async () => {
    const { app } = await createTestApp()
    const server = await listenApp(app.fetch)
    try {
      const tools = [
        { name: 'send_sms', description: 'Send an SMS', inputSchema: { type: 'object' } },
        { name: 'rtl\u202etxt.exe', description: 'Open a file', inputSchema: { type: 'object' } },
      ]
      const answer = await fetch(`${server.url}/v1/libraries/spoof`, {
        method: 'PUT',
        headers: { 'content-type': 'application/json' },
        body: JSON.stringify({ tools }),
      })
      expect(answer.status).toBe(400)
      const { error } = (await answer.json()) as { error: { code: string; message: string } }
      expect(error.code).toBe('IMPORT_FAILED')
      expect(error.message).toContain('field "name": tool name "rtl\\u202etxt.exe" holds U+202E')
      expect((await fetch(`${server.url}/v1/libraries/spoof`)).status).toBe(404)
    } finally {
      await server.close()
    }
  })
})
