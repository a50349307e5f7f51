/**
 * Gorilla APIBench question records: `{code, api_call, provider, api_data}` where `code` holds
 * the instruction in the train form (`{'Instruction': …, 'Output': …}`) or the eval form
 * (`###Instruction: … ###Output: <<<api_call>>>: …`). See data README section 3.
 * @module
 */

export interface GorillaQuestion {
  instruction: string
  /** The gold API record (`api_data`), when the question carries one. */
  apiData?: Record<string, unknown>
  /** The gold api_call: `api_data.api_call`, else the record's `api_call`, else `<<<api_call>>>`. */
  apiCall?: string
}

const TRAIN_FORM = /^\s*\{\s*'Instruction':\s*([\s\S]*?),\s*'Output':/
const EVAL_FORM = /###\s*Instruction:\s*([\s\S]*?)\s*(?:###\s*Output|$)/
const EVAL_API_CALL = /<<<api_call>>>:\s*([^\n]*?)\s*(?:,?\s*<<<|\n|$)/

/** The question of one record, or undefined when it has no recognisable instruction. */
export function parseGorillaQuestion(record: unknown): GorillaQuestion | undefined {
  if (record === null || typeof record !== 'object') return undefined
  const { code, text, api_call: apiCall, api_data: apiData } = record as Record<string, unknown>
  const body = typeof code === 'string' ? code : typeof text === 'string' ? text : undefined
  if (body === undefined) return undefined
  const match = TRAIN_FORM.exec(body) ?? EVAL_FORM.exec(body)
  const instruction = match?.[1].trim()
  if (!instruction) return undefined
  const data =
    apiData !== null && typeof apiData === 'object'
      ? (apiData as Record<string, unknown>)
      : undefined
  const call =
    (typeof data?.api_call === 'string' ? data.api_call : undefined) ??
    (typeof apiCall === 'string' ? apiCall : undefined) ??
    EVAL_API_CALL.exec(body)?.[1]
  return { instruction, apiData: data, apiCall: call }
}

/**
 * Gorilla's evaluation compares api_calls as text; whitespace differences are not differences.
 */
export function normalizeApiCall(apiCall: string): string {
  return apiCall.replace(/\s+/g, ' ').trim()
}
