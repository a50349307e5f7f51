/**
 * The output schemas of an upstream's tools: compiled one tool at a time as a listing's pages
 * arrive (listAllTools, upstream-tools.ts), and each tools/call result checked against its tool's
 * compiled schema (`OutputChecks`, UpstreamConnection.callTool), as the SDK's `callTool` did.
 *
 * The gateway owns these checks, not the SDK: the SDK's `listTools` compiled a page's schemas
 * together (one that did not compile failed the listing), its cache was cleared at each page,
 * and handing it a listing went through the Client's private `cacheToolMetadata` (until round
 * 42). Its Ajv also looked a schema up by `$id` before compiling it, so two tools sharing an
 * `$id` got the first one's validator: a hostile tool made another tool's results be checked
 * against its own schema. Here a schema naming an `$id` or an anchor is compiled on an Ajv of its
 * own; the others share the listing's Ajv (they register nothing another schema can reach).
 *
 * The schemas' `pattern` and `patternProperties` run on RE2 (re2js), not JavaScript's
 * backtracking RegExp: an upstream's `"pattern": "^(a+)+$"` and a 40-character result held the
 * event loop for hours in Ajv's default engine. RE2 runs in time linear in the input; a pattern
 * it cannot run (look-around, back-references) does not compile, and the tool is skipped with a
 * warning as for any schema that does not compile.
 * @module
 */
import { createHash } from 'node:crypto'
import { Client } from '@modelcontextprotocol/sdk/client/index.js'
import {
  type CallToolResult,
  ErrorCode,
  McpError,
  type Tool as McpTool,
} from '@modelcontextprotocol/sdk/types.js'
import type { jsonSchemaValidator } from '@modelcontextprotocol/sdk/validation/types.js'
import { Ajv, type Options as AjvOptions, type ValidateFunction } from 'ajv'
import ajvFormats from 'ajv-formats'
import { RE2JS } from 're2js'
import { MCP_GATEWAY_CLIENT_INFO } from '../server-info.ts'
import { errorMessage } from '../../errors.ts'

/** Longest compile error quoted in the warning that skips a tool (Ajv quotes the schema's text). */
const MAX_COMPILE_ERROR_CHARS = 200

/**
 * A schema that can register a name in its Ajv (`$id`, `$anchor`, `$dynamicAnchor`,
 * `$recursiveAnchor`): compiled on an Ajv of its own (~0.3 ms more, measured in round 42).
 */
const NAMES_SOMETHING = /"\$(?:id|anchor|dynamicAnchor|recursiveAnchor)"/

/**
 * Compiles the output schemas of one listing: a fresh one for each listing (an Ajv holds every
 * schema it compiled; the client's one Ajv grew by a whole listing's schemas at each re-list).
 * A schema is compiled once per listing, however many tools list it (keyed by the SHA-256 of its
 * JSON as sent): a listing of 120 tools sharing one outputSchema of 1,000 properties compiled it
 * 120 times (~0.2-1.5 s each on a busy host) and ran past `listCompileBudgetMs` (until round 43).
 * Tools sharing a schema share its validator, or its reason not to compile: a validator is a
 * function of its schema alone, also with an `$id` (compiled on its own Ajv, where nothing else is
 * registered). The key is the JSON as sent, not with its keys sorted: the same properties in
 * another order are another schema here (its errors list them in its own order). A schema holding
 * a number JSON cannot write (`1e999`, Infinity once parsed, written as null) is compiled for each
 * tool, never shared: its JSON is not the schema.
 *
 * `compiledMs` is the time spent compiling so far (and hashing, for the schemas met again), as
 * `startCompileTimer` measures it: never less than the CPU time this thread spent on it.
 */
export class OutputSchemaCompiler {
  #shared: Ajv | undefined
  readonly #compiled = new Map<string, ValidateFunction | string>()
  compiledMs = 0
  /** How many schemas were compiled (a schema met again is not). */
  compiles = 0

  /**
   * `schema` compiled, or why it cannot be (after "its outputSchema"). Every tool gets a
   * validator of its own schema, whatever `$id` it names.
   */
  compile(schema: object): ValidateFunction | string {
    const timer = startCompileTimer()
    try {
      return this.#compile(schema)
    } finally {
      this.compiledMs += timer()
    }
  }

  #compile(schema: object): ValidateFunction | string {
    let text: string
    // A number JSON cannot write (`1e999` parses to Infinity) is written as null: such a schema's
    // JSON is not the schema (`"maximum": 1e999` compiles, `"maximum": null` does not; `"const":
    // 1e999` and `"const": null` check different things), so it is compiled on its own, not
    // looked up nor kept (until round 43 one tool got the other's validator or its refusal).
    let faithful = true
    try {
      text = JSON.stringify(schema, (_key, value: unknown) => {
        if (typeof value === 'number' && !Number.isFinite(value)) faithful = false
        return value
      })
    } catch (error) {
      if (error instanceof RangeError) return 'is nested too deep to compile'
      throw error
    }
    const key = faithful ? createHash('sha256').update(text).digest('base64') : undefined
    const known = key === undefined ? undefined : this.#compiled.get(key)
    if (known !== undefined) return known
    let compiled: ValidateFunction | string
    try {
      let ajv: Ajv
      if (NAMES_SOMETHING.test(text)) ajv = newAjv()
      else ajv = this.#shared ??= newAjv()
      this.compiles += 1
      compiled = ajv.compile(schema)
    } catch (error) {
      if (error instanceof RangeError) compiled = 'is nested too deep to compile'
      else {
        const message = errorMessage(error)
        const cut =
          message.length > MAX_COMPILE_ERROR_CHARS
            ? `${message.slice(0, MAX_COMPILE_ERROR_CHARS)}…`
            : message
        compiled = `does not compile: ${JSON.stringify(cut)}`
      }
    }
    if (key !== undefined) this.#compiled.set(key, compiled)
    return compiled
  }
}

/**
 * Starts timing a compile (synchronous, on this thread); the function returned gives the ms it
 * took: the least of two upper bounds of this thread's CPU time meanwhile (Node 20 has no CPU
 * clock of one thread): the wall time (one thread runs on one core at most) and the process's
 * CPU time (this thread's and its other threads'). Until round 43 it was the process's CPU time
 * alone: an import worker busy on another core counted against a listing as much as its own
 * compiles did. Wall time alone would count the time a loaded host kept the thread waiting for a
 * core (at load 18 on 2 cores a first compile took over 2 s of wall time).
 */
export function startCompileTimer(): () => number {
  const wall = performance.now()
  const cpu = process.cpuUsage()
  return () => {
    const used = process.cpuUsage(cpu)
    return Math.max(0, Math.min(performance.now() - wall, (used.user + used.system) / 1000))
  }
}

/** `\\uXXXX` and `\\u{X…}` (JavaScript's escapes, common in JSON Schema patterns) as RE2's `\\x{…}`. */
function re2Syntax(pattern: string): string {
  return pattern.replace(
    /(?<!\\)((?:\\\\)*)\\u(?:\{([0-9a-fA-F]{1,6})\}|([0-9a-fA-F]{4}))/g,
    (_match, slashes: string, braced: string | undefined, four: string | undefined) =>
      `${slashes}\\x{${braced ?? four}}`,
  )
}

/**
 * The `pattern` and `patternProperties` checks of one call's result are synchronous: they hold
 * the event loop, every request of the service, while they run. RE2 is linear, not small: a search
 * costs up to the pattern's program size times the string's length (`programSize() × (length +
 * 1)` steps, ~20-60 ns each measured on a loaded host). 600 strings of 1,000 characters against
 * `\w{9xx}` (a 24 KB outputSchema and a 600 KB result, both the upstream's) held it 13.5 s a call
 * at load 8 (round 43, hard38). So a search whose bound passes MAX_PATTERN_SEARCH_WORK is not run,
 * nor any once the check's searches took MAX_PATTERN_MS: the result is refused. The bound is not
 * summed over searches: most end far below it (a match found early, RE2's DFA), so 2,000 ids of
 * 38 characters against `^[a-zA-Z0-9_-]{1,64}$` (1e7 steps by the bound) take about 1 ms.
 */
export const MAX_PATTERN_SEARCH_WORK = 10_000_000

/**
 * Most time all the pattern searches of one result's check may take, in ms (see above): their
 * wall time, unless the process's CPU time since the check began is less (a loaded host keeps
 * the process waiting for a core: that wait is no search's; `overPatternTime`).
 */
export const MAX_PATTERN_MS = 500

/**
 * The time spent in the pattern searches of the check running now (OutputChecks.check: one at a
 * time, synchronous); undefined outside one (a validator called by itself is not bounded).
 */
let patternMs: number | undefined
/** The process's CPU time when the check running now began (`overPatternTime`). */
let patternCpu: NodeJS.CpuUsage | undefined

/**
 * Whether the searches of the check running now took more than MAX_PATTERN_MS: both their wall
 * time and the process's CPU time since the check began (each an upper bound of the time they
 * held this thread, as startCompileTimer counts a compile's) are past it. Wall time alone refused
 * an honest result on a loaded host, where the process waits for a core between and during its
 * searches (round 43). The CPU time is read only once the wall time is past the bound.
 */
function overPatternTime(): boolean {
  if (patternMs === undefined || patternMs <= MAX_PATTERN_MS) return false
  const used = process.cpuUsage(patternCpu)
  return (used.user + used.system) / 1000 > MAX_PATTERN_MS
}

/** Thrown by a pattern check past a bound (OutputChecks.check names it). */
class PatternWorkExceeded extends Error {}

/**
 * Ajv's engine for `pattern` and `patternProperties`: RE2, which finds a match in linear time,
 * each search held to MAX_PATTERN_SEARCH_WORK and MAX_PATTERN_MS before it runs.
 */
const re2Engine: NonNullable<NonNullable<AjvOptions['code']>['regExp']> = Object.assign(
  (pattern: string) => {
    const compiled = RE2JS.compile(re2Syntax(pattern))
    const size = compiled.programSize()
    return {
      test: (text: string) => {
        if (patternMs === undefined) return compiled.matcher(text).find()
        if (size * (text.length + 1) > MAX_PATTERN_SEARCH_WORK || overPatternTime())
          throw new PatternWorkExceeded()
        const started = performance.now()
        try {
          return compiled.matcher(text).find()
        } finally {
          patternMs += performance.now() - started
        }
      },
      toString: () => pattern,
    }
  },
  { code: 're2js' },
)

/** ajv-formats is CommonJS: its default export is the plugin itself at run time. */
const addFormats = ajvFormats as unknown as typeof ajvFormats.default

/** An Ajv as the SDK makes its own (its AjvJsonSchemaValidator), but for the pattern engine. */
function newAjv(): Ajv {
  const ajv = new Ajv({
    strict: false,
    validateFormats: true,
    validateSchema: false,
    allErrors: true,
    code: { regExp: re2Engine },
  })
  addFormats(ajv)
  return ajv
}

/** Words for a validator's errors (Ajv's errorsText reads nothing of the instance but them). */
const errorWords = new Ajv()

/**
 * What a complete listing says about checking its tools' calls: each tool's compiled
 * outputSchema, and the tools that need task-based calls. A name listed twice keeps the first
 * tool's (the one upstreamTools serves; the SDK's cache kept the last one's).
 */
export class OutputChecks {
  readonly #validators = new Map<string, ValidateFunction>()
  readonly #taskRequired = new Set<string>()
  readonly #seen = new Set<string>()

  /** `tool` of the listing, its outputSchema compiled to `validator` (none: no outputSchema). */
  add(tool: McpTool, validator: ValidateFunction | undefined): void {
    if (this.#seen.has(tool.name)) return
    this.#seen.add(tool.name)
    if (validator) this.#validators.set(tool.name, validator)
    if (tool.execution?.taskSupport === 'required') this.#taskRequired.add(tool.name)
  }

  /**
   * Throws, before a call is sent, when `name` needs task-based execution (as the SDK did; its
   * message told the agent behind call_tool to use `client.experimental.tasks.callToolStream()`,
   * an SDK method it has no way to reach).
   */
  beforeCall(name: string): void {
    if (this.#taskRequired.has(name)) {
      throw new McpError(
        ErrorCode.InvalidRequest,
        `Tool "${name}" requires task-based execution (its server lists execution.taskSupport "required"), which call_tool does not offer: MCP lets a client call it only as a task. Use another tool, or a client of that server that runs tasks.`,
      )
    }
  }

  /**
   * Checks the result of a call to `name` against its outputSchema, with the SDK's errors: a
   * tool with one must answer structuredContent (unless isError), and that must match it.
   */
  check(name: string, result: CallToolResult): void {
    const validate = this.#validators.get(name)
    if (!validate) return
    if (!result.structuredContent && !result.isError) {
      throw new McpError(
        ErrorCode.InvalidRequest,
        `Tool ${name} has an output schema but did not return structured content`,
      )
    }
    if (!result.structuredContent) return
    let valid: boolean
    patternMs = 0
    patternCpu = process.cpuUsage()
    try {
      valid = validate(result.structuredContent) as boolean
    } catch (error) {
      if (error instanceof PatternWorkExceeded) {
        throw new McpError(
          ErrorCode.InvalidParams,
          `Tool ${name}'s structured content was not checked against its output schema: its patterns would take too long over its strings (a search of more than ${MAX_PATTERN_SEARCH_WORK.toLocaleString('en-US')} steps, RE2 program size × characters, or more than ${MAX_PATTERN_MS} ms of searches), holding every request meanwhile; the result is refused`,
        )
      }
      throw new McpError(
        ErrorCode.InvalidParams,
        `Failed to validate structured content: ${errorMessage(error)}`,
      )
    } finally {
      patternMs = undefined
      patternCpu = undefined
    }
    if (!valid) {
      throw new McpError(
        ErrorCode.InvalidParams,
        `Structured content does not match the tool's output schema: ${errorWords.errorsText(validate.errors)}`,
      )
    }
  }
}

/**
 * The SDK's validator for the client: refuses to compile. Output schemas are compiled and checked
 * here, never by the SDK (its `listTools` and `callTool` are not used for an upstream); a use
 * of the SDK's own checks fails by name instead of checking on a backtracking RegExp.
 */
const noSdkValidator: jsonSchemaValidator = {
  getValidator() {
    throw new Error(
      "toolsel checks upstream output schemas itself (upstream-output-schemas.ts): the MCP SDK's own checks are not used",
    )
  },
}

/** A client for an upstream; its tools are listed by listAllTools and called with OutputChecks. */
export function newUpstreamClient(): Client {
  return new Client(MCP_GATEWAY_CLIENT_INFO, { jsonSchemaValidator: noSdkValidator })
}
