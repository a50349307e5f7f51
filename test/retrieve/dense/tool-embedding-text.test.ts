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

  it("reads a $ref parameter's description from its $defs target (an OpenAPI import's $defs form), its own first", () => {
    const text = toolEmbeddingText({
      id: 'pets.create',
      name: 'create',
      description: 'Create a pet.',
      parameters: {
        type: 'object',
        properties: {
          body: { $ref: '#/$defs/Pet' },
          owner: { $ref: '#/$defs/Person', description: 'Who keeps it' },
          missing: { $ref: '#/$defs/Nothing' },
        },
        $defs: {
          Pet: { type: 'object', description: 'A pet to add' },
          Person: { type: 'object', description: 'A person' },
        },
      },
    })
    expect(text).toBe(
      'create: Create a pet.\nParameters: body (A pet to add), owner (Who keeps it), missing',
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
