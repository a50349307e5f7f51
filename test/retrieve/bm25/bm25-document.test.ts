import { describe, expect, it } from 'vitest'
import { wideTool } from '../../helpers/oversized-tools.ts'
import {
  descriptionWithoutCrossReferences,
  enumValueText,
  MAX_FIELD_CHARS,
  MAX_INDEXED_ENUM_VALUES,
  MAX_INDEXED_PARAMETERS,
  parameterText,
  toolToBm25Document,
} from '../../../src/retrieve/bm25/bm25-document.ts'
import type { Tool } from '../../../src/library/tool.ts'

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

  it('reads at most MAX_INDEXED_PARAMETERS parameters and MAX_FIELD_CHARS characters a field of one tool', () => {
    // One uploaded tool of 20,000 parameters was tokenized in one piece (150-200 ms of the loop).
    const [wide] = wideTool(MAX_INDEXED_PARAMETERS + 10) as unknown as Tool[]
    const names = parameterText(wide.parameters).split(' ')
    expect(names).toHaveLength(MAX_INDEXED_PARAMETERS)
    expect(names.at(-1)).toBe(`p${MAX_INDEXED_PARAMETERS - 1}`)
    const properties = (wide.parameters as { properties: Record<string, object> }).properties
    for (const value of Object.values(properties)) Object.assign(value, { enum: ['on'] })
    expect(enumValueText(wide.parameters).split(' ')).toHaveLength(MAX_INDEXED_PARAMETERS)
    // Nested parameters count against the same budget, in schema order.
    const nested = parameterText({
      type: 'object',
      properties: { outer: wide.parameters, after: { type: 'string' } },
    }).split(' ')
    expect(nested).toHaveLength(MAX_INDEXED_PARAMETERS)
    expect(nested).not.toContain('after')
    const long = 'word '.repeat(MAX_FIELD_CHARS / 4)
    const document = toolToBm25Document({
      id: 'long',
      name: long,
      description: long,
      parameters: { type: 'object', properties: { a: { type: 'string', description: long } } },
      namespace: long,
    })
    for (const text of Object.values(document)) expect(text.length).toBe(MAX_FIELD_CHARS)
  })

  it('stops reading parameter descriptions at the cut, with the same text as joining them all', () => {
    // 1,000 descriptions of 30,000 characters (30 MB, within the upload limits) were all joined
    // to keep the first 500,000 characters: ~170 ms of the event loop.
    const description = 'word '.repeat(6000)
    let reads = 0
    const properties: Record<string, object> = {}
    for (let at = 0; at < 1000; at += 1) {
      properties[`p${at}`] = {
        type: 'string',
        get description() {
          reads += 1
          return description
        },
      }
    }
    const text = parameterText({ type: 'object', properties })
    const all = Object.keys(properties).flatMap((name) => [name, description])
    expect(text).toBe(all.join(' ').slice(0, MAX_FIELD_CHARS))
    expect(reads).toBe(Math.ceil(MAX_FIELD_CHARS / (description.length + 4)))
  })
})
