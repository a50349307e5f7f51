/** `toolsel select`: run Plan-Retrieve-Select once from the command line. */
import { emptyStepReason } from '../service/empty-step-reason.ts'
import { createComponents } from '../components.ts'
import { ToolselError } from '../errors.ts'
import type { SelectToolsResult } from '../pipeline.ts'
import { loadLibraryReference } from '../store/library-lifecycle.ts'
import { ToolselService } from '../service/toolsel-service.ts'
import { TOOL_FORMATS, type ToolFormat } from '../library/provider-tools.ts'
import { selectResponseObject } from '../server/select-response.ts'
import { jsonText, terminalLine } from '../terminal-text.ts'
import {
  commandConfig,
  maxFileBytesFlag,
  numberFlag,
  parseCommand,
  type CommandIO,
  printConfig,
  readStdinText,
} from './cli-options.ts'
import { HELP as SELECT_HELP, OPTIONS } from './select-help.ts'

export { HELP as SELECT_HELP, OPTIONS } from './select-help.ts'

export async function selectCommand(argv: string[], io: CommandIO): Promise<number> {
  const { values, positionals } = parseCommand(argv, OPTIONS, 'select')
  if (values.help) return (io.stdout(`${SELECT_HELP}\n`), 0)
  const { config, logger } = await commandConfig(
    values,
    {
      'library.default': values.library,
      'library.indexDir': values['index-dir'],
      'library.maxFileBytes': maxFileBytesFlag(values['max-file-bytes']),
      'retrieve.k': numberFlag(values.k, 'k'),
      'retrieve.bm25.tau': numberFlag(values.tau, 'tau'),
      'retrieve.retriever': values.retriever,
      // Only libraries indexed in memory (a tool file, the demo) are built; saved ones load as built.
      'retrieve.build':
        // (bm25 is always built; `auto` is whatever the library was built with)
        values.retriever === 'auto' || values.retriever === 'bm25' ? undefined : values.retriever,
      'retrieve.dense.embedder': values.embedder,
      'retrieve.dense.device': values.device,
      'plan.planner': values.planner,
      'select.selector': values.selector,
    },
    io,
  )
  if (values['print-config']) return printConfig(config, io)
  const toolFormat = toolFormatFlag(values['tool-format'])
  // `-`: the instruction is standard input (`… | toolsel select -`), no shell quoting needed;
  // bounded as the HTTP API's (server.maxInstructionChars, UTF-16 units: at most 3 bytes each).
  const maxChars = config.server.maxInstructionChars
  const instruction = (
    positionals.length === 1 && positionals[0] === '-'
      ? await readStdinText(io, 'The instruction', maxChars * 3)
      : positionals.join(' ')
  ).trim()
  if (!instruction)
    throw new ToolselError(
      'INVALID_INPUT',
      'Give an instruction: toolsel select "<instruction>", or - to read it from stdin. See: toolsel select --help',
    )
  if (instruction.length > maxChars)
    throw new ToolselError(
      'INVALID_INPUT',
      `The instruction is ${instruction.length} characters long; at most ${maxChars} are taken (server.maxInstructionChars)`,
    )

  // The odd-id warning of a saved index at debug: a command run again and again would repeat it
  // on every run (shown with --log-level debug; the import or PUT that took the ids warned). The
  // demo, when not saved in the index directory, is indexed once and kept in the user's cache
  // directory (`demoCacheIndexDir`), not indexed again at every run.
  const indexed = await loadLibraryReference(config.library.default, config, logger, {
    unshowableIds: 'debug',
    cacheDemo: true,
  })
  const service = new ToolselService(config, logger, createComponents(config, logger))
  await service.start([indexed])
  // Planner, selector and k are in the config (the flags set them); the retriever is the
  // one exception: a named one must exist, the configured default falls back to the library's.
  // --tau is also the request's `tau`, as POST /v1/select-tools takes it: the threshold of every
  // step's candidates whatever the selector (the learned one, the default, ignores the configured
  // retrieve.bm25.tau; until round 56 the flag set only that, and did nothing by default).
  const tau = values.tau === undefined ? undefined : config.retrieve.bm25.tau
  const result = await service.select({
    instruction,
    retriever: values.retriever,
    explain: values.explain,
    tau,
  })
  // jsonText: the same JSON, with the C1 controls and bidi characters a library's descriptions
  // (or ids saved before they were refused) hold written as \u escapes, not raw to the terminal.
  // --json is the HTTP answer with its schemas (round 45, qa16: until then the pipeline's tools
  // as held, with their source and tags and without the MCP annotations the API gives).
  if (toolFormat !== undefined || values.json) {
    const answer = selectResponseObject(result, true, toolFormat ?? 'toolsel')
    io.stdout(`${jsonText(JSON.stringify(answer, null, 2))}\n`)
  } else {
    const empty = await emptyStepLines(service, result, values.retriever, {
      configured: config.retrieve.bm25.tau,
      request: tau,
    })
    io.stdout(formatResult(result, empty))
  }
  return 0
}

/**
 * For each step that got no candidate, the line that says why: the retriever found no tool at
 * all for its words, or it did and a threshold cut them (the best one and its score, looked up
 * again without a threshold, as `POST /v1/search` does, and which threshold: --tau when given,
 * else BM25's tau under top1/llm, the learned selector's floor of 0). Before, every empty step
 * read "no candidate above the threshold", also when nothing matched and under the learned
 * selector.
 */
async function emptyStepLines(
  service: ToolselService,
  result: SelectToolsResult,
  retriever: string | undefined,
  tau: { configured: number; request: number | undefined },
): Promise<Map<number, string>> {
  const lines = new Map<number, string>()
  for (const [index, step] of result.steps.entries()) {
    if (step.candidates.length > 0) continue
    const { results } = await service.search({ query: step.text, k: 1, retriever })
    const best = results[0]
    const { selector, retriever: used } = result.components
    const reason = emptyStepReason({
      ...(best && { best: { id: terminalLine(best.id), score: best.score.toFixed(2) } }),
      selector,
      retriever: terminalLine(used),
      tau: String(tau.configured),
      tauHint: '--tau',
      ...(tau.request !== undefined && { requestTau: String(tau.request) }),
    })
    lines.set(index, `    (${reason})`)
  }
  return lines
}

function toolFormatFlag(value: string | undefined): ToolFormat | undefined {
  if (value === undefined || (TOOL_FORMATS as readonly string[]).includes(value))
    return value as ToolFormat | undefined
  throw new ToolselError(
    'INVALID_INPUT',
    `--tool-format must be one of ${TOOL_FORMATS.join(', ')}; got "${value}".`,
  )
}

/** The result for a person; tool ids come from the library, so each is printed as terminalLine. */
function formatResult(result: SelectToolsResult, emptySteps: Map<number, string>): string {
  const lines: string[] = []
  for (const [index, step] of result.steps.entries()) {
    lines.push(
      `Step ${index + 1}${step.whole ? ' (whole instruction)' : ''}: ${terminalLine(step.text)}`,
    )
    for (const candidate of step.candidates.slice(0, 5)) {
      const mark = candidate.id === step.selected ? '*' : ' '
      // --explain: the learned selector's probability (all the features: --json --explain).
      const probability = candidate.features?.probability
      const explained = probability === undefined ? '' : `  p=${probability.toFixed(3)}`
      lines.push(
        `  ${mark} ${candidate.score.toFixed(2).padStart(7)}  ${terminalLine(candidate.id)}${explained}`,
      )
    }
    const empty = emptySteps.get(index)
    if (empty !== undefined) lines.push(empty)
  }
  const tools = result.tools.map((tool) => terminalLine(tool.id))
  lines.push('', `Tools: ${tools.join(', ') || '(none)'}`)
  // The tools then come from the library's usage examples, not from the steps above (which may
  // show no candidate at all): say so, as the HTTP answer's `examples` does.
  if (result.examples?.applied === true) {
    lines.push(
      `  (from the library's usage examples: the nearest, similarity ${result.examples.similarity.toFixed(2)}, not the steps' selections)`,
    )
  }
  const { planMs, retrieveMs, rerankMs, selectMs, totalMs } = result.timings
  lines.push(
    `Time: ${totalMs.toFixed(2)} ms (plan ${planMs.toFixed(2)}, retrieve ${retrieveMs.toFixed(2)}, rerank ${rerankMs.toFixed(2)}, select ${selectMs.toFixed(2)})`,
  )
  lines.push(
    `Components: ${result.components.planner} → ${result.components.retriever} → ${result.components.selector}`,
  )
  const fallbacks = fallbackLine(result)
  if (fallbacks !== undefined) lines.push(fallbacks)
  return `${lines.join('\n')}\n`
}

/**
 * `Fallbacks: planner llm(…) → rule (MODEL_CALL_FAILED); selector llm(…) → top1 on 2 steps
 * (UPSTREAM_UNAVAILABLE)`, or undefined when every component answered. The Components line names
 * the configured selector even when every step fell back (the selector falls back per step), so
 * without this line a model that never answered looked as if it had chosen the tools.
 */
function fallbackLine(result: SelectToolsResult): string | undefined {
  const { fallbacks } = result.components
  if (fallbacks.length === 0) return undefined
  const groups = new Map<string, number>()
  for (const { stage, from, to, code } of fallbacks) {
    const key = `${stage} ${terminalLine(from)} → ${terminalLine(to)}\u0000${terminalLine(code)}`
    groups.set(key, (groups.get(key) ?? 0) + 1)
  }
  const parts = [...groups].map(([key, count]) => {
    const [what, code] = key.split('\u0000')
    const steps = what.startsWith('selector ') ? ` on ${count} step${count === 1 ? '' : 's'}` : ''
    return `${what}${steps} (${code})`
  })
  return `Fallbacks: ${parts.join('; ')} (the messages: --json, components.fallbacks)`
}
