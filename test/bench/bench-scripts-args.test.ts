import { spawn } from 'node:child_process'
import { readdirSync, readFileSync } from 'node:fs'
import { mkdtemp, readFile, rm } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { join, posix, relative } from 'node:path'
import { fileURLToPath } from 'node:url'
import { describe, it } from 'vitest'

const ROOT = join(import.meta.dirname, '..', '..')

/** bench/ files that only export code for the scripts (no main of their own), and bench-args itself. */
const LIBRARY_ONLY = new Set([
  'bench-args.ts',
  'scope-library.ts',
  'serve-app.ts',
  'server-tools.ts',
  'stall-probe.ts',
  'term-weight-model.ts',
  'training-dev-setup.ts',
  'learn/feature-dump.ts',
  'learn/step-features.ts',
  'lib/choice-screen.ts',
  'lib/measure.ts',
  'lib/examples-body-text.ts',
])

/** A static import of values (not `import type`) at the start of a line: its module. */
const STATIC_IMPORT = /^import\s+(?!type\s)[^']*?\sfrom\s+'([^']+)'/gm

/** What an entry script may import before its flags are parsed (under bench/): node's modules only. */
const FLAG_MODULES = new Set([
  'bench-args.ts',
  'perf/perf-options.ts',
  'lib/measure.ts',
  'lib/examples-body-text.ts',
])

/**
 * `node --import tsx bench/<script> <args>` run to its end: exit code, stdout, stderr. With
 * `recordLoads` (a file), test/fixtures/record-loads.mjs writes there every module it loads.
 */
function runScript(
  script: string,
  args: string[],
  recordLoads?: string,
): Promise<{ status: number | null; stdout: string; stderr: string }> {
  const record = recordLoads === undefined ? [] : ['--import', './test/fixtures/record-loads.mjs']
  return new Promise((resolve, reject) => {
    const child = spawn(
      process.execPath,
      ['--import', 'tsx', ...record, `bench/${script}`, ...args],
      {
        cwd: ROOT,
        env: { ...process.env, NODE_OPTIONS: '', TOOLSEL_TEST_RECORD_LOADS: recordLoads ?? '' },
        stdio: ['ignore', 'pipe', 'pipe'],
      },
    )
    let stdout = ''
    let stderr = ''
    child.stdout.setEncoding('utf8').on('data', (chunk: string) => (stdout += chunk))
    child.stderr.setEncoding('utf8').on('data', (chunk: string) => (stderr += chunk))
    child.once('error', reject)
    child.once('close', (status) => resolve({ status, stdout, stderr }))
  })
}

// Each test runs its own script processes, which share nothing: they run side by side (about
// a second of tsx start-up each), each test asserting through its own `expect`.
describe.concurrent('bench scripts answer --help and bad flags', () => {
  it.for([
    ['select-cpu.ts', '--size'],
    ['select-ab.ts', '--before'],
    ['perf.ts', '--sizes'],
    ['retrieval-quality.ts', '--data'],
    ['compare-runs.ts', ''],
    ['scope-probe.ts', 'size'],
    ['hostile-upstream.ts', '--case'],
    ['perf-ratio.ts', '--turns'],
  ] as const)(
    '%s --help prints its usage on stdout and exits 0, loading none of the code it measures',
    { timeout: 60_000 },
    async ([script, flag], { expect }) => {
      const dir = await mkdtemp(join(tmpdir(), 'toolsel-bench-help-'))
      try {
        const loads = join(dir, 'loads.txt')
        const runs = await Promise.all([
          runScript(script, ['--help'], loads),
          runScript(script, ['-h']),
        ])
        for (const { status, stdout, stderr } of runs) {
          expect(status).toBe(0)
          expect(stderr).toBe('')
          expect(stdout).toContain(`bench/${script}`)
          expect(stdout).toContain('--help')
          expect(stdout).toContain(flag)
        }
        // The flags are parsed before the script's graph is imported (each took seconds of a
        // loaded machine's tsx start, perf.ts 274 modules): of src/, only bench-args.ts's own.
        const loaded = (await readFile(loads, 'utf8'))
          .split('\n')
          .filter((url) => url.startsWith('file:'))
          .map((url) => relative(ROOT, fileURLToPath(url)))
        expect(loaded).toContain(`bench/${script}`)
        expect(loaded.filter((path) => path.startsWith('src/'))).toEqual([
          'src/config/closest-name.ts',
        ])
      } finally {
        await rm(dir, { recursive: true, force: true })
      }
    },
  )

  it('shows each flag with its default', async ({ expect }) => {
    const { stdout } = await runScript('select-cpu.ts', ['--help'])
    expect(stdout).toContain('--size <value>  (default: 10000)')
    expect(stdout).toContain('--passes <value>  (default: 3)')
  }, 60_000)

  it.for([
    ['select-cpu.ts', ['--sise', '5'], 'unknown flag --sise (did you mean --size?)'],
    ['select-cpu.ts', ['--size'], '--size needs a value'],
    ['select-cpu.ts', ['--size', '0'], '--size takes a positive number'],
    ['select-cpu.ts', ['stray'], 'unexpected argument stray'],
    ['select-cpu.ts', ['--by-pass=yes'], '--by-pass takes no value'],
    ['perf.ts', ['--generatr', 'wrk'], 'unknown flag --generatr (did you mean --generator?)'],
    ['perf.ts', ['--generator', 'x'], '--generator must be wrk or autocannon'],
    ['perf.ts', ['--ceiling=yes'], '--ceiling takes no value'],
    ['scope-probe.ts', ['many'], 'must be a positive number, got "many"'],
    [
      'hostile-upstream.ts',
      ['--case', 'x'],
      '--case must be init-error, descriptions, schemas, relists, storm or shared-schema, got "x"',
    ],
    ['select-ab.ts', [], '--before DIR (a checkout) and --index-dir DIR'],
    ['select-profile.ts', [], '--index-dir DIR (a saved index) is required'],
    ['select-profile.ts', ['--index-dir', '.', '--top', '0'], '--top takes a whole number'],
    ['perf-ratio.ts', [], '--before DIR: the checkout to compare with'],
    ['perf-ratio.ts', ['--before', '.', '--turns', '0'], '--turns takes a whole number'],
    ['perf-ratio.ts', ['--before', '.', '--sizes', '100,10'], '--sizes takes two sizes'],
    ['perf-ratio.ts', ['--before', '.', '--index-dirs', 'a,b'], 'with --paired'],
    [
      'flood-cap-cost.ts',
      ['--turns', '100'],
      '--turns takes a whole number from 1 to 99, got "100"',
    ],
    [
      'saved-demo-start-ab.ts',
      ['--before', '.', '--turns', '2.5'],
      '--turns takes a whole number of 1 or more, got "2.5"',
    ],
    ['error-census-dev.ts', ['--seed', 'x'], '--seed takes a whole number of 0 or more, got "x"'],
  ] as const)(
    '%s %j: one line on stderr, exit 2, no stack',
    { timeout: 60_000 },
    async ([script, args, message], { expect }) => {
      const { status, stdout, stderr } = await runScript(script, [...args])
      expect(status).toBe(2)
      expect(stdout).toBe('')
      expect(stderr).toContain(message)
      expect(stderr).toContain('(see --help)')
      expect(stderr.trimEnd().split('\n')).toHaveLength(1)
      expect(stderr).not.toMatch(/\n\s+at /)
    },
  )

  it('every entry script in bench/ parses its flags with bench/bench-args.ts', ({ expect }) => {
    const files = [
      ...readdirSync(join(ROOT, 'bench')).filter((name) => name.endsWith('.ts')),
      ...readdirSync(join(ROOT, 'bench', 'learn'))
        .filter((name) => name.endsWith('.ts'))
        .map((name) => `learn/${name}`),
    ]
    const entries = files.filter((file) => !LIBRARY_ONLY.has(file))
    expect(entries.length).toBeGreaterThan(40)
    const missing = entries.filter((file) => {
      const source = readFileSync(join(ROOT, 'bench', file), 'utf8')
      return !source.includes('benchArgs(import.meta.url')
    })
    expect(missing).toEqual([])
    // Each parses its flags before it imports what it measures (the --help case above, for all):
    // a value imported statically is node's, bench-args.ts, perf.ts's flag list, lib/measure.ts or
    // lib/examples-body-text.ts.
    const loadsFirst = entries.flatMap((file) =>
      [...readFileSync(join(ROOT, 'bench', file), 'utf8').matchAll(STATIC_IMPORT)]
        .map((match) => match[1])
        .filter(
          (from) =>
            !from.startsWith('node:') && !FLAG_MODULES.has(posix.join(posix.dirname(file), from)),
        )
        .map((from) => `${file}: ${from}`),
    )
    expect(loadsFirst).toEqual([])
    // bench-args.ts's own imports are the --help case's; the flag list, the measures and the body
    // text import node's only.
    for (const file of ['perf/perf-options.ts', 'lib/measure.ts', 'lib/examples-body-text.ts']) {
      const source = readFileSync(join(ROOT, 'bench', file), 'utf8')
      const from = [...source.matchAll(STATIC_IMPORT)].map((match) => match[1])
      expect(
        from.filter((module) => !module.startsWith('node:')),
        file,
      ).toEqual([])
    }
    // A library-only file really has no main: it exports and runs nothing at the top level.
    for (const file of LIBRARY_ONLY) {
      const source = readFileSync(join(ROOT, 'bench', file), 'utf8')
      expect(source, file).toMatch(/^export /m)
      expect(source, file).not.toMatch(/^(await |const \w+ = await |process\.argv)/m)
    }
  })
})
