import { describe, expect, it } from 'vitest'
import { importToolsFromText } from '../../../src/library/importers/index.ts'
import { expectToolselError } from './expect-toolsel-error.ts'

describe('importCanonical', () => {
  it('fills in defaults: empty description, empty object schema, provenance', () => {
    const { tools } = importToolsFromText(JSON.stringify([{ id: 'a.b', name: 'b' }]), {
      fileName: 'lib.json',
    })
    expect(tools).toEqual([
      {
        id: 'a.b',
        name: 'b',
        description: '',
        parameters: { type: 'object', properties: {} },
        source: { format: 'canonical', file: 'lib.json', record: 0 },
      },
    ])
  })

  it('round-trips tools, keeping their original source', () => {
    const tool = {
      id: 'T::A',
      name: 'A',
      description: 'Does A.',
      parameters: { type: 'object', properties: { q: { type: 'string' } } },
      namespace: 'T',
      tags: ['Data'],
      source: { format: 'toolbench', file: 'G1.json', record: 4, category: 'Data' },
    }
    const { tools } = importToolsFromText(JSON.stringify({ tools: [tool] }))
    expect(tools).toEqual([tool])
  })

  it('sets the namespace option only on tools without one, never changing ids', () => {
    const text = [
      { id: 'x', name: 'x' },
      { id: 'y', name: 'y', namespace: 'own' },
    ]
      .map((tool) => JSON.stringify(tool))
      .join('\n')
    const { tools } = importToolsFromText(text, { fileName: 'lib.jsonl', namespace: 'ns' })
    expect(tools.map((tool) => [tool.id, tool.namespace])).toEqual([
      ['x', 'ns'],
      ['y', 'own'],
    ])
  })

  it('rejects misspelt keys, missing ids and wrong types, naming the field', () => {
    expectToolselError(
      () =>
        importToolsFromText(JSON.stringify([{ id: 'a', name: 'a', parameter: {} }]), {
          fileName: 'lib.json',
        }),
      'IMPORT_FAILED',
      'lib.json: record 0: field "parameter": unknown field; remove it or check its spelling',
    )
    expectToolselError(
      () =>
        importToolsFromText('{"id": "a", "name": "a"}\n{"name": "b"}\n', {
          fileName: 'lib.jsonl',
          format: 'canonical',
        }),
      'IMPORT_FAILED',
      'lib.jsonl: line 2: field "id": expected a non-empty string, got nothing (the field is missing)',
    )
    expectToolselError(
      () =>
        importToolsFromText(JSON.stringify([{ id: 'a', name: 'a', tags: ['x', 3] }]), {
          fileName: 'lib.json',
        }),
      'IMPORT_FAILED',
      'lib.json: record 0: field "tags[1]": expected a string, got 3',
    )
    expectToolselError(
      () =>
        importToolsFromText(JSON.stringify([{ id: '  ', name: 'a' }]), { fileName: 'lib.json' }),
      'IMPORT_FAILED',
      'field "id": expected a non-empty string, got "  "',
    )
  })

  it('rejects a document that is not a tool list', () => {
    expectToolselError(
      () =>
        importToolsFromText('{"tools": {"id": "a"}}', {
          format: 'canonical',
          fileName: 'lib.json',
        }),
      'IMPORT_FAILED',
      'lib.json: field "tools": expected an array of canonical tools, got {"id":"a"}',
    )
  })
})
