/**
 * The ONNX files of a model directory (`onnx/model*.onnx` and their external data,
 * `model*.onnx_data*`) bounded before ONNX Runtime or transformers.js reads them: they read a
 * file whole, by name, so a link to /dev/zero grew the process until killed and a FIFO hung the
 * load. Each must be a regular file (links followed: Hugging Face snapshots link every file to a
 * blob) within its limit, checked by the fstat of a handle opened non-blocking; nothing is read.
 * @module
 */
import { join } from 'node:path'
import {
  MODEL_TEXT_FILES,
  MODEL_TEXT_FILE_LIMIT,
  checkModelFile,
  type ModelFileLimit,
} from './model-text-files.ts'
import { listModelFiles, modelFileName, type OnnxDtype } from './onnx/causal-lm-files.ts'

/**
 * Largest ONNX graph file read: 2 GiB, protobuf's limit on one message, so no larger file is an
 * ONNX model (a model's weights past it are in external data files).
 */
export const MODEL_GRAPH_FILE_MAX_BYTES = 2 ** 31

/**
 * Largest external-data file read: 64 GiB. An 8B-parameter model in fp32 is 32 GB, in one file
 * as Optimum exports it.
 */
export const MODEL_WEIGHTS_FILE_MAX_BYTES = 64 * 2 ** 30

/** The limit of the model file `name` (relative to its directory), with its words. */
export function modelFileLimit(name: string): ModelFileLimit {
  if ((MODEL_TEXT_FILES as readonly string[]).includes(name)) return MODEL_TEXT_FILE_LIMIT
  return name.endsWith('.onnx')
    ? {
        maxBytes: MODEL_GRAPH_FILE_MAX_BYTES,
        sizes:
          "an ONNX graph is at most 2 GiB, protobuf's limit; larger weights go in external data",
      }
    : {
        maxBytes: MODEL_WEIGHTS_FILE_MAX_BYTES,
        sizes: 'the most read of one external weights file',
      }
}

/** The ONNX files a load of `dtype` from `directory` reads (relative): its graph, its data. */
export function modelWeightFiles(directory: string, dtype: OnnxDtype): string[] {
  const weights = listModelFiles(directory).find((file) => file.dtype === dtype)
  return [modelFileName(dtype), ...(weights?.externalData ?? [])]
}

/**
 * MODEL_LOAD_FAILED naming the file when one of the ONNX files of `dtype` in `directory` is not a
 * regular file or is past `modelFileLimit`. Absent files pass: the load says what it needs.
 */
export async function checkModelWeightFiles(directory: string, dtype: OnnxDtype): Promise<void> {
  for (const name of modelWeightFiles(directory, dtype))
    await checkModelFile(join(directory, name), modelFileLimit(name))
}
