/**
 * `toolsel models check <dir>`: is this directory a causal LM that `onnx:<dir>` can load? Checks
 * the transformers.js layout, the chat template, which dtypes are present, the ONNX signature
 * (names as transformers.js 4.3.2 feeds a decoder: input_ids, attention_mask, position_ids,
 * past_key_values.N.key/value → logits, present.N.key/value) and the execution providers.
 * @module
 */
import { existsSync, statSync } from 'node:fs'
import { join, resolve } from 'node:path'
import type { OnnxDtype } from './onnx/onnx-embedding-model.ts'
import { readModelText } from './model-text-files.ts'
import { checkModelWeightFiles } from './model-weight-files.ts'
import {
  layoutProblems,
  listModelFiles,
  type LayoutProblem,
  type ModelFile,
} from './onnx/causal-lm-files.ts'
import {
  inspectOnnxModel,
  probeExecutionProviders,
  type OnnxModelInfo,
  type ProviderStatus,
} from './onnx/causal-lm-inspect.ts'
import { errorFirstLine, errorMessage } from '../errors.ts'

export interface ModelCheckReport {
  directory: string
  /** True when there are no problems: `onnx:<directory>` should load. */
  ok: boolean
  /** From config.json. */
  modelType?: string
  architectures: string[]
  /** Which of the expected files exist. */
  files: Record<(typeof FILES)[number], boolean>
  /** Where the chat template comes from, if anywhere. */
  chatTemplate?: 'tokenizer_config.json' | 'chat_template.jinja'
  /** Whether the template has Qwen3's `enable_thinking` switch. */
  thinkingSwitch: boolean
  /** ONNX files present, one per dtype. */
  dtypes: ModelFile[]
  /** The inspected file's signature, with what it means for toolsel. */
  session?: OnnxModelInfo & { dtype: OnnxDtype; file: string; layers: number; keepsLogits: boolean }
  providers: ProviderStatus[]
  /** What stops loading, each with its fix. */
  problems: LayoutProblem[]
  /** What works but is slower or unusual. */
  notes: string[]
}

export interface CheckModelDirOptions {
  /** The dtype to inspect. Default fp32 when present, else the first dtype found. */
  dtype?: OnnxDtype
  /** Try to start a CUDA session. Default true. */
  probeCuda?: boolean
}

const FILES = [
  'config.json',
  'generation_config.json',
  'tokenizer.json',
  'tokenizer_config.json',
] as const

export async function checkModelDir(
  directory: string,
  options: CheckModelDirOptions = {},
): Promise<ModelCheckReport> {
  const path = resolve(directory)
  const report: ModelCheckReport = {
    directory: path,
    ok: false,
    architectures: [],
    files: Object.fromEntries(
      FILES.map((file) => [file, existsSync(join(path, file))]),
    ) as ModelCheckReport['files'],
    thinkingSwitch: false,
    dtypes: [],
    providers: [],
    problems: [],
    notes: [],
  }
  if (!existsSync(path) || !statSync(path).isDirectory()) {
    report.problems = layoutProblems(path, 'fp32')
    return report
  }
  report.dtypes = listModelFiles(path)
  const dtype =
    options.dtype ??
    report.dtypes.find((file) => file.dtype === 'fp32')?.dtype ??
    report.dtypes[0]?.dtype ??
    'fp32'
  report.problems.push(...layoutProblems(path, dtype))
  const config = await readJson(path, 'config.json', report)
  checkConfig(config, report)
  await checkChatTemplate(path, await readJson(path, 'tokenizer_config.json', report), report)
  if (!report.files['generation_config.json']) {
    report.notes.push(
      'No generation_config.json: end-of-turn tokens come from config.json and the tokenizer.',
    )
  }
  // ONNX Runtime reads the files inspected and probed whole: each a regular file within its
  // limit first (model-weight-files.ts), else a problem and nothing read.
  const unreadable = await weightFileProblems(path, report.dtypes)
  report.problems.push(...unreadable)
  const file = report.dtypes.find((candidate) => candidate.dtype === dtype)
  if (file && unreadable.length === 0) await inspect(path, file, config, report)
  const smallest = [...report.dtypes].sort((a, b) => a.bytes - b.bytes)[0]
  if (smallest && options.probeCuda !== false && unreadable.length === 0) {
    report.providers = await probeExecutionProviders(join(path, smallest.file))
  } else {
    report.providers = [{ name: 'cpu', available: true }]
  }
  report.ok = report.problems.length === 0
  return report
}

/** A problem for each dtype whose ONNX files `checkModelWeightFiles` refuses. */
async function weightFileProblems(
  directory: string,
  dtypes: readonly ModelFile[],
): Promise<LayoutProblem[]> {
  const problems: LayoutProblem[] = []
  for (const { dtype } of dtypes) {
    try {
      await checkModelWeightFiles(directory, dtype)
    } catch (error) {
      problems.push({
        message: (error as Error).message,
        fix: 'Put the exported ONNX file there (models/README.md, "Getting a model").',
      })
    }
  }
  return problems
}

function checkConfig(config: Record<string, unknown> | undefined, report: ModelCheckReport): void {
  if (!config) return
  report.modelType = typeof config.model_type === 'string' ? config.model_type : undefined
  report.architectures = Array.isArray(config.architectures) ? config.architectures.map(String) : []
  if (!report.modelType) {
    report.problems.push({
      message: 'config.json has no model_type.',
      fix: 'Use the config.json of the base model (Qwen3: "model_type": "qwen3").',
    })
  }
  if (
    report.architectures.length > 0 &&
    !report.architectures.some((name) => name.endsWith('ForCausalLM'))
  ) {
    report.problems.push({
      message: `config.json describes ${report.architectures.join(', ')}, not a causal LM.`,
      fix: 'Point at a text-generation model (architectures: *ForCausalLM), e.g. Qwen3ForCausalLM.',
    })
  }
}

async function checkChatTemplate(
  path: string,
  tokenizerConfig: Record<string, unknown> | undefined,
  report: ModelCheckReport,
): Promise<void> {
  const inline = tokenizerConfig?.chat_template
  const template =
    typeof inline === 'string' || Array.isArray(inline)
      ? JSON.stringify(inline)
      : existsSync(join(path, 'chat_template.jinja'))
        ? await readModelText(join(path, 'chat_template.jinja')).catch((error: unknown) => {
            report.problems.push({
              message: `chat_template.jinja can't be read: ${errorMessage(error)}`,
              fix: 'Restore chat_template.jinja from the model repository.',
            })
            return ''
          })
        : undefined
  if (template === undefined) {
    if (report.files['tokenizer_config.json']) {
      report.problems.push({
        message:
          'No chat template (neither chat_template in tokenizer_config.json nor chat_template.jinja).',
        fix: 'Copy tokenizer_config.json (or chat_template.jinja) from the instruct model; the planner and selector prompt through it.',
      })
    }
    return
  }
  report.chatTemplate =
    typeof inline === 'string' || Array.isArray(inline)
      ? 'tokenizer_config.json'
      : 'chat_template.jinja'
  report.thinkingSwitch = template.includes('enable_thinking')
}

async function inspect(
  path: string,
  file: ModelFile,
  config: Record<string, unknown> | undefined,
  report: ModelCheckReport,
): Promise<void> {
  let info: OnnxModelInfo
  try {
    info = await inspectOnnxModel(join(path, file.file))
  } catch (error) {
    const reason = errorFirstLine(error)
    report.problems.push({
      message: `ONNX Runtime can't open ${file.file}: ${reason}`,
      fix: 'Re-export the model; check that external data files (model.onnx_data) sit next to it.',
    })
    return
  }
  const inputs = new Set(info.inputs.map((input) => input.name))
  const outputs = new Set(info.outputs.map((output) => output.name))
  const layers = info.inputs.filter((input) =>
    /^past_key_values\.\d+\.key$/.test(input.name),
  ).length
  report.session = {
    ...info,
    dtype: file.dtype,
    file: file.file,
    layers,
    keepsLogits: inputs.has('num_logits_to_keep'),
  }
  const missing = ['input_ids', 'attention_mask'].filter((name) => !inputs.has(name))
  if (missing.length > 0 || !outputs.has('logits')) {
    report.problems.push({
      message: `${file.file} lacks ${[...missing, ...(outputs.has('logits') ? [] : ['the logits output'])].join(', ')}.`,
      fix: 'Export a text-generation model: optimum-cli export onnx --task text-generation-with-past.',
    })
  }
  if (layers === 0) {
    report.problems.push({
      message: `${file.file} has no past_key_values inputs (exported without a KV cache).`,
      fix: 'Re-export with --task text-generation-with-past; without a cache every token re-reads the prompt.',
    })
  } else if (typeof config?.num_hidden_layers === 'number' && config.num_hidden_layers !== layers) {
    report.problems.push({
      message: `config.json says ${config.num_hidden_layers} layers; ${file.file} has a cache for ${layers}.`,
      fix: 'Use the config.json the model was exported with.',
    })
  }
  if (layers > 0 && !report.session.keepsLogits) {
    report.notes.push(
      `${file.file} has no num_logits_to_keep input: prompt passes compute logits for every prompt position (slower, more memory).`,
    )
  }
  if (!inputs.has('position_ids'))
    report.notes.push(`${file.file} takes no position_ids (fine for some architectures).`)
}

async function readJson(
  path: string,
  file: string,
  report: ModelCheckReport,
): Promise<Record<string, unknown> | undefined> {
  if (!existsSync(join(path, file))) return undefined
  try {
    return JSON.parse(await readModelText(join(path, file))) as Record<string, unknown>
  } catch (error) {
    report.problems.push({
      message: `${file} is not valid JSON: ${errorMessage(error)}`,
      fix: `Restore ${file} from the model repository.`,
    })
    return undefined
  }
}

/** The report as text for the terminal: what was found, then problems with fixes, then the verdict. */
export function formatModelCheck(report: ModelCheckReport): string {
  const yes = (present: boolean) => (present ? 'ok' : 'missing')
  const lines = [`Model directory: ${report.directory}`]
  const kind = [report.modelType, ...report.architectures].filter(Boolean).join(', ')
  lines.push(
    `  config.json             ${yes(report.files['config.json'])}${kind ? ` (${kind})` : ''}`,
  )
  lines.push(`  generation_config.json  ${yes(report.files['generation_config.json'])}`)
  lines.push(`  tokenizer.json          ${yes(report.files['tokenizer.json'])}`)
  lines.push(`  tokenizer_config.json   ${yes(report.files['tokenizer_config.json'])}`)
  const switchNote = report.thinkingSwitch ? ', has the enable_thinking switch' : ''
  lines.push(
    `  chat template           ${report.chatTemplate ? `from ${report.chatTemplate}${switchNote}` : 'missing'}`,
  )
  lines.push(
    `  ONNX files              ${
      report.dtypes.length === 0
        ? 'none'
        : report.dtypes
            .map((file) => `${file.dtype} (${file.file}, ${formatBytes(file.bytes)})`)
            .join(', ')
    }`,
  )
  if (report.session) {
    const { session } = report
    lines.push(
      `  inspected ${session.file}: ${session.layers} layers, num_logits_to_keep ${session.keepsLogits ? 'yes' : 'no'}`,
    )
    for (const [label, tensors] of [
      ['in ', session.inputs],
      ['out', session.outputs],
    ] as const) {
      for (const tensor of tensors)
        lines.push(`    ${label} ${tensor.name}: ${tensor.type} [${tensor.shape.join(', ')}]`)
    }
  }
  const providers = report.providers.map((provider) =>
    provider.available
      ? provider.name
      : `${provider.name} unavailable (${provider.reason ?? 'unknown reason'})`,
  )
  lines.push(`  execution providers     ${providers.join('; ')}`)
  for (const note of report.notes) lines.push(`  note: ${note}`)
  if (report.problems.length > 0) {
    lines.push('Problems:')
    for (const problem of report.problems)
      lines.push(`  - ${problem.message}`, `    fix: ${problem.fix}`)
  }
  const usable = report.dtypes.map((file) => file.dtype).join(', ')
  lines.push(
    report.ok
      ? `Result: usable as onnx:${report.directory} (dtypes: ${usable}).`
      : `Result: not usable yet (${report.problems.length} problem${report.problems.length === 1 ? '' : 's'}).`,
  )
  return lines.join('\n')
}

function formatBytes(bytes: number): string {
  if (bytes >= 1024 ** 3) return `${(bytes / 1024 ** 3).toFixed(2)} GiB`
  if (bytes >= 1024 ** 2) return `${(bytes / 1024 ** 2).toFixed(1)} MiB`
  return `${(bytes / 1024).toFixed(1)} KiB`
}
