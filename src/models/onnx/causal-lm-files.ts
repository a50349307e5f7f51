/**
 * The transformers.js directory layout of a causal LM (the ONNX embedder reads its weight files by
 * it too): which files must exist and which ONNX file each dtype loads (`DEFAULT_DTYPE_SUFFIX_MAPPING` in transformers.js 4.3.2
 * src/utils/dtypes.js). Shared by the loader (fail early, with the fix) and `models check`.
 * @module
 */
import { existsSync, readdirSync, statSync } from 'node:fs'
import { join } from 'node:path'

/** Weight formats transformers.js knows; each maps to a file, e.g. `q8` → `onnx/model_quantized.onnx`. */
export type OnnxDtype = 'fp32' | 'fp16' | 'q8' | 'int8' | 'uint8' | 'q4' | 'q4f16' | 'bnb4'

/** File name suffix of each dtype: `onnx/model{suffix}.onnx`. */
export const DTYPE_SUFFIXES: Readonly<Record<OnnxDtype, string>> = Object.freeze({
  fp32: '',
  fp16: '_fp16',
  q8: '_quantized',
  int8: '_int8',
  uint8: '_uint8',
  q4: '_q4',
  q4f16: '_q4f16',
  bnb4: '_bnb4',
})

export interface ModelFile {
  dtype: OnnxDtype
  /** Path relative to the model directory, e.g. `onnx/model_q4.onnx`. */
  file: string
  bytes: number
  /** External weight files next to it (`model.onnx_data`, `model.onnx_data_1`, …). */
  externalData: string[]
}

export interface LayoutProblem {
  message: string
  fix: string
}

export function modelFileName(dtype: OnnxDtype): string {
  return `onnx/model${DTYPE_SUFFIXES[dtype]}.onnx`
}

/** Every dtype whose ONNX file is present, in the order of `DTYPE_SUFFIXES`. */
export function listModelFiles(directory: string): ModelFile[] {
  const onnxDirectory = join(directory, 'onnx')
  const names = existsSync(onnxDirectory) ? readdirSync(onnxDirectory) : []
  return (Object.keys(DTYPE_SUFFIXES) as OnnxDtype[]).flatMap((dtype) => {
    const file = modelFileName(dtype)
    const base = file.slice('onnx/'.length)
    if (!names.includes(base)) return []
    const externalData = names.filter((name) => name.startsWith(`${base}_data`)).sort()
    const bytes = [base, ...externalData].reduce(
      (sum, name) => sum + statSync(join(onnxDirectory, name)).size,
      0,
    )
    return [{ dtype, file, bytes, externalData: externalData.map((name) => `onnx/${name}`) }]
  })
}

/** What is missing for loading `dtype` from `directory`, each with how to fix it. */
export function layoutProblems(directory: string, dtype: OnnxDtype): LayoutProblem[] {
  if (!existsSync(directory) || !statSync(directory).isDirectory()) {
    return [
      {
        message: `"${directory}" is not a directory.`,
        fix: 'Pass the directory that holds config.json and onnx/ (see models/README.md).',
      },
    ]
  }
  const problems: LayoutProblem[] = []
  const copyFromBase = 'Copy it from the base model repository (e.g. Qwen/Qwen3-1.7B).'
  for (const file of ['config.json', 'tokenizer.json', 'tokenizer_config.json']) {
    if (!existsSync(join(directory, file))) {
      problems.push({ message: `${file} is missing.`, fix: copyFromBase })
    }
  }
  const present = listModelFiles(directory)
  if (!present.some((file) => file.dtype === dtype)) {
    const others = present.map((file) => file.dtype)
    problems.push({
      message: `${modelFileName(dtype)} (dtype ${dtype}) is missing.`,
      fix:
        others.length > 0
          ? `Use one of the dtypes present (${others.join(', ')}), or add the file.`
          : 'Export the model to ONNX (optimum-cli export onnx --task text-generation-with-past --model <model> <out>) and move model.onnx and model.onnx_data into <dir>/onnx/ (see models/README.md).',
    })
  }
  return problems
}
