/**
 * A saved index whose tool ids hold a control character, a bidi override or isolate, or a lone
 * surrogate (imported with a warning, saved before imports warned, or restored): the load serves it as
 * it is and logs one warning naming the ids escaped. The check reads the ids section's bytes
 * (`PackedIds.suspectPositions`), so it must find exactly what `refusedNameCharacter` finds.
 */
import { mkdtemp } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { describe, expect, it } from 'vitest'
import { defaultConfig } from '../../src/config/schema.ts'
import { refusedNameCharacter, unshowableIdPositions } from '../../src/library/name-characters.ts'
import { PackedIds } from '../../src/library/packed-ids.ts'
import { MAX_TOOL_ID_CHARS, overlongIdPositions } from '../../src/library/tool-id-limit.ts'
import type { Tool } from '../../src/library/tool.ts'
import { ToolLibrary } from '../../src/library/tool-library.ts'
import { createMemoryLogger } from '../../src/log.ts'
import { main } from '../../src/main.ts'
import {
  buildIndexedLibrary,
  loadIndexedLibrary,
  saveIndexedLibrary,
} from '../../src/store/library-lifecycle.ts'
import { restoreSnapshot, writeSnapshot } from '../../src/store/snapshot.ts'

const config = defaultConfig()

/** A PackedIds over `ids` as an index's ids section holds them. */
function packed(ids: readonly string[]): PackedIds {
  return PackedIds.of(Buffer.from(JSON.stringify(ids)), ids.length)!
}

function tool(id: string): Tool {
  return { id, name: id, description: `The ${id} tool`, parameters: { type: 'object' } }
}

/** What no log line may hold raw. */
const RAW = /[\u0000-\u001f\u007f-\u009f\u202a-\u202e\u2066-\u2069\ud800-\udfff]/

describe('ids checked at load', () => {
  it('the byte scan finds what refusedNameCharacter finds, over every UTF-16 code unit', () => {
    const ids: string[] = []
    for (let code = 0; code < 0x10000; code += 1) ids.push(`id${String.fromCharCode(code)}x`)
    ids.push('lone\ud800', 'lone\udfff', 'pair\ud83d\udd0e', 'quote"and\\slash', 'plain')
    const expected = ids.flatMap((id, position) =>
      refusedNameCharacter(id) === undefined ? [] : [position],
    )
    // C0 (32), DEL and C1 (33), U+202A-202E (5), U+2066-2069 (4), each surrogate alone (2048), 2 more.
    expect(expected).toHaveLength(32 + 33 + 5 + 4 + 2048 + 2)
    expect(unshowableIdPositions(packed(ids))).toEqual(expected)
    expect(unshowableIdPositions(ids)).toEqual(expected)
    // Harmless neighbours of the bytes it looks for are not even suspected: © (C2 A9),
    // ’ (E2 80 99), ZWJ (E2 80 8D), U+2060 (E2 81 A0).
    expect(packed(['a©', 'b’', 'c\u200d', 'd\u2060', 'e\u202e']).suspectPositions()).toEqual([4])
  })

  it('a saved index holding such ids loads as it is, with one warning naming them escaped', async () => {
    const indexDir = await mkdtemp(join(tmpdir(), 'toolsel-unshowable-'))
    const ids = [
      'mail.send',
      'rtl\u202etxt.exe',
      'clear\u001b[2J',
      'csi\u009b31m',
      'isolate\u2067x',
    ]
    const library = new ToolLibrary('spoof', ids.map(tool))
    const dir = await saveIndexedLibrary(indexDir, await buildIndexedLibrary(library, config))
    const logger = createMemoryLogger()
    const loaded = await loadIndexedLibrary(dir, config, { logger })
    expect(loaded.library.idList.length).toBe(5)
    expect(loaded.library.require('rtl\u202etxt.exe').id).toBe('rtl\u202etxt.exe')
    const warnings = logger.lines.filter((line) => line.includes('tool id(s) hold'))
    expect(warnings).toHaveLength(1)
    expect(warnings[0]).not.toMatch(RAW)
    expect(warnings[0]).toContain(' WARN ')
    expect(warnings[0]).toContain('"unshowableIds":4')
    expect(warnings[0]).toContain(`Library "spoof" (${dir}): 4 tool id(s) hold a control character`)
    // True of an index saved now too (was: "saved before imports warned of them", said of every one).
    expect(warnings[0]).toContain('surrogate (imported and served as they are; such a tool may')
    expect(warnings[0]).toContain(
      '"rtl\\u202etxt.exe": U+202E at 3; "clear\\u001b[2J": U+001B at 5; "csi\\u009b31m": U+009B at 3; …',
    )

    // A clean library: no warning.
    const clean = createMemoryLogger()
    const cleanDir = await saveIndexedLibrary(
      indexDir,
      await buildIndexedLibrary(new ToolLibrary('clean', ['a', 'b©’'].map(tool)), config),
    )
    await loadIndexedLibrary(cleanDir, config, { logger: clean })
    expect(clean.lines.filter((line) => line.includes('tool id(s) hold'))).toEqual([])
  })

  it('a snapshot holding such ids restores as it is, with the warning', async () => {
    const root = await mkdtemp(join(tmpdir(), 'toolsel-unshowable-snapshot-'))
    const library = new ToolLibrary('spoof', ['ok', 'rtl\u202etxt.exe'].map(tool))
    await writeSnapshot(join(root, 'snap'), [await buildIndexedLibrary(library, config)])
    const logger = createMemoryLogger()
    const restored = await restoreSnapshot(
      join(root, 'snap'),
      join(root, 'indexes'),
      config,
      logger,
    )
    expect(restored).toEqual(['spoof'])
    const warnings = logger.lines.filter((line) => line.includes('tool id(s) hold'))
    expect(warnings).toEqual([expect.stringContaining('1 tool id(s) hold')])
    expect(warnings[0]).toContain('"rtl\\u202etxt.exe": U+202E at 3. Rename them')
    const loaded = await loadIndexedLibrary(join(root, 'indexes', 'spoof'), config)
    expect(loaded.library.idList.at(1)).toBe('rtl\u202etxt.exe')
  })

  it('warns once per process for one library content (debug after), at the level asked; toolsel select only with --log-level debug', async () => {
    const root = await mkdtemp(join(tmpdir(), 'toolsel-unshowable-once-'))
    const ids = ['ok', 'once\u202etxt.exe']
    const dir = await saveIndexedLibrary(
      join(root, 'indexes'),
      await buildIndexedLibrary(new ToolLibrary('once', ids.map(tool)), config),
    )
    const levels = (logger: { lines: string[] }) =>
      logger.lines
        .filter((line) => line.includes('tool id(s) hold'))
        .map((line) => line.split(' ')[1])
    // A reload of the same tools (a server reloading, a second restore) repeats nothing.
    const logger = createMemoryLogger()
    await loadIndexedLibrary(dir, config, { logger })
    await loadIndexedLibrary(dir, config, { logger })
    expect(levels(logger)).toEqual(['WARN', 'DEBUG'])

    // `toolsel select --library` runs again and again: quiet unless --log-level debug (a library
    // this process never warned of).
    await saveIndexedLibrary(
      join(root, 'indexes'),
      await buildIndexedLibrary(
        new ToolLibrary('cli', ['ok', 'cli\u202etxt.exe'].map(tool)),
        config,
      ),
    )
    const select = async (...extra: string[]) => {
      let stderr = ''
      const code = await main(
        ['select', 'send mail', '--library', 'cli', '--index-dir', join(root, 'indexes'), ...extra],
        { stdout: () => {}, stderr: (text) => (stderr += text), env: {} },
      )
      expect(code, stderr).toBe(0)
      return stderr
    }
    expect(await select()).not.toContain('tool id(s) hold')
    expect(await select('--log-level', 'debug')).toMatch(
      / DEBUG Library "cli" \([^)]*\): 1 tool id\(s\) hold/,
    )
  }, 60_000)

  it('a saved index holding an id past 500 characters loads as it is, with a warning naming it', async () => {
    // Imported before round 37 bounded ids (3780606): no request can name such a tool.
    const indexDir = await mkdtemp(join(tmpdir(), 'toolsel-overlong-'))
    const long = `long.${'x'.repeat(607)}`
    // 520 UTF-16 units (260 surrogate pairs); 300 characters in 600 UTF-8 bytes (not too long);
    // 501 characters written with JSON escapes.
    const pairs = '\u{1f50e}'.repeat(260)
    const wide = 'é'.repeat(300)
    const escaped = `q"${'\\'.repeat(499)}`
    const ids = ['mail.send', long, wide, pairs, escaped, 'y'.repeat(MAX_TOOL_ID_CHARS)]
    // The byte scan of a saved ids section finds what the lengths say.
    expect(overlongIdPositions(packed(ids))).toEqual([1, 3, 4])
    expect(overlongIdPositions(ids)).toEqual([1, 3, 4])
    const library = new ToolLibrary('long', ids.map(tool))
    const dir = await saveIndexedLibrary(indexDir, await buildIndexedLibrary(library, config))
    const logger = createMemoryLogger()
    const loaded = await loadIndexedLibrary(dir, config, { logger })
    expect(loaded.library.require(long).id).toBe(long)
    const warnings = logger.lines.filter((line) => line.includes('characters ('))
    expect(warnings).toHaveLength(1)
    expect(warnings[0]).toContain(' WARN ')
    expect(warnings[0]).toContain('"overlongIds":3')
    expect(warnings[0]).toContain(
      `Library "long" (${dir}): 3 tool id(s) are longer than 500 characters (imported before imports refused them; served as they are, but no request can name such a tool:`,
    )
    expect(warnings[0]).toContain(
      `"long.${'x'.repeat(59)}"…: 612 characters; "${'\u{1f50e}'.repeat(32)}"…: 520 characters; "q\\"${'\\\\'.repeat(62)}"…: 501 characters. Shorten them at the source and import the library again.`,
    )
    // No other warning: these ids hold no odd character.
    expect(logger.lines.filter((line) => line.includes(' WARN '))).toHaveLength(1)
  })
})
