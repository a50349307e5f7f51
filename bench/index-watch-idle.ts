/**
 * What `server.indexWatchMs` costs (service/index-dir-watch.ts): the CPU of one idle poll (one
 * stat of the index directory) and of one scan (a readdir and one stat per library's manifest,
 * done after each change of the directory and again until its timestamp is SETTLE_MS old), at 1
 * and at 1,000 libraries, and what that makes per minute at the default interval and at 200 ms.
 * The libraries are directories holding a manifest.json and the 4 other files of a BM25 index
 * with usage examples (the poll reads only the manifest); the index directory's timestamp is set
 * into the past, as it is once nothing has changed for a while. Also measured: what a "full
 * check" would cost, which the poll does not do (a readdir of each library and a stat of each of
 * its files: what seeing a file edited in place, not committed, would take), and that per minute
 * if it ran once a minute.
 *
 *   node --import tsx bench/index-watch-idle.ts [--polls 3000] [--rounds 5]
 * @module
 */
import { mkdir, mkdtemp, readdir, rm, stat, utimes, writeFile } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { benchArgs } from './bench-args.ts'
import { loadAverage, median } from './lib/measure.ts'

const { values } = benchArgs(import.meta.url, {
  options: {
    polls: { type: 'string', default: '3000' },
    rounds: { type: 'string', default: '5' },
  },
})
// What it measures only once the flags are good: --help and a bad flag answer without it.
const { defaultConfig } = await import('../src/config/schema.ts')
const { IndexDirPoller } = await import('../src/service/index-dir-watch.ts')
const polls = Number(values.polls)
const rounds = Number(values.rounds)
const sizes = [1, 1000]
const defaultMs = defaultConfig().server.indexWatchMs

/** The files of a saved BM25 index with usage examples. */
const INDEX_FILES = ['manifest.json', 'tools.jsonl', 'tools.idx', 'bm25.bin', 'examples.jsonl']

/** A full check (not done by the poll): every library's directory read and each file stat'ed. */
async function fullCheck(dir: string): Promise<void> {
  for (const library of await readdir(dir)) {
    const files = await readdir(join(dir, library))
    await Promise.all(files.map((file) => stat(join(dir, library, file), { bigint: true })))
  }
}

const root = await mkdtemp(join(tmpdir(), 'toolsel-watch-bench-'))
const past = new Date(Date.now() - 60_000)
const dirs = new Map<number, string>()
for (const size of sizes) {
  const dir = join(root, `libraries-${size}`)
  for (let library = 0; library < size; library += 1) {
    await mkdir(join(dir, `library-${library}`), { recursive: true })
    for (const file of INDEX_FILES) await writeFile(join(dir, `library-${library}`, file), '{}\n')
  }
  dirs.set(size, dir)
}

/** CPU microseconds (user + system) per call of `work`, over `count` calls. */
async function cpuPerCall(count: number, work: () => Promise<unknown>): Promise<number> {
  const start = process.cpuUsage()
  for (let call = 0; call < count; call += 1) await work()
  const used = process.cpuUsage(start)
  return (used.user + used.system) / count
}

const idle = new Map<number, number[]>(sizes.map((size) => [size, []]))
const scan = new Map<number, number[]>(sizes.map((size) => [size, []]))
const full = new Map<number, number[]>(sizes.map((size) => [size, []]))
try {
  for (let round = 0; round < rounds; round += 1) {
    // Sizes alternate within each round.
    for (const size of sizes) {
      const dir = dirs.get(size)!
      await utimes(dir, past, past)
      const poller = new IndexDirPoller(dir, defaultMs, async () => {})
      await poller.baseline()
      const scansBefore = poller.counts.scans
      idle.get(size)!.push(await cpuPerCall(polls, () => poller.poll()))
      if (poller.counts.scans !== scansBefore) throw new Error('an idle poll scanned')
      // A changed directory: every poll scans (the timestamp moves each time).
      let tick = 0
      const scans = Math.max(20, Math.round(polls / size / 2))
      scan.get(size)!.push(
        await cpuPerCall(scans, async () => {
          tick += 1
          const at = new Date(past.getTime() + tick * 1000)
          await utimes(dir, at, at)
          await poller.poll()
        }),
      )
      full
        .get(size)!
        .push(await cpuPerCall(Math.max(10, Math.round(polls / size / 4)), () => fullCheck(dir)))
    }
  }
} finally {
  await rm(root, { recursive: true, force: true })
}

const ms = (micros: number) => (micros / 1000).toFixed(3)
console.log(
  `index-dir poll cost, ${polls} idle polls and a few scans per size, ${rounds} rounds (medians); load ${loadAverage()}`,
)
console.log(
  '| libraries | idle poll, CPU ms | CPU ms/min idle at 2,000 ms | at 200 ms | scan (after a change), CPU ms | full check (not done), CPU ms |',
)
console.log('|---:|---:|---:|---:|---:|---:|')
for (const size of sizes) {
  const perPoll = median(idle.get(size)!)
  console.log(
    `| ${size.toLocaleString('en-US')} | ${ms(perPoll)} | ${ms((perPoll * 60_000) / defaultMs)} | ${ms((perPoll * 60_000) / 200)} | ${ms(median(scan.get(size)!))} | ${ms(median(full.get(size)!))} |`,
  )
}
console.log(
  `(the scan figure includes one utimes call; a commit costs about 2-3 scans: the one that sees it and those until the directory's timestamp is settled)`,
)
