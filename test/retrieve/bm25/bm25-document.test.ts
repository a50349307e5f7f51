import { describe, expect, it } from 'vitest'
import {
  descriptionWithoutCrossReferences,
  enumValueText,
  MAX_INDEXED_ENUM_VALUES,
  parameterText,
  toolToBm25Document,
} from '../../../src/retrieve/bm25/bm25-document.ts'

describe('BM25 documents', () => {
  it('drops sentences that point to other tools, keeping those naming the tool itself', () => {
    const description =
      'Get the weather right now. Use get_weather_forecast for future days. Prefer getHourly for hours. Call get_current_weather with a city.'
    expect(descriptionWithoutCrossReferences(description, 'get_current_weather')).toBe(
      'Get the weather right now. Call get_current_weather with a city.',
    )
  })

  it('never empties a description: a lone cross-referencing sentence stays', () => {
    const only = 'Returns the same as get_weather_forecast, but for today.'
    expect(descriptionWithoutCrossReferences(only, 'get_current_weather')).toBe(only)
    const tool = {
      id: 'get_best_sushi_places',
      name: 'get_best_sushi_places',
      description: 'Returns the best sushi places given the city, review_rate and top number.',
      parameters: {
        type: 'object',
        properties: { city: { type: 'string' }, review_rate: { type: 'number' }, top: {} },
      },
    }
    expect(toolToBm25Document(tool).description).toBe(tool.description)
  })

  it('indexes parameter names and descriptions, nested ones included', () => {
    const text = parameterText({
      type: 'object',
      properties: {
        city: { type: 'string', description: 'City name' },
        filters: {
          type: 'object',
          properties: { maxPrice: { type: 'number', description: 'Upper price' } },
        },
        stops: {
          type: 'array',
          items: { type: 'object', properties: { airport: { type: 'string' } } },
        },
      },
    })
    expect(text).toBe('city City name filters maxPrice Upper price stops airport')
  })

  it('maps every field, with an empty namespace when the tool has none', () => {
    expect(
      toolToBm25Document({
        id: 'x',
        name: 'send_email',
        description: 'Send mail.',
        parameters: {},
      }),
    ).toEqual({
      name: 'send_email',
      description: 'Send mail.',
      parameters: '',
      namespace: '',
    })
  })

  it('lists string enum values of parameters, nested objects and array items, not long code tables', () => {
    const codes = Array.from({ length: MAX_INDEXED_ENUM_VALUES + 1 }, (_, i) => `code${i}`)
    const schema = {
      type: 'object',
      properties: {
        unit: { type: 'string', enum: ['celsius', 'fahrenheit'] },
        level: { type: 'integer', enum: [1, 2, 3] },
        filters: {
          type: 'object',
          properties: {
            amenities: { type: 'array', items: { type: 'string', enum: ['pool', 'spa'] } },
          },
        },
        country: { type: 'string', enum: codes },
      },
    }
    expect(enumValueText(schema)).toBe('celsius fahrenheit pool spa')
    // Enum values are not parameter text: they are indexed apart, with their own weight.
    expect(parameterText(schema)).not.toMatch(/celsius|pool/)
  })
})
