/** Reading a user-named file as UTF-8, failing with one clear error. @module */
import { readFile } from 'node:fs/promises'
import { ToolselError } from './errors.ts'

/** The file's text, or INVALID_INPUT `Cannot read <what> "<file>": <reason>`. */
export async function readTextFile(file: string, what: string): Promise<string> {
  try {
    return await readFile(file, 'utf8')
  } catch (error) {
    throw new ToolselError(
      'INVALID_INPUT',
      `Cannot read ${what} "${file}": ${(error as Error).message}`,
      { cause: error },
    )
  }
}
