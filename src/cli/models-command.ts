/** `toolsel models check <dir>`: validate a local model directory before pointing toolsel at it. */
import { stat } from 'node:fs/promises'
import { ToolselError } from '../errors.ts'
import { checkModelDir, formatModelCheck } from '../models/check-model-dir.ts'
import type { OnnxDtype } from '../models/onnx/onnx-embedding-model.ts'
import {
  COMMON_HELP,
  commandConfig,
  parseCommand,
  printConfig,
  type CommandIO,
} from './cli-options.ts'

/** The weight files (onnx/model_<dtype>.onnx) --dtype names. */
const DTYPES: readonly OnnxDtype[] = ['fp32', 'fp16', 'q8', 'int8', 'uint8', 'q4', 'q4f16', 'bnb4']

export const MODELS_HELP = `Usage: toolsel models check <model dir> [--dtype <dtype>] [--no-cuda] [--json]

Checks a causal-LM directory in the transformers.js layout (config.json, tokenizer.json,
tokenizer_config.json with a chat template, onnx/model*.onnx): which weight files (dtypes) are
present, the ONNX inputs and outputs and what they mean for toolsel, and which execution
providers can run it here (CPU, and CUDA when a session really starts). Exits 1 when the
directory would not load, listing each problem with its fix; exits 2 with one error line when
the path is not a directory. See models/README.md.

Options:
  --dtype <dtype>      Weight file to inspect (default fp32 when present):
                       ${DTYPES.join(' | ')}
  --no-cuda            Don't try to start a CUDA session
  --json               Print the report as JSON
${COMMON_HELP}`

export const OPTIONS = {
  dtype: { type: 'string' },
  'no-cuda': { type: 'boolean' },
  json: { type: 'boolean' },
} as const

export async function modelsCommand(argv: string[], io: CommandIO): Promise<number> {
  const { values, positionals } = parseCommand(argv, OPTIONS, 'models')
  if (values.help) return (io.stdout(`${MODELS_HELP}\n`), 0)
  if (values['print-config']) return printConfig((await commandConfig(values, {}, io)).config, io)
  const [action, directory, ...rest] = positionals
  if (action !== 'check' || !directory || rest.length > 0) {
    throw new ToolselError(
      'INVALID_INPUT',
      'Usage: toolsel models check <model dir>. See: toolsel models --help',
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
