/**
 * `toolsel <command> --help` is printed from `src/cli/<command>-help.ts` without loading the
 * command (round 49): the lists those help texts name are copies of registries the command's code
 * holds, and each help module must stay light.
 */
import { readFileSync } from 'node:fs'
import { dirname, join, resolve } from 'node:path'
import { fileURLToPath } from 'node:url'
import { describe, expect, it } from 'vitest'
import { SUITES } from '../../src/bench/suites/suite-registry.ts'
import { SUITE_NAMES } from '../../src/bench/suites/suite-names.ts'
import { RETRIEVER_KINDS } from '../../src/store/kinds/index.ts'
import { RETRIEVER_KIND_NAMES } from '../../src/store/kinds/kind-names.ts'
import { TRAIN_SPLITS } from '../../src/train/splits/index.ts'
import { TRAIN_SPLIT_NAMES } from '../../src/train/splits/split-names.ts'
import { COMMANDS } from '../../src/main.ts'
import { runCli } from './run-cli.ts'

const SRC = resolve(dirname(fileURLToPath(import.meta.url)), '../../src')

/** The files a module imports statically (relative `.ts` imports) and the packages it names. */
function importGraph(entry: string): { files: Set<string>; packages: Set<string> } {
  const files = new Set<string>()
  const packages = new Set<string>()
  const visit = (file: string) => {
    if (files.has(file)) return
    files.add(file)
    const text = readFileSync(file, 'utf8')
    // Static imports and re-exports, not type-only ones (erased) nor import() (loads when it runs).
    for (const [, specifier] of text.matchAll(
      /^(?:import|export)\s(?!type\s)[^;]*?from '([^']+)'/gms,
    )) {
      if (specifier.startsWith('.')) visit(join(dirname(file), specifier))
      else if (!specifier.startsWith('node:')) packages.add(specifier)
    }
  }
  visit(entry)
  return { files, packages }
}

describe('the lists the help texts name', () => {
  it('are the registries the commands use, in their order', () => {
    expect(RETRIEVER_KIND_NAMES).toEqual(Object.keys(RETRIEVER_KINDS))
    expect(SUITE_NAMES).toEqual(SUITES.map((suite) => suite.name))
    expect(TRAIN_SPLIT_NAMES).toEqual(Object.keys(TRAIN_SPLITS))
  })
})

describe('each help module', () => {
  it('loads no package and no command module (was: the help lived in the command)', () => {
    for (const name of Object.keys(COMMANDS)) {
      const { files, packages } = importGraph(join(SRC, 'cli', `${name}-help.ts`))
      expect({ name, packages: [...packages] }).toEqual({ name, packages: [] })
      const commands = [...files].filter((file) => file.endsWith('-command.ts'))
      expect({ name, commands }).toEqual({ name, commands: [] })
      // A handful of constant modules (9-11 files in round 49), not the command's hundreds.
      expect(files.size, name).toBeLessThan(20)
    }
  })
})

describe('--help printed before the command loads', () => {
  it('is what the command itself prints, and only where its flag parsing reads --help', async () => {
    for (const name of Object.keys(COMMANDS)) {
      const help = await COMMANDS[name][2]()
      const command = await COMMANDS[name][0]()
      let own = ''
      const io = { stdout: (text: string) => (own += text), stderr: () => {}, env: {} }
      expect(await command(['--help'], io)).toBe(0)
      expect(own, name).toBe(`${help.HELP}\n`)
      expect((await runCli([name, '-h'])).stdout, name).toBe(own)
    }
    // A refused flag beside --help is the command's error, as before.
    const typo = await runCli(['select', '--libary', 'mine', '--help'])
    expect(typo).toMatchObject({ code: 2, stdout: '' })
    expect(typo.stderr).toContain('Unknown option --libary (did you mean --library?)')
    const missing = await runCli(['index', '--name'])
    expect(missing).toMatchObject({ code: 2, stdout: '' })
    // After "--" it is a word of the instruction, not the flag.
    const word = await runCli(['select', '--library', 'no-such-library', '--', '--help'])
    expect(word.stdout).not.toContain('Usage:')
    expect(word.code).not.toBe(0)
  })
})
