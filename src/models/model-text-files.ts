/**
 * The JSON and template files of a model directory (config.json, tokenizer.json, …) read with a
 * size bound: a model directory is often downloaded or copied from elsewhere, and one of these
 * files linked to /dev/zero (or far too large) was read until the process ran out of memory
 * (`toolsel models check`: 2.3 GB for config.json, 4.3 GB for tokenizer_config.json).
 * Links are followed (Hugging Face cache snapshots link every file to a blob).
 * @module
 */
import { join } from 'node:path'
import { ToolselError } from '../errors.ts'
import { assertTrustedPath } from '../trusted-path.ts'
import {
  FileTooLargeError,
  NotRegularFileError,
  openForReading,
  readFileUpTo,
} from '../read-text-file.ts'

/** Largest JSON/template file of a model directory read (a real tokenizer.json is ~10-35 MB). */
export const MODEL_TEXT_FILE_MAX_BYTES = 64 * 1024 * 1024

/** A size limit of model files and how large such files are, in words, for its error. */
export interface ModelFileLimit {
  maxBytes: number
  sizes: string
}

/** The limit of a model directory's config, tokenizer and template files. */
export const MODEL_TEXT_FILE_LIMIT: ModelFileLimit = {
  maxBytes: MODEL_TEXT_FILE_MAX_BYTES,
  sizes: 'model config and tokenizer files are a few KiB to tens of MB',
}

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

/**
 * MODEL_LOAD_FAILED naming the file when one of MODEL_TEXT_FILES in `directory` is not a
 * regular file or is larger than MODEL_TEXT_FILE_MAX_BYTES: transformers.js would read it whole.
 * Each is opened (non-blocking) and its handle's fstat checked; nothing is read.
 */
export async function checkModelTextFiles(directory: string): Promise<void> {
  // Its weights and tokenizer decide the answers: `assertTrustedPath` (refused when any user can
  // write it or a directory above it; another uid's a warning).
  assertTrustedPath(directory, 'Model directory', 'MODEL_LOAD_FAILED', { recursive: true })
  for (const name of MODEL_TEXT_FILES) await checkModelFile(join(directory, name))
}

/**
 * MODEL_LOAD_FAILED naming `file` when it is not a regular file or is larger than `limit`. It is
 * opened (non-blocking) and its handle's fstat checked; nothing is read. Absent (or unreadable)
 * passes: the load reports what it needs.
 */
export async function checkModelFile(
  file: string,
  limit: ModelFileLimit = MODEL_TEXT_FILE_LIMIT,
): Promise<void> {
  let opened: Awaited<ReturnType<typeof openForReading>>
  try {
    opened = await openForReading(file, { regularOnly: true })
  } catch (error) {
    if (error instanceof NotRegularFileError) throw modelFileError(file, error)
    return
  }
  await opened.handle.close()
  if (opened.stats.size > limit.maxBytes) {
    throw modelFileError(file, new FileTooLargeError(limit.maxBytes), opened.stats.size, limit)
  }
}

/**
 * The text of a model directory's file, at most MODEL_TEXT_FILE_MAX_BYTES of it, from a regular
 * file only; a longer one, a device or a pipe throws MODEL_LOAD_FAILED naming it, unread (a pipe
 * without a writer does not hang). Other failures are Node's (ENOENT…).
 */
export async function readModelText(file: string): Promise<string> {
  try {
    return await readFileUpTo(file, MODEL_TEXT_FILE_MAX_BYTES, { regularOnly: true })
  } catch (error) {
    if (error instanceof NotRegularFileError || error instanceof FileTooLargeError)
      throw modelFileError(file, error)
    throw error
  }
}

/**
 * MODEL_LOAD_FAILED naming `file`: not a regular file, or larger than `limit` (`size`: what its
 * fstat said).
 */
export function modelFileError(
  file: string,
  error: NotRegularFileError | FileTooLargeError,
  size?: number,
  { maxBytes, sizes }: ModelFileLimit = MODEL_TEXT_FILE_LIMIT,
): ToolselError {
  const problem =
    error instanceof NotRegularFileError
      ? 'is not a regular file (a device, pipe or directory)'
      : `is ${size === undefined ? 'larger than' : `${size} bytes, larger than`} ${maxBytes} bytes (${sizes})`
  return new ToolselError('MODEL_LOAD_FAILED', `Model file "${file}" ${problem}.`, {
    cause: error,
    details: { file },
  })
}
