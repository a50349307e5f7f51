/**
 * `toolsel models check <dir>`: validate a local model directory before pointing toolsel at it;
 * `toolsel models check openai:<model>`: ask its OpenAI-compatible endpoint whether it takes the
 * key and serves the model (the request `toolsel serve` checks at start-up); with `--chat`, also
 * send one choice call the way serve's selector does.
 */
import { stat } from 'node:fs/promises'
import type { Config } from '../config/schema.ts'
import type { SelectionRequest } from '../contracts.ts'
import { ToolselError } from '../errors.ts'
import { SILENT_LOGGER } from '../log.ts'
import { checkModelDir, formatModelCheck } from '../models/check-model-dir.ts'
import {
  modelOf,
  probeOpenAiEndpoint,
  unlistedModel,
  type EndpointProbe,
} from '../models/openai/check-api-key.ts'
import type { OnnxDtype } from '../models/onnx/onnx-embedding-model.ts'
import { commandConfig, parseCommand, printConfig, type CommandIO } from './cli-options.ts'
import { HELP as MODELS_HELP, OPTIONS, DTYPES } from './models-help.ts'

export { HELP as MODELS_HELP, OPTIONS } from './models-help.ts'

export async function modelsCommand(argv: string[], io: CommandIO): Promise<number> {
  const { values, positionals } = parseCommand(argv, OPTIONS, 'models')
  if (values.help) return (io.stdout(`${MODELS_HELP}\n`), 0)
  if (values['print-config']) return printConfig((await commandConfig(values, {}, io)).config, io)
  const [action, directory, ...rest] = positionals
  if (action !== 'check' || !directory || rest.length > 0) {
    throw new ToolselError(
      'INVALID_INPUT',
      'Usage: toolsel models check <model dir> | openai:<model>. See: toolsel models --help',
    )
  }
  if (/^(llm:)?openai:/.test(directory)) {
    const model = modelOf(directory)
    const { config } = await commandConfig(values, {}, io)
    const { baseUrl, apiKey, timeoutMs } = config.models.openai
    if (!model || !baseUrl) {
      throw new ToolselError(
        'INVALID_CONFIG',
        model
          ? `${directory} needs the server's base URL. Set models.openai.baseUrl or TOOLSEL_OPENAI_BASE_URL (e.g. http://localhost:8000/v1 for vLLM).`
          : `"${directory}" names no model. Use openai:<model>, the name the server gives it.`,
      )
    }
    const probe = await probeOpenAiEndpoint({ baseUrl, apiKey, timeoutMs })
    // Another status (a vLLM or llama.cpp server without /models answers 404) says nothing of the
    // chat, which --chat asked about: it is tried; when /models is merely absent (404, 405) the
    // chat alone decides the exit code. Without --chat nothing was checked (exit 1), and the
    // message says so and what checks it.
    // So is a 2xx that is no model list or too large to read (round 44; "ok" before): the chat
    // decides, and without --chat nothing confirmed the model (exit 1).
    const unchecked = checkedNothing(probe)
    const absent = unchecked === 'absent'
    const listless = unchecked === 'listless'
    const endpoint = endpointReport(
      probe,
      model,
      apiKey !== '',
      values.chat ? undefined : unchecked,
    )
    const chat = values.chat
      ? endpoint.ok || probe.outcome === 'status' || listless
        ? await chatCheck(model, config, probe.shown)
        : { result: 'skipped', message: `the /models check said ${endpoint.result}.` }
      : undefined
    if (chat?.result === 'ok' && (probe.outcome === 'status' || listless))
      chat.message += absent
        ? ` The key and the model work; the server has no /models (HTTP ${probe.status}).`
        : listless
          ? ` The key and the model work; GET /models gave no model list to check them against.`
          : ` But GET /models answered HTTP ${probe.status}, so the check fails.`
    const ok = chat ? (endpoint.ok || absent || listless) && chat.result === 'ok' : endpoint.ok
    const report = { ...endpoint, ...(chat && { ok, chat }) }
    io.stdout(
      values.json
        ? `${JSON.stringify(report, null, 2)}\n`
        : `Endpoint: GET ${report.endpoint}\nResult: ${report.result}: ${report.message}\n${chat ? `Chat: ${chat.result}: ${chat.message}\n` : ''}`,
    )
    return report.ok ? 0 : 1
  }
  if (values.chat) {
    throw new ToolselError(
      'INVALID_INPUT',
      '--chat checks an openai:<model>, not a model directory.',
    )
  }
  const dtype = values.dtype as OnnxDtype | undefined
  if (dtype !== undefined && !DTYPES.includes(dtype)) {
    throw new ToolselError(
      'INVALID_INPUT',
      `Unknown --dtype "${dtype}" (available: ${DTYPES.join(', ')}).`,
    )
  }
  // A path that is no directory at all is a mistyped argument, not a model with problems: one
  // error line (exit 2), as every other command's missing path, instead of a report of eight
  // "missing" rows around the one line that matters.
  const found = await stat(directory).catch(() => undefined)
  if (!found?.isDirectory()) {
    throw new ToolselError(
      'INVALID_INPUT',
      found
        ? `"${directory}" is not a directory: pass the model directory that holds config.json and onnx/ (see models/README.md).`
        : `No such directory "${directory}": pass the model directory that holds config.json and onnx/ (see models/README.md).`,
      { details: { directory } },
    )
  }
  const report = await checkModelDir(directory, { dtype, probeCuda: !values['no-cuda'] })
  io.stdout(values.json ? `${JSON.stringify(report, null, 2)}\n` : `${formatModelCheck(report)}\n`)
  return report.ok ? 0 : 1
}

/**
 * Why a `/models` that answered checked nothing, so that a chat call alone can decide: `absent`
 * (404 or 405: the server serves no /models), `listless` (a 2xx over 1 MiB, or one that is no
 * model list); undefined otherwise.
 */
function checkedNothing(probe: EndpointProbe): 'absent' | 'listless' | undefined {
  if (probe.outcome === 'status' && (probe.status === 404 || probe.status === 405)) return 'absent'
  if (probe.outcome === 'too-large' || probe.outcome === 'not-a-list') return 'listless'
  return undefined
}

/**
 * What `models check openai:<model>` prints: `result` is the outcome, or `unknown-model`.
 * `suggestChat`: what `checkedNothing` said, when --chat was not given (the message then says to
 * give it).
 */
function endpointReport(
  probe: EndpointProbe,
  model: string,
  keySet: boolean,
  suggestChat: 'absent' | 'listless' | undefined,
) {
  const unlisted = probe.outcome === 'ok' ? unlistedModel(probe, model) : undefined
  const result = unlisted ? 'unknown-model' : probe.outcome
  const message = probe.shown(
    unlisted ??
      {
        ok: `the endpoint accepts the key and serves "${model}" (HTTP ${probe.status}).`,
        'too-large': `the endpoint accepts the key, but ${probe.detail}, so "${model}" was not checked.`,
        'not-a-list': `the endpoint answered HTTP ${probe.status} with no OpenAI-compatible model list ({"data": [{"id": …}]} expected; it starts ${probe.detail}), so neither the key nor "${model}" was checked. Is models.openai.baseUrl its API root (…/v1)?`,
        refused: `the endpoint ${keySet ? 'refuses the API key' : 'wants an API key and none is set'}: HTTP ${probe.status}${probe.detail ? ` (${probe.detail})` : ''}. Set models.openai.apiKey or TOOLSEL_OPENAI_API_KEY to a key it accepts.`,
        unreachable:
          probe.status > 0
            ? `the endpoint accepts the key, but ${probe.detail}. Run again when the server is less busy; the check waits min(models.openai.timeoutMs, 5 s).`
            : `${probe.detail}. Check models.openai.baseUrl (TOOLSEL_OPENAI_BASE_URL) and that the server runs.`,
        status: `the endpoint answered HTTP ${probe.status}, so the key could not be checked (a server without /models answers 404). Is models.openai.baseUrl its API root (…/v1)?`,
      }[probe.outcome] +
        (suggestChat === 'absent'
          ? ` Nothing was checked: many OpenAI-compatible servers serve no /models. Run again with --chat to send one choice call (a few tokens), which checks the key and "${model}".`
          : suggestChat === 'listless'
            ? ` Run again with --chat to send one choice call (a few tokens), which checks the key and "${model}".`
            : ''),
  )
  return {
    ok: result === 'ok',
    endpoint: probe.url,
    model,
    result,
    status: probe.status,
    message,
    ...(probe.models && { models: probe.models.slice(0, 100) }),
  }
}

/** `--chat`'s one call: a step and two candidates, so the answer is a few tokens. */
const CHAT_CHECK: SelectionRequest = {
  step: 'Add 2 and 3',
  candidates: [
    { id: 'add', name: 'add', description: 'Adds two numbers.', score: 1 },
    { id: 'weather', name: 'weather', description: 'Tells the weather in a city.', score: 0.5 },
  ],
}

/**
 * One choice call of `openai:<model>` through the selector serve builds (no fallback, so its
 * error is what a request's `components.fallbacks` would report).
 */
async function chatCheck(model: string, config: Config, shown: (message: string) => string) {
  const { choiceMode } = config.models.openai
  try {
    // Imported here: the selection code is loaded only for --chat.
    const { configuredLanguageModel } = await import('../components.ts')
    const { LlmSelector } = await import('../select/llm-selector.ts')
    const selector = new LlmSelector({
      model: await configuredLanguageModel(`openai:${model}`, config, SILENT_LOGGER),
    })
    const [selection] = await selector.select([CHAT_CHECK])
    return {
      result: 'ok',
      message: `one choice call (choiceMode ${choiceMode}) answered ${JSON.stringify(selection.toolId ?? 'none')}.`,
    }
  } catch (caught) {
    const error =
      caught instanceof ToolselError
        ? caught
        : new ToolselError('MODEL_CALL_FAILED', String(caught), { cause: caught })
    const status = error.details.status
    return {
      result: 'failed',
      code: error.code,
      ...(typeof status === 'number' && { status }),
      message: shown(
        `one choice call (choiceMode ${choiceMode}) failed: ${error.code}${typeof status === 'number' ? ` (HTTP ${status})` : ''}: ${error.message}`,
      ),
    }
  }
}
