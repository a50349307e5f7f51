import { describe, expect, it } from 'vitest'
import { EMPTY_PARAMETERS } from '../../../src/library/tool.ts'
import {
  splitIdentifier,
  toolEmbeddingText,
} from '../../../src/retrieve/dense/tool-embedding-text.ts'

describe('toolEmbeddingText', () => {
  it('writes namespace, name words, description and parameters with their descriptions', () => {
    const text = toolEmbeddingText({
      id: 'weather.get_forecast',
      name: 'get_forecast',
      namespace: 'weather',
      description: 'Get the  weather\nforecast.',
      parameters: {
        type: 'object',
        properties: {
          cityName: { type: 'string', description: 'City' },
          days: { type: 'integer' },
        },
      },
    })
    expect(text).toBe(
      'weather / get forecast: Get the weather forecast.\nParameters: city Name (City), days',
    )
  })

  it('leaves out what a tool does not have', () => {
    expect(
      toolEmbeddingText({ id: 'x', name: 'ping', description: '', parameters: EMPTY_PARAMETERS }),
    ).toBe('ping')
  })

  it('splits snake, kebab, dotted and camel case identifiers', () => {
    expect(splitIdentifier('getHTTPResponse_code-v2.final')).toBe('get HTTP Response code v2 final')
  })
})
