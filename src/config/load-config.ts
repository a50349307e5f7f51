/**
 * Merges defaults < config file < environment < CLI flags, validates the result against the one
 * schema, and reports a bad value together with where it came from.
 * @module
 */
import { dirname } from 'node:path'
import { ToolselError } from '../errors.ts'
import { describeJsonSyntaxError } from '../library/importers/find-json-syntax-error.ts'
import { shownName } from '../library/name-characters.ts'
import { partNameProblem, splitPartList, withRequirements } from '../store/kinds/index.ts'
import { CONFIG_FILE_ENV, ENV_VARS, type EnvValueType } from './env-vars.ts'
import { closestName } from './closest-name.ts'
import { ConfigSchema, defaultConfig, type Config } from './schema.ts'
import { FileTooLargeError, fileProblem, readFileUpTo } from '../read-text-file.ts'
import { assertTrustedPath } from '../trusted-path.ts'
import { resolveConfigFilePaths } from './config-file-paths.ts'
import { configJsonProblem } from './config-json-problem.ts'

export type ConfigLayer = Record<string, unknown>

/**
 * Largest config file read (`--config`, `--gateway-config`): a larger one, or a device such as
 * /dev/zero, is refused after that many bytes instead of read into memory.
 */
const CONFIG_FILE_MAX_BYTES = 16 * 1024 * 1024
/** Deepest nesting of objects in a config layer (the schema's deepest is 5). */
const CONFIG_MAX_DEPTH = 32
/**
 * The key never merged: an own `__proto__` key of a parsed JSON file, merged by assignment, set
 * Object.prototype's properties (every object of the process inherited them). `constructor` and
 * `prototype` are assigned as own keys (a gateway server may be named so).
 */
const PROTO_KEY = '__proto__'

/**
 * The text of a config file (`label` names it in the error: `Config file`), at most
 * CONFIG_FILE_MAX_BYTES; INVALID_CONFIG `<label> <file> could not be read: <reason>.`
 */
async function readConfigText(file: string, label: string): Promise<string> {
  // Refused when any user can write it (or a directory above it): they could set any value.
  assertTrustedPath(file, label, 'INVALID_CONFIG')
  try {
    return await readFileUpTo(file, CONFIG_FILE_MAX_BYTES)
  } catch (error) {
    const reason =
      error instanceof FileTooLargeError
        ? `it is ${error.message} (a config file is a few KiB)`
        : fileProblem(error)
    throw new ToolselError('INVALID_CONFIG', `${label} ${file} could not be read: ${reason}.`, {
      cause: error,
    })
  }
}

export interface LoadConfigOptions {
  /** JSON config file; defaults to `$TOOLSEL_CONFIG` when set. */
  file?: string
  /** Environment to read (normally `process.env`). */
  env?: Record<string, string | undefined>
  /** Values from CLI flags, as dotted paths (`{'server.port': 9000}`) or nested objects. */
  flags?: ConfigLayer
  /**
   * Files a flag names that hold one section (`--gateway-config`): over the environment, under
   * the flags, and named as their own source in errors.
   */
  files?: Array<{ source: string; layer: ConfigLayer }>
}

export async function loadConfig(options: LoadConfigOptions = {}): Promise<Config> {
  const env = options.env ?? {}
  const sources = new Map<string, string>()
  const merged: ConfigLayer = {}
  const file = options.file ?? env[CONFIG_FILE_ENV]
  if (file) mergeLayer(merged, await readConfigFile(file), `config file ${file}`, sources)
  for (const { source, layer } of envLayers(env)) mergeLayer(merged, layer, source, sources)
  for (const { source, layer } of options.files ?? []) mergeLayer(merged, layer, source, sources)
  mergeLayer(merged, expandDotted(options.flags ?? {}), 'command-line flag', sources)
  return parseConfig(merged, sources)
}

/** Validates a merged layer; `sources` maps dotted paths to where each value came from. */
export function parseConfig(value: ConfigLayer, sources = new Map<string, string>()): Config {
  const parsed = ConfigSchema.safeParse(value)
  if (parsed.success) {
    checkRetrieverKinds(parsed.data, sources)
    return parsed.data
  }
  const issue = parsed.error.issues[0]
  const path = issue.path.join('.')
  const keys =
    issue.code === 'unrecognized_keys'
      ? issue.keys.map((key) => (path ? `${path}.${key}` : key))
      : []
  const where = sourceOf(keys[0] ?? path, sources)
  const message =
    keys.length > 0
      ? `Unknown config key ${keys.map((key) => `"${key}"`).join(', ')} (from ${where}${didYouMean(issue.path, keys[0])}).`
      : `Invalid config value at "${shownPath(issue.path)}" (from ${where}): ${issue.message}.`
  throw new ToolselError('INVALID_CONFIG', message, { details: { path, source: where } })
}

/** A path for a message: a key (a server name in a gateway file) cut at 64 characters. */
function shownPath(path: readonly PropertyKey[]): string {
  return path
    .map(String)
    .map((part) => (part.length > 64 ? `${part.slice(0, 64)}…` : part))
    .join('.')
}

/** `; did you mean "server.port"?` for the key of that section closest to `key`, else ''. */
function didYouMean(section: readonly PropertyKey[], key: string): string {
  let defaults: unknown = defaultConfig()
  for (const part of section) defaults = (defaults as Record<PropertyKey, unknown>)?.[part]
  if (defaults === null || typeof defaults !== 'object') return ''
  const prefix = section.length > 0 ? `${section.join('.')}.` : ''
  const closest = closestName(key.slice(prefix.length), Object.keys(defaults))
  return closest === undefined ? '' : `; did you mean "${prefix}${closest}"?`
}

/**
 * Retriever names are parts of kinds of the registry (`store/kinds/`), not a closed enum in the
 * schema: `retrieve.retriever`, each part of the `retrieve.build` list and each hybrid input.
 */
function checkRetrieverKinds(config: Config, sources: Map<string, string>): void {
  const checks: [string, string][] = [
    ...(config.retrieve.retriever === 'auto'
      ? []
      : [['retrieve.retriever', config.retrieve.retriever] as [string, string]]),
    ...splitPartList(config.retrieve.build).map((part): [string, string] => [
      'retrieve.build',
      part,
    ]),
    ...config.retrieve.hybrid.inputs.map((input, at): [string, string] => [
      `retrieve.hybrid.inputs.${at}.retriever`,
      input.retriever,
    ]),
  ]
  if (splitPartList(config.retrieve.build).length === 0) checks.push(['retrieve.build', ''])
  for (const [path, value] of checks) {
    const found = partNameProblem(value)
    if (found === undefined) continue
    const problem =
      path === 'retrieve.retriever' ? found.replace('(available: ', '(available: auto, ') : found
    const where = sourceOf(path, sources)
    throw new ToolselError(
      'INVALID_CONFIG',
      `Invalid config value at "${path}" (from ${where}): ${problem}.`,
      { details: { path, source: where } },
    )
  }
  // Parts that require each other in a circle (a hybrid fusing itself) are refused now.
  withRequirements(splitPartList(config.retrieve.build), config)
}

/**
 * The JSON object of a config file (`--config`, `--gateway-config`; `label` names it in errors:
 * `Config file`, `Gateway config`): read as readConfigText reads it, parsed, an object, no key
 * given twice (`configJsonProblem`). Otherwise INVALID_CONFIG naming the file and what is wrong:
 * `<label> <file> is not valid JSON (line 3, column 3: …); the <label> is JSON, not YAML.`,
 * `… is not a JSON object: it holds an array; write <shape>.` (`shape`: `the settings as {…}`),
 * `… has "a.b" twice (…)`.
 */
export async function readConfigObject(
  file: string,
  label: string,
  shape: string,
): Promise<ConfigLayer> {
  const text = await readConfigText(file, label)
  let value: unknown
  try {
    value = JSON.parse(text)
  } catch (error) {
    const where = describeJsonSyntaxError(text, error)
    throw new ToolselError(
      'INVALID_CONFIG',
      `${label} ${file} is not valid JSON (${where}); the ${label.toLowerCase()} is JSON, not YAML.`,
      { cause: error },
    )
  }
  if (value === null || typeof value !== 'object' || Array.isArray(value)) {
    throw new ToolselError(
      'INVALID_CONFIG',
      `${label} ${file} is not a JSON object: it holds ${Array.isArray(value) ? 'an array' : value === null ? 'null' : `a ${typeof value}`}; write ${shape}.`,
    )
  }
  const problem = configJsonProblem(text)
  if (problem !== undefined) {
    throw new ToolselError('INVALID_CONFIG', `${label} ${file} ${problem}.`)
  }
  return value as ConfigLayer
}

async function readConfigFile(file: string): Promise<ConfigLayer> {
  const value = await readConfigObject(
    file,
    'Config file',
    'the settings as {"server": {"port": 8080}, …}',
  )
  // Relative model paths in the file are read from its directory, as a user expects.
  resolveConfigFilePaths(value, dirname(file))
  return value
}

/**
 * One layer per variable set, named by it: a value the schema refuses is an error naming the
 * variable (`(from environment variable TOOLSEL_LOG_FORMAT)`), as README says, not only its key.
 */
function envLayers(
  env: Record<string, string | undefined>,
): Array<{ source: string; layer: ConfigLayer }> {
  const layers: Array<{ source: string; layer: ConfigLayer }> = []
  for (const [name, spec] of Object.entries(ENV_VARS)) {
    const raw = env[name]
    if (raw === undefined || raw === '') continue
    const value = coerce(raw, spec.type, name)
    // A list of no items (` `, ` , `) counts as unset, as an empty value does: it never replaces
    // the config file's list with none (for server.allowedHosts, none means the default).
    if (Array.isArray(value) && value.length === 0) continue
    const layer = expandDotted({ [spec.path]: value })
    layers.push({ source: `environment variable ${name}`, layer })
  }
  return layers
}

/** An integer variable's text: decimal digits, a sign (`0x10`, `1e3`, `1_000` are refused). */
const INTEGER_TEXT = /^[-+]?\d+$/
/** A number variable's text: decimal, with a fraction or an exponent (`0x10`, `Infinity` refused). */
const NUMBER_TEXT = /^[-+]?(\d+\.?\d*|\.\d+)(e[-+]?\d+)?$/i

/**
 * `raw` as `type`. A number is decimal (Number() would take `0x10` as 16 and `0b11` as 3) and an
 * integer a safe one (`9007199254740993` is not what it says), surrounding spaces aside.
 */
function coerce(raw: string, type: EnvValueType, name: string): unknown {
  if (type === 'string') return raw
  if (type === 'list') {
    return raw
      .split(',')
      .map((item) => item.trim())
      .filter((item) => item.length > 0)
  }
  if (type === 'boolean') {
    if (/^(1|true|yes|on)$/i.test(raw)) return true
    if (/^(0|false|no|off)$/i.test(raw)) return false
  } else {
    const text = raw.trim()
    const number = Number(text)
    if (
      type === 'integer'
        ? INTEGER_TEXT.test(text) && Number.isSafeInteger(number)
        : NUMBER_TEXT.test(text) && Number.isFinite(number)
    )
      return number
  }
  // The value as shownName quotes an id: cut at 64 characters, no control character raw.
  throw new ToolselError(
    'INVALID_CONFIG',
    `Environment variable ${name}=${shownName(raw)} is not a valid ${type === 'integer' ? 'integer (decimal digits)' : type === 'number' ? 'number (decimal)' : type}.`,
    { details: { variable: name } },
  )
}

/** `{'a.b': 1}` → `{a: {b: 1}}`; nested objects pass through. */
function expandDotted(layer: ConfigLayer): ConfigLayer {
  const result: ConfigLayer = {}
  for (const [key, value] of Object.entries(layer)) {
    if (value === undefined) continue
    const parts = key.split('.')
    let target = result
    for (const part of parts.slice(0, -1)) {
      if (typeof target[part] !== 'object' || target[part] === null) target[part] = {}
      target = target[part] as ConfigLayer
    }
    const last = parts[parts.length - 1]
    target[last] =
      isPlainObject(value) && isPlainObject(target[last])
        ? deepMerge(target[last] as ConfigLayer, value)
        : value
  }
  return result
}

function mergeLayer(
  target: ConfigLayer,
  layer: ConfigLayer,
  source: string,
  sources: Map<string, string>,
  prefix = '',
  depth = 0,
): void {
  for (const [key, value] of Object.entries(layer)) {
    const path = prefix ? `${prefix}.${key}` : key
    if (key === PROTO_KEY) {
      throw new ToolselError(
        'INVALID_CONFIG',
        `Unknown config key "${path}" (from ${source}); "${key}" is never a config key.`,
        { details: { path, source } },
      )
    }
    if (isPlainObject(value)) {
      if (depth >= CONFIG_MAX_DEPTH) {
        throw new ToolselError(
          'INVALID_CONFIG',
          `Invalid config value at "${prefix}" (from ${source}): nested deeper than ${CONFIG_MAX_DEPTH} objects.`,
          { details: { path: prefix, source } },
        )
      }
      if (!isPlainObject(target[key])) target[key] = {}
      // A section's own path too: an unknown section ({"servr": {…}}) is named with its source.
      sources.set(path, source)
      mergeLayer(target[key] as ConfigLayer, value, source, sources, path, depth + 1)
    } else {
      target[key] = value
      sources.set(path, source)
    }
  }
}

function deepMerge(base: ConfigLayer, extra: ConfigLayer): ConfigLayer {
  const copy = { ...base }
  mergeLayer(copy, extra, '', new Map())
  return copy
}

function sourceOf(path: string, sources: Map<string, string>): string {
  for (let cut = path; cut.length > 0; cut = cut.slice(0, Math.max(0, cut.lastIndexOf('.')))) {
    const source = sources.get(cut)
    if (source) return source
    if (!cut.includes('.')) break
  }
  return 'defaults'
}

function isPlainObject(value: unknown): value is ConfigLayer {
  return value !== null && typeof value === 'object' && !Array.isArray(value)
}
