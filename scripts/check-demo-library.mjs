#!/usr/bin/env node
// Validates the embedded demo library (src/library/demo/servers/*.json, each an MCP `tools/list`
// result) and the demo query set (test/fixtures/demo-queries.jsonl). Plain Node, no dependencies.
// Prints tool counts per server and the query gold-size distribution; exits 1 on any problem.
//
//   node scripts/check-demo-library.mjs

import { readdirSync, readFileSync } from 'node:fs'
import { basename, dirname, join, relative } from 'node:path'
import { fileURLToPath } from 'node:url'

const root = join(dirname(fileURLToPath(import.meta.url)), '..')
const serversDir = join(root, 'src/library/demo/servers')
const queriesFile = join(root, 'test/fixtures/demo-queries.jsonl')

const SERVER_NAME = /^[a-z][a-z0-9]*$/
const TOOL_NAME = /^[a-z][a-z0-9_]*$/
const QUERY_ID = /^d\d{3}$/

const problems = []
const problem = (where, message) => problems.push(`${where}: ${message}`)
const isPlainObject = (value) =>
  value !== null && typeof value === 'object' && !Array.isArray(value)

/** Checks `required` ⊆ `properties` at every nested object schema, and that properties are schemas. */
function checkSchema(schema, where) {
  if (!isPlainObject(schema)) {
    problem(where, 'schema is not an object')
    return
  }
  if (schema.properties !== undefined) {
    if (!isPlainObject(schema.properties)) {
      problem(where, '"properties" is not an object')
    } else {
      for (const [key, sub] of Object.entries(schema.properties)) {
        checkSchema(sub, `${where}.${key}`)
      }
    }
  }
  if (schema.required !== undefined) {
    if (!Array.isArray(schema.required) || schema.required.some((r) => typeof r !== 'string')) {
      problem(where, '"required" is not an array of strings')
    } else {
      const props = isPlainObject(schema.properties) ? schema.properties : {}
      for (const name of schema.required) {
        if (!Object.hasOwn(props, name)) problem(where, `required "${name}" is not in properties`)
      }
      if (new Set(schema.required).size !== schema.required.length) {
        problem(where, '"required" lists a name twice')
      }
    }
  }
  if (schema.items !== undefined) checkSchema(schema.items, `${where}[]`)
  if (isPlainObject(schema.additionalProperties)) {
    checkSchema(schema.additionalProperties, `${where}{}`)
  }
  if (schema.enum !== undefined && (!Array.isArray(schema.enum) || schema.enum.length === 0)) {
    problem(where, '"enum" is not a non-empty array')
  }
  if (
    schema.default !== undefined &&
    Array.isArray(schema.enum) &&
    !schema.enum.includes(schema.default)
  ) {
    problem(where, `default ${JSON.stringify(schema.default)} is not one of the enum values`)
  }
}

// ---- servers ----------------------------------------------------------------------------------

const toolIds = new Set()
const counts = []
let files = []
try {
  files = readdirSync(serversDir)
    .filter((f) => f.endsWith('.json'))
    .sort()
} catch (error) {
  problem(relative(root, serversDir), `cannot read directory (${error.message})`)
}
if (files.length === 0) problem(relative(root, serversDir), 'no server files')

for (const file of files) {
  const server = basename(file, '.json')
  const where = relative(root, join(serversDir, file))
  if (!SERVER_NAME.test(server)) problem(where, `server name "${server}" must match ${SERVER_NAME}`)
  let doc
  try {
    doc = JSON.parse(readFileSync(join(serversDir, file), 'utf8'))
  } catch (error) {
    problem(where, `invalid JSON (${error.message})`)
    continue
  }
  if (!isPlainObject(doc) || !Array.isArray(doc.tools)) {
    problem(where, 'must be an object with a "tools" array')
    continue
  }
  for (const key of Object.keys(doc)) {
    if (!['tools', 'nextCursor', '_meta'].includes(key))
      problem(where, `unexpected top-level key "${key}"`)
  }
  if (doc.tools.length === 0) problem(where, 'has no tools')
  const names = new Set()
  for (const [index, tool] of doc.tools.entries()) {
    const at = `${where} tools[${index}]${tool?.name ? ` (${tool.name})` : ''}`
    if (!isPlainObject(tool)) {
      problem(at, 'tool is not an object')
      continue
    }
    if (typeof tool.name !== 'string' || !TOOL_NAME.test(tool.name)) {
      problem(at, `name must match ${TOOL_NAME}`)
    } else if (names.has(tool.name)) {
      problem(at, 'duplicate tool name in this server')
    } else {
      names.add(tool.name)
      toolIds.add(`${server}.${tool.name}`)
    }
    if (typeof tool.description !== 'string' || tool.description.trim() === '') {
      problem(at, 'description must be a non-empty string')
    }
    const schema = tool.inputSchema
    if (!isPlainObject(schema)) {
      problem(at, 'inputSchema must be an object')
      continue
    }
    if (schema.type !== 'object') problem(at, 'inputSchema.type must be "object"')
    if (!isPlainObject(schema.properties)) problem(at, 'inputSchema.properties must be an object')
    checkSchema(schema, `${at} inputSchema`)
  }
  counts.push([server, doc.tools.length])
}

// ---- queries ----------------------------------------------------------------------------------

const goldSizes = new Map()
let queryCount = 0
let lines = []
try {
  lines = readFileSync(queriesFile, 'utf8').split('\n')
} catch (error) {
  problem(relative(root, queriesFile), `cannot read (${error.message})`)
}
const queryIds = new Set()
const instructions = new Set()
for (const [index, line] of lines.entries()) {
  if (line.trim() === '') continue
  const where = `${relative(root, queriesFile)}:${index + 1}`
  let query
  try {
    query = JSON.parse(line)
  } catch (error) {
    problem(where, `invalid JSON (${error.message})`)
    continue
  }
  queryCount++
  if (!isPlainObject(query)) {
    problem(where, 'line is not a JSON object')
    continue
  }
  if (typeof query.id !== 'string' || !QUERY_ID.test(query.id)) {
    problem(where, `id must match ${QUERY_ID}`)
  } else if (queryIds.has(query.id)) {
    problem(where, `duplicate id ${query.id}`)
  } else {
    queryIds.add(query.id)
  }
  if (typeof query.instruction !== 'string' || query.instruction.trim() === '') {
    problem(where, 'instruction must be a non-empty string')
  } else if (instructions.has(query.instruction)) {
    problem(where, 'duplicate instruction')
  } else {
    instructions.add(query.instruction)
  }
  if (!Array.isArray(query.gold) || query.gold.length === 0) {
    problem(where, 'gold must be a non-empty array')
    continue
  }
  if (new Set(query.gold).size !== query.gold.length) problem(where, 'gold lists a tool twice')
  for (const id of query.gold) {
    if (!toolIds.has(id)) problem(where, `gold tool "${id}" does not exist in the demo library`)
  }
  goldSizes.set(query.gold.length, (goldSizes.get(query.gold.length) ?? 0) + 1)
}

if (lines.length > 0 && queryCount === 0) problem(relative(root, queriesFile), 'no queries')

// ---- report -----------------------------------------------------------------------------------

const width = Math.max(6, ...counts.map(([server]) => server.length))
console.log(`${'server'.padEnd(width)}  tools`)
for (const [server, count] of counts)
  console.log(`${server.padEnd(width)}  ${String(count).padStart(5)}`)
console.log(
  `${'total'.padEnd(width)}  ${String(toolIds.size).padStart(5)}  (${counts.length} servers)`,
)
console.log('')
console.log(`queries: ${queryCount}`)
for (const size of [...goldSizes.keys()].sort((a, b) => a - b)) {
  const n = goldSizes.get(size)
  const pct = queryCount ? Math.round((100 * n) / queryCount) : 0
  console.log(`  gold size ${size}: ${n} (${pct}%)`)
}

if (problems.length > 0) {
  console.error(`\n${problems.length} problem(s):`)
  for (const p of problems) console.error(`  - ${p}`)
  process.exit(1)
}
console.log('\nOK')
