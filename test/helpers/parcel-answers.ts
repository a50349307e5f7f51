/** For tests that tell which edition of several libraries a real server serves. */
import { expect } from 'vitest'
import { callFresh as call } from './fresh-request.ts'

/**
 * The first tool select-tools picks for "look up my parcel" in each of `libraries` (whose
 * editions name their lookup tool `<edition>_lookup` or `<library>_<edition>_lookup`).
 */
export async function parcelAnswers(
  url: string,
  libraries: readonly string[],
): Promise<Record<string, string>> {
  const picked: Record<string, string> = {}
  for (const library of libraries) {
    const { status, text } = await call(
      url,
      'POST',
      '/v1/select-tools',
      JSON.stringify({ instruction: 'look up my parcel', library }),
    )
    expect(status, text).toBe(200)
    picked[library] = (JSON.parse(text) as { tools: Array<{ name: string }> }).tools[0].name
  }
  return picked
}
