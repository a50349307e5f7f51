/**
 * The JSON and template files of a model directory (config.json, tokenizer.json, …) read with a
 * size bound: a model directory is often downloaded or copied from elsewhere, and one of these
 * files linked to /dev/zero (or far too large) was read until the process ran out of memory
 * (`toolsel models check`: 2.3 GB for config.json, 4.3 GB for tokenizer_config.json).
 * Links are followed (Hugging Face cache snapshots link every file to a blob).
 * @module
 */
import { stat } from 'node:fs/promises'
import { join } from 'node:path'
import { ToolselError } from '../errors.ts'
import { FileTooLargeError, readFileUpTo } from '../read-text-file.ts'

/** Largest JSON/template file of a model directory read (a real tokenizer.json is ~10-35 MB). */
export const MODEL_TEXT_FILE_MAX_BYTES = 64 * 1024 * 1024

/**
 * The text files transformers.js reads from a model directory before anything is allocated:
 * checked by `checkModelTextFiles` before a load hands the directory to it.
 */
export const MODEL_TEXT_FILES = [
  'config.json',
  'generation_config.json',
  'tokenizer.json',
  'tokenizer_config.json',
  'special_tokens_map.json',
  'chat_template.jinja',
  'preprocessor_config.json',
  'modules.json',
  'config_sentence_transformers.json',
  '1_Pooling/config.json',
  'toolsel.json',
] as const

/** Why `file` can't be read as a model text file, or undefined when it can (or is absent). */
async function textFileProblem(file: string): Promise<string | undefined> {
  const found = await stat(file).catch(() => undefined)
  if (found === undefined) return undefined
  if (!found.isFile()) return 'is not a regular file (a device, pipe or directory)'
  if (found.size > MODEL_TEXT_FILE_MAX_BYTES) {
    return `is ${found.size} bytes, larger than ${MODEL_TEXT_FILE_MAX_BYTES} (model config and tokenizer files are a few KiB to tens of MB)`
  }
  return undefined
}

/**
 * MODEL_LOAD_FAILED naming the file when one of MODEL_TEXT_FILES in `directory` is not a
 * regular file or is larger than MODEL_TEXT_FILE_MAX_BYTES: transformers.js would read it whole.
 */
export async function checkModelTextFiles(directory: string): Promise<void> {
  for (const name of MODEL_TEXT_FILES) {
    const file = join(directory, name)
    const problem = await textFileProblem(file)
    if (problem !== undefined) {
      throw new ToolselError('MODEL_LOAD_FAILED', `Model file "${file}" ${problem}.`, {
        details: { file },
      })
    }
  }
}

/**
 * The text of a model directory's file, at most MODEL_TEXT_FILE_MAX_BYTES of it; a longer one
 * (or a device) throws MODEL_LOAD_FAILED naming it. Other failures are Node's (ENOENT…).
 */
export async function readModelText(file: string): Promise<string> {
  const problem = await textFileProblem(file)
  if (problem !== undefined) {
    throw new ToolselError('MODEL_LOAD_FAILED', `Model file "${file}" ${problem}.`, {
      details: { file },
    })
  }
  try {
    return await readFileUpTo(file, MODEL_TEXT_FILE_MAX_BYTES)
  } catch (error) {
    if (!(error instanceof FileTooLargeError)) throw error
    // Grew past the limit while read.
    throw new ToolselError('MODEL_LOAD_FAILED', `Model file "${file}" is ${error.message}.`, {
      cause: error,
      details: { file },
    })
  }
}
