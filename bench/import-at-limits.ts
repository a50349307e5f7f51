/**
 * A library imported at the tool field limits, at scale (bench/README "Round 48: import at the
 * limits (imp21)"), through the real paths: `toolsel index <file>` (the CLI, a child process
 * under /usr/bin/time) and `PUT /v1/libraries/{library}` (the body sent by curl to `toolsel
 * serve`, a child process, over real HTTP). For each `--sizes` N and each `--profiles` it writes
 * one tools file (toolsel's JSON array), then prints a table: wall time, the process's peak RSS,
 * the saved index's bytes, the exit status or HTTP status and, on the server path, the longest
 * a `/healthz` request waited during the upload (a client sending one after another: the
 * server's event loop held, as seen from outside).
 *
 * - `limits`: every tool's id and name are MAX_TOOL_ID_CHARS / MAX_TOOL_NAME_CHARS (500) long;
 *   one tool in `--every` (default 1,000) holds MAX_TOOL_TAGS (256) tags of 500 characters and
 *   a MAX_TOOL_DESCRIPTION_CHARS (100,000) description; the others' descriptions fill the file
 *   up to `--bytes` (default 240 MiB, under the CLI's 256 MiB tool-file limit), at most 100,000
 *   characters each.
 * - `typical`: ids, names, tags and descriptions of the sizes real libraries hold (a 300-
 *   character description, two tags, three parameters; bench/README "Round 47: tool field
 *   limits").
 *
 * The server runs with `server.bodyLimitBytes` 512 MiB (its most) and
 * `server.maxLibraryToolsBytes` 512 MiB, so the whole file is one upload. `--before <checkout>`
 * (a built one, e.g. /work/ci-base) runs the same after each run of this checkout, side by side.
 *
 *   node --import tsx bench/import-at-limits.ts [--sizes 100000] [--profiles limits,typical]
 *     [--paths cli,upload] [--bytes 251658240] [--every 1000] [--before /work/ci-base]
 * @module
 */
import { spawn } from 'node:child_process'
import { once } from 'node:events'
import { createWriteStream } from 'node:fs'
import { mkdtemp, readdir, readFile, rm, stat, writeFile } from 'node:fs/promises'
import { createServer } from 'node:net'
import { tmpdir } from 'node:os'
import { join, resolve } from 'node:path'
import { fileURLToPath } from 'node:url'
import { benchArgs, usageError, wholeNumber } from './bench-args.ts'
import { loadAverage, markdownTable, median } from './lib/measure.ts'

const { values } = benchArgs(import.meta.url, {
  options: {
    sizes: { type: 'string', default: '100000' },
    profiles: { type: 'string', default: 'limits,typical' },
    paths: { type: 'string', default: 'cli,upload' },
    bytes: { type: 'string', default: String(240 * 1024 * 1024) },
    every: { type: 'string', default: '1000' },
    runs: { type: 'string', default: '1' },
    before: { type: 'string' },
  },
})
const sizes = values.sizes
  .split(',')
  .map((size) => wholeNumber(import.meta.url, '--sizes', size, 1, 2_000_000))
const bytes = wholeNumber(import.meta.url, '--bytes', values.bytes, 1024)
const every = wholeNumber(import.meta.url, '--every', values.every)
const runs = wholeNumber(import.meta.url, '--runs', values.runs, 1, 20)
function choices(flag: string, value: string, known: string[]): string[] {
  const chosen = value.split(',')
  const bad = chosen.find((name) => !known.includes(name))
  if (bad !== undefined)
    usageError(import.meta.url, `${flag} takes ${known.join(', ')}, got "${bad}"`)
  return chosen
}
const profiles = choices('--profiles', values.profiles, ['limits', 'typical'])
const paths = choices('--paths', values.paths, ['cli', 'upload'])
const here = resolve(fileURLToPath(import.meta.url), '../..')
const roots = [here, ...(values.before === undefined ? [] : [resolve(values.before)])]

const LIMIT = { id: 500, name: 500, tags: 256, tag: 500, description: 100_000 }
const work = await mkdtemp(join(tmpdir(), 'import-at-limits-'))
process.on('exit', () => void rm(work, { recursive: true, force: true }))

/** Writes the tools file of `count` tools of `profile`; returns its path and bytes. */
async function writeTools(profile: string, count: number): Promise<{ file: string; size: number }> {
  const file = join(work, `${profile}-${count}.json`)
  const out = createWriteStream(file)
  let size = 0
  const write = async (text: string) => {
    size += Buffer.byteLength(text)
    if (!out.write(text)) await once(out, 'drain')
  }
  const padded = (head: string, length: number) => head.padEnd(length, 'x')
  const words = 'search the weather forecast for a city and return hourly data '
  const text = (length: number) => words.repeat(Math.ceil(length / words.length)).slice(0, length)
  const full = Math.floor(count / every)
  // What the id, name and JSON keys of one limits tool take, then the description's share.
  const fixed = LIMIT.id + LIMIT.name + 120
  const fullBytes = full * (LIMIT.description + LIMIT.tags * (LIMIT.tag + 3))
  const share = Math.floor((bytes - fullBytes - count * fixed) / Math.max(1, count - full))
  const description = Math.max(20, Math.min(LIMIT.description, share))
  await write('[\n')
  for (let k = 0; k < count; k += 1) {
    const tool =
      profile === 'typical'
        ? {
            id: `weather_api_${k}`,
            name: `Get Weather ${k}`,
            description: text(300),
            tags: ['weather', `group${k % 50}`],
            parameters: {
              type: 'object',
              properties: {
                city: { type: 'string', description: 'City name' },
                days: { type: 'integer', description: 'Days ahead' },
                units: { type: 'string', enum: ['metric', 'imperial'] },
              },
              required: ['city'],
            },
          }
        : k % every === every - 1
          ? {
              id: padded(`t${k}-`, LIMIT.id),
              name: padded(`n${k}-`, LIMIT.name),
              description: text(LIMIT.description),
              tags: Array.from({ length: LIMIT.tags }, (_, t) => padded(`g${t}-`, LIMIT.tag)),
            }
          : {
              id: padded(`t${k}-`, LIMIT.id),
              name: padded(`n${k}-`, LIMIT.name),
              description: `${k} ${text(description)}`.slice(0, LIMIT.description),
            }
    await write(`${k === 0 ? '' : ',\n'}${JSON.stringify(tool)}`)
  }
  await write('\n]\n')
  out.end()
  await once(out, 'finish')
  return { file, size }
}

/** Bytes under `dir` (the saved index). */
async function treeBytes(dir: string): Promise<number> {
  let total = 0
  for (const entry of await readdir(dir, { withFileTypes: true, recursive: true })) {
    if (entry.isFile()) total += (await stat(join(entry.parentPath, entry.name))).size
  }
  return total
}

interface Row {
  wallMs: number
  peakMiB: number
  indexMiB: number
  status: string
  blockMs?: number
}

async function runChild(
  command: string,
  args: string[],
  env: NodeJS.ProcessEnv = {},
): Promise<{ code: number | null; stdout: string; stderr: string }> {
  const child = spawn(command, args, { env: { ...process.env, ...env } })
  let stdout = ''
  let stderr = ''
  child.stdout.on('data', (chunk: Buffer) => (stdout = (stdout + chunk.toString()).slice(-20_000)))
  child.stderr.on('data', (chunk: Buffer) => (stderr = (stderr + chunk.toString()).slice(-20_000)))
  const [code] = (await once(child, 'close')) as [number | null]
  return { code, stdout, stderr }
}

async function viaCli(root: string, file: string): Promise<Row> {
  const indexDir = await mkdtemp(join(work, 'cli-'))
  const started = performance.now()
  const run = await runChild('/usr/bin/time', [
    '-f',
    'PEAK %M',
    process.execPath,
    join(root, 'bin/toolsel.mjs'),
    'index',
    file,
    '--name',
    'big',
    '--index-dir',
    indexDir,
  ])
  const wallMs = performance.now() - started
  const peak = Number(/PEAK (\d+)/.exec(run.stderr)?.[1] ?? Number.NaN) / 1024
  const indexMiB = run.code === 0 ? (await treeBytes(join(indexDir, 'big'))) / 2 ** 20 : 0
  const reason = run.code === 0 ? '' : ` ${lastLine(run.stderr.replace(/PEAK \d+\s*$/, ''))}`
  await rm(indexDir, { recursive: true, force: true })
  return { wallMs, peakMiB: peak, indexMiB, status: `exit ${run.code}${reason}` }
}

function lastLine(text: string): string {
  const lines = text.trim().split('\n')
  return (lines.at(-1) ?? '').slice(0, 160)
}

async function freePort(): Promise<number> {
  const server = createServer()
  server.listen(0, '127.0.0.1')
  await once(server, 'listening')
  const { port } = server.address() as { port: number }
  server.close()
  return port
}

/** VmHWM of `pid` (its peak RSS so far), in MiB. */
async function peakRss(pid: number): Promise<number> {
  const status = await readFile(`/proc/${pid}/status`, 'utf8')
  return Number(/VmHWM:\s+(\d+)/.exec(status)?.[1] ?? Number.NaN) / 1024
}

async function viaUpload(root: string, file: string): Promise<Row> {
  const indexDir = await mkdtemp(join(work, 'serve-'))
  const config = join(indexDir, 'config.json')
  await writeFile(
    config,
    JSON.stringify({
      server: {
        bodyLimitBytes: 512 * 1024 * 1024,
        maxLibraryToolsBytes: 512 * 1024 * 1024,
        buildTimeoutMs: 3_600_000,
        requestTimeoutMs: 3_600_000,
      },
    }),
  )
  const port = await freePort()
  const server = spawn(
    process.execPath,
    [join(root, 'bin/toolsel.mjs'), 'serve', '--port', String(port), '--host', '127.0.0.1'],
    {
      env: {
        ...process.env,
        TOOLSEL_CONFIG: config,
        TOOLSEL_INDEX_DIR: join(indexDir, 'indexes'),
        TOOLSEL_LOG_LEVEL: 'warn',
      },
      stdio: ['ignore', 'ignore', 'pipe'],
    },
  )
  let serverErr = ''
  server.stderr.on('data', (chunk: Buffer) => (serverErr = (serverErr + chunk).slice(-4000)))
  const base = `http://127.0.0.1:${port}`
  for (let tries = 0; ; tries += 1) {
    const up = await fetch(`${base}/readyz`).then(
      (answer) => answer.ok,
      () => false,
    )
    if (up) break
    if (tries > 600 || server.exitCode !== null)
      throw new Error(`serve did not start: ${serverErr}`)
    await new Promise((settle) => setTimeout(settle, 100))
  }
  // One /healthz after another while the upload runs: the longest wait is the server's block.
  let probing = true
  let blockMs = 0
  const probe = (async () => {
    while (probing) {
      const sent = performance.now()
      await fetch(`${base}/healthz`).then(
        (answer) => answer.arrayBuffer(),
        () => undefined,
      )
      blockMs = Math.max(blockMs, performance.now() - sent)
      await new Promise((settle) => setTimeout(settle, 10))
    }
  })()
  const started = performance.now()
  const answer = join(indexDir, 'answer.json')
  const upload = await runChild('curl', [
    '-sS',
    '-o',
    answer,
    '-w',
    'HTTP %{http_code}',
    '-X',
    'PUT',
    '-H',
    'content-type: application/json',
    '--data-binary',
    `@${file}`,
    `${base}/v1/libraries/big`,
  ])
  const wallMs = performance.now() - started
  probing = false
  await probe
  const peakMiB = server.exitCode === null ? await peakRss(server.pid!) : Number.NaN
  const http = /HTTP (\d+)/.exec(upload.stdout)?.[1] ?? '?'
  const ok = http === '200' || http === '201'
  const indexMiB = ok ? (await treeBytes(join(indexDir, 'indexes', 'big'))) / 2 ** 20 : 0
  const said = await readFile(answer, 'utf8').catch(() => upload.stderr)
  const why = ok
    ? ''
    : ` ${said.replace(/\s+/g, ' ').slice(0, 200)}${server.exitCode !== null ? ` (serve exited ${server.exitCode})` : ''}`
  server.kill('SIGTERM')
  if (server.exitCode === null) await once(server, 'close')
  await rm(indexDir, { recursive: true, force: true })
  return { wallMs, peakMiB, indexMiB, status: `HTTP ${http}${why}`, blockMs }
}

const rows: string[][] = []
const mib = (value: number) => (Number.isFinite(value) ? value.toFixed(0) : '-')
for (const size of sizes) {
  for (const profile of profiles) {
    const { file, size: fileBytes } = await writeTools(profile, size)
    for (const path of paths) {
      const seen = new Map<string, Row[]>()
      for (let run = 0; run < runs; run += 1) {
        for (const root of roots) {
          const row = path === 'cli' ? await viaCli(root, file) : await viaUpload(root, file)
          seen.set(root, [...(seen.get(root) ?? []), row])
          console.error(`${size} ${profile} ${path} ${root}: ${JSON.stringify(row)}`)
        }
      }
      const mine = seen.get(roots[0])!
      for (const [root, list] of seen) {
        const wall = median(list.map((row) => row.wallMs))
        const blocks = list.flatMap((row) => (row.blockMs === undefined ? [] : [row.blockMs]))
        rows.push([
          size.toLocaleString('en-US'),
          profile,
          (fileBytes / 2 ** 20).toFixed(0),
          path,
          root === roots[0] ? 'this' : root,
          (wall / 1000).toFixed(1),
          root === roots[0] ? '' : (wall / median(mine.map((row) => row.wallMs))).toFixed(2),
          mib(median(list.map((row) => row.peakMiB))),
          mib(median(list.map((row) => row.indexMiB))),
          blocks.length === 0 ? '' : median(blocks).toFixed(0),
          [...new Set(list.map((row) => row.status))].join('; '),
        ])
      }
    }
    await rm(file, { force: true })
  }
}
console.log(`load ${loadAverage()}; runs ${runs} (medians); --bytes ${bytes}, --every ${every}`)
console.log(
  markdownTable(
    [
      'tools',
      'profile',
      'file MiB',
      'path',
      'checkout',
      'wall s',
      'x this',
      'peak RSS MiB',
      'index MiB',
      'healthz max ms',
      'status',
    ],
    rows,
  ).join('\n'),
)
