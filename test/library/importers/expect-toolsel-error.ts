/**
 * Assertions on thrown ToolselErrors: error tests check the code and the message (STYLE.md).
 * @module
 */
import { expect } from 'vitest'
import { ToolselError, type ErrorCode } from '../../../src/errors.ts'

/** Runs `action`, expects a ToolselError with `code` whose message contains every fragment. */
export function expectToolselError(
  action: () => unknown,
  code: ErrorCode,
  ...fragments: string[]
): ToolselError {
  let caught: unknown
  try {
    action()
  } catch (error) {
    caught = error
  }
  return checkError(caught, code, fragments)
}

/** The same for an async action. */
export async function expectToolselErrorAsync(
  action: () => Promise<unknown>,
  code: ErrorCode,
  ...fragments: string[]
): Promise<ToolselError> {
  let caught: unknown
  try {
    await action()
  } catch (error) {
    caught = error
  }
  return checkError(caught, code, fragments)
}

function checkError(caught: unknown, code: ErrorCode, fragments: string[]): ToolselError {
  expect(caught, 'expected the action to throw').toBeInstanceOf(ToolselError)
  const error = caught as ToolselError
  expect(error.code).toBe(code)
  for (const fragment of fragments) expect(error.message).toContain(fragment)
  return error
}
