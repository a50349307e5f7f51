/**
 * The ToolselClientError a client call rejects with (the test fails if it resolves, or rejects
 * with something else).
 * @module
 */
import { expect } from 'vitest'
import { ToolselClientError } from '../../src/client/index.ts'

export async function failure(call: Promise<unknown>): Promise<ToolselClientError> {
  const error = await call.then(
    () => undefined,
    (caught: unknown) => caught,
  )
  expect(error).toBeInstanceOf(ToolselClientError)
  return error as ToolselClientError
}
