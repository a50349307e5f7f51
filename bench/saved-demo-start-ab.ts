/**
 * The cold load of a saved demo (`indexes/demo`), before and after a change, side by side: each
 * checkout indexes its own demo files into an index directory of its own (`toolsel index
 * src/library/demo/servers --name demo`), then, alternating checkouts turn by turn, a fresh
 * `node` process imports the checkout's built `dist/` and loads the library `demo`
 * (`loadLibraryReference`: the saved demo's check, its fingerprint, and its load), printing the
 * milliseconds of that load. Round 46 (qa17): the fingerprint cached by the identities of what it
 * reads (store/demo-fingerprint.ts) against round 45's, which hashed the build's 151 modules at
 * every start. Both checkouts must be built (`npm run build`).
 *
 *   node --import tsx bench/saved-demo-start-ab.ts --before /work/ci-base [--turns 9]
 * @module
 */
import { execFileSync } from 'node:child_process'
import { existsSync } from 'node:fs'
import { mkdtemp, rm, writeFile } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { join, resolve } from 'node:path'
import { benchArgs, usageError, wholeNumber } from './bench-args.ts'
import { loadAverage, median } from './lib/measure.ts'

const { values } = benchArgs(import.meta.url, {
  options: {
    before: { type: 'string' },
    turns: { type: 'string', default: '9' },
  },
})
if (values.before === undefined) usageError(import.meta.url, '--before <checkout> is required.')
const turns = wholeNumber(import.meta.url, '--turns', values.turns)
const trees = { before: resolve(values.before!), after: resolve('.') }
for (const tree of Object.values(trees))
  if (!existsSync(join(tree, 'dist/store/library-lifecycle.js')))
    usageError(import.meta.url, `${tree} has no dist/: run npm run build there first.`)

/** One fresh process: the load of `demo` from `indexDir` with `tree`'s built code, in ms. */
const CHILD = `
const [tree, indexDir] = process.argv.slice(2)
const { parseConfig } = await import(tree + '/dist/config/load-config.js')
const { createLogger } = await import(tree + '/dist/log.js')
const { loadLibraryReference } = await import(tree + '/dist/store/library-lifecycle.js')
const config = parseConfig({ library: { indexDir } })
const logger = createLogger('warn', (line) => process.stderr.write(line + '\\n'))
const started = performance.now()
const library = await loadLibraryReference('demo', config, logger)
const ms = performance.now() - started
process.stdout.write(JSON.stringify({ ms, tools: library.library.size }))
`

const work = await mkdtemp(join(tmpdir(), 'toolsel-saved-demo-ab-'))
try {
  const child = join(work, 'load-demo.mjs')
  await writeFile(child, CHILD)
  const load = (tree: string) =>
    JSON.parse(
      execFileSync(process.execPath, [child, tree, join(work, tree === trees.before ? 'a' : 'b')], {
        encoding: 'utf8',
      }),
    ) as { ms: number; tools: number }
  for (const [label, tree] of Object.entries(trees)) {
    const indexDir = join(work, label === 'before' ? 'a' : 'b')
    execFileSync(
      process.execPath,
      [join(tree, 'bin/toolsel.mjs'), 'index', join(tree, 'src/library/demo/servers')].concat([
        '--name',
        'demo',
        '--index-dir',
        indexDir,
        '--log-level',
        'warn',
      ]),
      { stdio: ['ignore', 'ignore', 'inherit'] },
    )
    load(tree) // A first load: what a start after the save does (the cache written, if any).
  }
  const times: Record<string, number[]> = { before: [], after: [] }
  const load1 = new Set<number>()
  for (let turn = 0; turn < turns; turn++) {
    const order = turn % 2 === 0 ? (['before', 'after'] as const) : (['after', 'before'] as const)
    for (const label of order) {
      const { ms, tools } = load(trees[label])
      load1.add(tools)
      times[label]!.push(ms)
    }
  }
  const [before, after] = [median(times.before!), median(times.after!)]
  console.log(`load average ${loadAverage(1)}; tools ${[...load1].join(',')}`)
  console.log('| checkout | saved demo load, median of ' + turns + ' fresh processes | each (ms) |')
  console.log('|----------|------:|------|')
  for (const [label, tree] of Object.entries(trees))
    console.log(
      `| ${label} (${tree}) | ${median(times[label]!).toFixed(1)} ms | ${times[label]!.map((ms) => ms.toFixed(0)).join(', ')} |`,
    )
  console.log(`after / before: ${(after / before).toFixed(2)}`)
} finally {
  await rm(work, { recursive: true, force: true })
}
