/**
 * What an OpenAPI import of schemas that each use the next one twice costs (not a test): `--levels`
 * schemas `D0…`, each an object whose members `a` and `b` reference the next (2^levels values
 * written out, from a few KB), used by the spec's one operation or by none, the references plain
 * (`{"$ref"}`) or with a `description` beside them. Plus `plain spec`: 2,000 operations over 500
 * shared schemas (no schema used twice inside another), which imports inline: what counting the
 * walk before it adds. And `--aliases` names of one object of 199,990 values (a YAML alias under
 * many names), each scanned once per name before round 46. Busy time (min(wall, CPU)) of
 * `importOpenapi`, medians of `--turns`; with `--before <dir>` the same rows on that tree's src/
 * too, alternating.
 *
 *   node --import tsx bench/openapi-ref-chain.ts [--levels 30] [--aliases 300] [--turns 3]
 *     [--before /work/ci-base]
 * @module
 */
import { resolve } from 'node:path'
import { pathToFileURL } from 'node:url'
import { benchArgs } from './bench-args.ts'
import { cpuMs, loadAverage, median } from './lib/measure.ts'

const { values } = benchArgs(import.meta.url, {
  options: {
    levels: { type: 'string', default: '30' },
    turns: { type: 'string', default: '3' },
    before: { type: 'string' },
    aliases: { type: 'string', default: '300' },
  },
})
const levels = Number(values.levels)
const turns = Number(values.turns)
const aliases = Number(values.aliases)

type Json = Record<string, unknown>
type Importer = (parsed: unknown, context: unknown) => Promise<Array<{ parameters: Json }>>
type ContextOf = (options: { fileName: string }) => unknown

/** `importOpenapi` and `createImportContext` of the tree at `root`. */
async function importerOf(root: string): Promise<{ run: Importer; context: ContextOf }> {
  const at = (path: string) => pathToFileURL(resolve(root, 'src/library/importers', path)).href
  const { importOpenapi } = await import(at('openapi-importer.ts'))
  const { createImportContext } = await import(at('import-context.ts'))
  return { run: importOpenapi, context: createImportContext }
}

function operation(id: string, schema: unknown): Json {
  return {
    operationId: id,
    parameters: [{ name: 'q', in: 'query', schema }],
    responses: { '200': { description: 'ok' } },
  }
}

function chainSpec(used: boolean, described: boolean): Json {
  const schemas: Json = {}
  for (let level = 0; level < levels; level += 1) {
    const ref = `#/components/schemas/D${level + 1}`
    const next = (note: string) =>
      level === levels - 1
        ? { type: 'string' }
        : described
          ? { $ref: ref, description: note }
          : { $ref: ref }
    schemas[`D${level}`] = { type: 'object', properties: { a: next('a'), b: next('b') } }
  }
  const schema = used ? { $ref: '#/components/schemas/D0' } : { type: 'string' }
  return {
    openapi: '3.0.0',
    info: { title: 'chain', version: '1' },
    paths: { '/a': { get: operation('a', schema) } },
    components: { schemas },
  }
}

function plainSpec(): Json {
  const schemas: Json = {}
  for (let at = 0; at < 500; at += 1) {
    schemas[`S${at}`] = {
      type: 'object',
      description: `schema ${at}`,
      properties: {
        name: { type: 'string', description: 'a name' },
        count: { type: 'integer', minimum: 0 },
        kind: { type: 'string', enum: ['a', 'b', 'c', 'd'] },
        ...(at + 1 < 500 ? { next: { $ref: `#/components/schemas/S${at + 1}` } } : {}),
      },
    }
  }
  const paths: Json = {}
  for (let at = 0; at < 2000; at += 1) {
    paths[`/items${at}`] = {
      get: operation(`get${at}`, { $ref: `#/components/schemas/S${(at * 7) % 500}` }),
    }
  }
  // Each schema references the next: a chain 500 deep, used once per level (no doubling).
  return {
    openapi: '3.0.0',
    info: { title: 'plain', version: '1' },
    paths,
    components: { schemas },
  }
}

/**
 * `--aliases` names under `components.schemas` for one object of 199,990 values (what YAML's
 * `S0: &a {…}`, `S1: *a`, … parse to), each referenced by a member of the operation's body.
 */
function aliasSpec(): Json {
  const schema = { type: 'integer', enum: Array.from({ length: 199_990 }, (_, at) => at) }
  const names = Array.from({ length: aliases }, (_, at) => `S${at}`)
  const properties = Object.fromEntries(
    names.map((name) => [name, { $ref: `#/components/schemas/${name}` }]),
  )
  const body = { content: { 'application/json': { schema: { type: 'object', properties } } } }
  return {
    openapi: '3.0.0',
    info: { title: 'aliases', version: '1' },
    paths: { '/a': { post: { ...operation('a', undefined), parameters: [], requestBody: body } } },
    components: { schemas: Object.fromEntries(names.map((name) => [name, schema])) },
  }
}

const rows: Array<[string, () => Json]> = [
  [`${levels} levels, used, plain refs`, () => chainSpec(true, false)],
  [`${levels} levels, used, described refs`, () => chainSpec(true, true)],
  [`${levels} levels, unused, plain refs`, () => chainSpec(false, false)],
  [`${levels} levels, unused, described refs`, () => chainSpec(false, true)],
  ['plain spec (2,000 ops, 500 schemas)', plainSpec],
  [`${aliases} names aliasing one 199,990-value schema`, aliasSpec],
]

async function busy(importer: { run: Importer; context: ContextOf }, spec: Json) {
  const wall = performance.now()
  const cpu = cpuMs()
  const tools = await importer.run(spec, importer.context({ fileName: 'spec.json' }))
  const ms = Math.min(performance.now() - wall, cpuMs() - cpu)
  return { ms, size: JSON.stringify(tools.map((tool) => tool.parameters)).length }
}

const trees: Array<[string, { run: Importer; context: ContextOf }]> = [
  ['after', await importerOf(resolve(import.meta.dirname, '..'))],
]
if (values.before !== undefined) trees.unshift(['before', await importerOf(values.before)])

console.log(`load average ${loadAverage(1)}`)
console.log(
  `| spec | JSON bytes | ${trees.map(([name]) => `${name} busy ms`).join(' | ')} | tools' parameters (bytes) |`,
)
console.log(`|---|---:|${trees.map(() => '---:|').join('')}---:|`)
for (const [name, make] of rows) {
  const spec = make()
  const times = trees.map((): number[] => [])
  const sizes = new Set<number>()
  for (let turn = 0; turn < turns; turn += 1) {
    for (const [at, [, importer]] of trees.entries()) {
      const { ms, size } = await busy(importer, structuredClone(spec))
      times[at].push(ms)
      sizes.add(size)
    }
  }
  const cells = times.map((list) => median(list).toFixed(1))
  const same = sizes.size === 1 ? [...sizes][0].toLocaleString('en-US') : 'differ!'
  console.log(`| ${name} | ${JSON.stringify(spec).length} | ${cells.join(' | ')} | ${same} |`)
}
