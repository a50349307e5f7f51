/**
 * Reading benchmark query files: JSON documents and JSON Lines (several published files are
 * JSON Lines despite a `.json` name, e.g. Gorilla's `torchhub_train.json`).
 * @module
 */
import { access } from 'node:fs/promises'
import { ToolselError } from '../../errors.ts'
import { exampleLineLimit, longExampleLineProblem } from '../../examples/usage-example.ts'
import {
  FileTooLargeError,
  fileProblem,
  InvalidUtf8Error,
  LineTooLongError,
  NotRegularFileError,
  readLinesUpTo,
  readUtf8FileUpTo,
} from '../../read-text-file.ts'

/** The paths of `files` that do not exist or cannot be read. */
export async function missingFiles(files: readonly string[]): Promise<string[]> {
  const missing: string[] = []
  for (const file of files) {
    try {
      await access(file)
    } catch {
      missing.push(file)
    }
  }
  return missing
}

/**
 * What the errors call the file: a benchmark's queries by default; `toolsel train --examples`
 * and `train-data --examples` read usage examples with the same code.
 */
export type DataFileKind = 'Benchmark file' | 'Examples file'

/**
 * Largest query or examples file read (the largest benchmark file is a few MB; 200,000 usage
 * examples are about 60 MB): a larger file is refused unread, a device such as /dev/zero after
 * that many bytes.
 */
export const MAX_DATA_FILE_BYTES = 256 * 1024 * 1024

/**
 * The file's text, without the byte-order mark Windows editors put first (JSON.parse refuses it).
 * INVALID_INPUT `Cannot read <kind> "<file>": <reason>` for a file that cannot be read, is larger
 * than `maxBytes`, or holds bytes that are not UTF-8 (naming the line). `regularOnly` (default: a
 * benchmark file's) refuses a FIFO or device unread; `--suite file:<path>` names the file itself
 * and may be a pipe (`file:<(…)`).
 */
export async function readDataText(
  file: string,
  kind: DataFileKind | '--examples file' = 'Benchmark file',
  maxBytes = MAX_DATA_FILE_BYTES,
  regularOnly = kind === 'Benchmark file',
): Promise<string> {
  try {
    return (await readUtf8FileUpTo(file, maxBytes, { regularOnly })).replace(/^\uFEFF/, '')
  } catch (error) {
    throw dataFileError(error, file, kind, maxBytes)
  }
}

/**
 * The lines of a usage examples file, in batches as they are read (`readLinesUpTo`: one read's
 * lines held): `readDataText`'s limit and errors, the error thrown when the reading gets there,
 * and lines at most `exampleLineLimit` long (1 MiB; 16 MiB in a JSON array).
 */
export async function* readDataLines(
  file: string,
  kind: 'Examples file' | '--examples file',
  maxBytes = MAX_DATA_FILE_BYTES,
): AsyncGenerator<string[], void, void> {
  try {
    yield* readLinesUpTo(file, maxBytes, { maxLineBytes: exampleLineLimit })
  } catch (error) {
    throw dataFileError(error, file, kind, maxBytes)
  }
}

/**
 * INVALID_INPUT `Cannot read <kind> "<file>": <reason>`. A benchmark file is read only when it
 * is a regular file (a benchmark data directory holds files; a FIFO in one hung the run);
 * examples may come from a pipe (`--examples /dev/stdin`).
 */
function dataFileError(
  error: unknown,
  file: string,
  kind: DataFileKind | '--examples file',
  maxBytes: number,
): unknown {
  if (error instanceof ToolselError) return error
  const reason =
    error instanceof FileTooLargeError
      ? `it is ${error.message}, more than a ${kind === 'Benchmark file' ? 'query' : 'usage examples'} file holds; nothing was read`
      : error instanceof InvalidUtf8Error
        ? `${error.message} (save it as UTF-8)`
        : error instanceof LineTooLongError
          ? `${error.message}: ${longExampleLineProblem(error.maxLineBytes)}`
          : error instanceof NotRegularFileError
            ? `${error.message}; nothing was read`
            : fileProblem(error)
  return new ToolselError(
    'INVALID_INPUT',
    `Cannot read ${kind.toLowerCase()} "${file}": ${reason}`,
    {
      cause: error,
      details: {
        file,
        ...((error instanceof InvalidUtf8Error || error instanceof LineTooLongError) && {
          line: error.line,
        }),
        ...(error instanceof LineTooLongError && { maxLineBytes: error.maxLineBytes }),
        ...(error instanceof FileTooLargeError && { maxBytes }),
      },
    },
  )
}

/** A JSON array (or JSON Lines) of records. */
export async function readJsonRecords(
  file: string,
  kind: DataFileKind = 'Benchmark file',
  { regularOnly }: { regularOnly?: boolean } = {},
): Promise<unknown[]> {
  return jsonRecords(await readDataText(file, kind, undefined, regularOnly), file, kind)
}

/**
 * The records of a JSON array or JSON Lines text; `expected` (what a record holds) is added to
 * the error when the text is neither.
 */
export function jsonRecords(
  text: string,
  file: string,
  kind: DataFileKind = 'Benchmark file',
  expected = '',
): unknown[] {
  const value = parseJsonOrLines(text, file, kind)
  // JSON Lines of one record parse as that one JSON object.
  if (isObject(value) && !text.trim().includes('\n')) return [value]
  if (!Array.isArray(value)) {
    throw new ToolselError(
      'INVALID_INPUT',
      `${kind} "${file}" is not a JSON array or JSON Lines${expected && ` of ${expected}`}.`,
      {
        details: { file },
      },
    )
  }
  return value
}

/** One JSON document, or JSON Lines (an array of the lines) when the whole text is not JSON. */
export function parseJsonOrLines(
  text: string,
  file: string,
  kind: DataFileKind = 'Benchmark file',
): unknown {
  try {
    return JSON.parse(text) as unknown
  } catch {
    const records: unknown[] = []
    for (const [index, line] of text.split('\n').entries()) {
      if (line.trim() === '') continue
      try {
        records.push(JSON.parse(line))
      } catch (error) {
        throw new ToolselError(
          'INVALID_INPUT',
          `${kind} "${file}" line ${index + 1} is not JSON: ${(error as Error).message}`,
          { cause: error, details: { file, line: index + 1 } },
        )
      }
    }
    return records
  }
}

/** Fails with the file, the record and what was expected. */
export function badRecord(file: string, record: number, message: string): ToolselError {
  return new ToolselError(
    'INVALID_INPUT',
    `Benchmark file "${file}" record ${record}: ${message}.`,
    {
      details: { file, record },
    },
  )
}

/** Distinct values in first-seen order. */
export function unique<T>(values: Iterable<T>): T[] {
  return [...new Set(values)]
}

function isObject(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value)
}
