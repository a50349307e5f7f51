import { readFileSync } from 'node:fs'
import { describe, expect, it } from 'vitest'
import { gorillaArgumentsSchema } from '../../../src/library/importers/gorilla-arguments-schema.ts'
import { importToolsFromFile, importToolsFromText } from '../../../src/library/importers/index.ts'
import { dataPath, hasData } from '../../helpers/data-dir.ts'
import { expectToolselError } from './expect-toolsel-error.ts'

const API_DIR = 'gorilla/gorilla/data/api'
const record = (overrides: Record<string, unknown> = {}) => ({
  domain: 'Video Classification',
  framework: 'PyTorch',
  functionality: '3D ResNet',
  api_name: 'slow_r50',
  api_call: "torch.hub.load(repo_or_dir='facebookresearch/pytorchvideo', model='slow_r50')",
  api_arguments: { pretrained: 'True' },
  python_environment_requirements: ['torch'],
  example_code: 'import torch',
  performance: { dataset: 'Kinetics 400' },
  description: 'A video classification network.',
  ...overrides,
})
const jsonl = (...records: unknown[]) => records.map((entry) => JSON.stringify(entry)).join('\n')

describe('importGorilla', () => {
  it('ids are <file stem>:<0-based line>, with api_call and the raw fields in source', () => {
    const { tools } = importToolsFromText(jsonl(record(), record({ api_name: 'x3d' })), {
      fileName: 'data/torchhub_api.jsonl',
    })
    expect(tools.map((tool) => tool.id)).toEqual(['torchhub_api:0', 'torchhub_api:1'])
    expect(tools[0]).toEqual({
      id: 'torchhub_api:0',
      name: 'slow_r50',
      description: 'A video classification network.',
      parameters: { type: 'object', properties: { pretrained: { description: 'True' } } },
      namespace: 'torchhub_api',
      tags: ['Video Classification', '3D ResNet'],
      source: {
        format: 'gorilla',
        file: 'torchhub_api.jsonl', // the base name: no server paths in served tools
        record: 0,
        line: 1,
        apiCall: record().api_call,
        domain: 'Video Classification',
        framework: 'PyTorch',
        functionality: '3D ResNet',
        apiArguments: { pretrained: 'True' },
        pythonEnvironmentRequirements: ['torch'],
        exampleCode: 'import torch',
        performance: { dataset: 'Kinetics 400' },
      },
    })
  })

  it('names a TF Hub record with a placeholder api_name (model_id) by its tfhub.dev handle', async () => {
    const file = new URL('../../fixtures/importers/tfhub-placeholder-names.jsonl', import.meta.url)
    const { tools } = await importToolsFromFile(file.pathname, { format: 'gorilla' })
    expect(tools.map((tool) => tool.name)).toEqual([
      'imagenet_inception_v3_classification',
      'ssd_mobilenet_v2',
      'tf2-preview_gnews-swivel-20dim',
      'model_id',
      'model_id',
      'audio_embedding_model',
      'model_id',
    ])
    // The original name stays in source where it was replaced; ids are the line as before.
    expect(tools[1].source).toMatchObject({ apiName: 'Model ID' })
    expect(tools[3].source?.apiName).toBeUndefined()
    expect(tools[0].id).toBe('tfhub-placeholder-names:0')
  })

  it('prefixes ids with the namespace option, else "gorilla" when there is no file name', () => {
    expect(importToolsFromText(jsonl(record()), { namespace: 'hub' }).tools[0].id).toBe('hub:0')
    expect(importToolsFromText(jsonl(record(), record())).tools[1].id).toBe('gorilla:1')
  })

  it('counts blank lines, so an id is always the physical line number', () => {
    const text = `${JSON.stringify(record())}\n\n${JSON.stringify(record())}\n`
    expect(importToolsFromText(text, { fileName: 'x.jsonl' }).tools.map((tool) => tool.id)).toEqual(
      ['x:0', 'x:2'],
    )
  })

  it('rejects a record without api_call, naming the line', () => {
    expectToolselError(
      () =>
        importToolsFromText(jsonl(record(), record({ api_call: '' })), { fileName: 'hub.jsonl' }),
      'IMPORT_FAILED',
      'hub.jsonl: line 2: field "api_call": expected a non-empty string, got ""',
    )
  })
})

describe('gorillaArgumentsSchema', () => {
  const properties = (value: unknown) => gorillaArgumentsSchema(value).properties

  it('reads "no arguments" spellings as an empty schema', () => {
    for (const value of [null, '', 'N/A', 'n/a', 'None', []]) {
      expect(gorillaArgumentsSchema(value)).toEqual({ type: 'object', properties: {} })
    }
  })

  it('reads comma-separated names and lists of names as properties', () => {
    expect(properties('text, candidate_labels')).toEqual({ text: {}, candidate_labels: {} })
    expect(properties(['images', 'return_tensors'])).toEqual({ images: {}, return_tensors: {} })
  })

  it('reads dicts: strings as descriptions, other values as defaults', () => {
    expect(properties({ model_url: 'https://tfhub.dev/x', trainable: false, size: 224 })).toEqual({
      model_url: { description: 'https://tfhub.dev/x' },
      trainable: { type: 'boolean', default: false },
      size: { type: 'number', default: 224 },
    })
  })

  it('reads name: description and name=literal strings, and {name, type, description} objects', () => {
    expect(properties(['input_text: A list of strings', "'yolov5s'", 'pretrained=True'])).toEqual({
      input_text: { description: 'A list of strings' },
      pretrained: { type: 'boolean', default: true },
    })
    expect(
      properties([{ name: 'repo', type: 'str', description: 'Repository', default: 'x/y' }]),
    ).toEqual({
      repo: { type: 'string', description: 'Repository', default: 'x/y' },
    })
  })

  it('keeps free text and code as the schema description', () => {
    expect(gorillaArgumentsSchema('URL of the pre-trained model')).toEqual({
      type: 'object',
      properties: {},
      description: 'URL of the pre-trained model',
    })
    expect(gorillaArgumentsSchema(['model(x)[0].sum()', 'text']).description).toBe(
      'model(x)[0].sum()',
    )
  })
})

const DATABASES: Array<[string, number, number, number]> = [
  // file, records, distinct api_call, distinct tool names (README section 3: distinct api_name;
  // TF Hub has 55, 70 once its 182 placeholder names (model_id, Model ID, module_name) are read
  // from their tfhub.dev handles)
  ['huggingface_api.jsonl', 936, 895, 907],
  ['tensorflowhub_api.jsonl', 696, 80, 70],
  ['torchhub_api.jsonl', 94, 94, 43],
]

describe.skipIf(!hasData(API_DIR))(
  'importGorilla on the API databases (skipped: no shared/data/gorilla)',
  () => {
    it.each(DATABASES)(
      'imports %s: %i tools, %i distinct api_calls, %i distinct names',
      async (file, count, calls, names) => {
        const { tools, warnings } = await importToolsFromFile(dataPath(API_DIR, file))
        expect(tools).toHaveLength(count)
        expect(warnings).toEqual([])
        const stem = file.replace('.jsonl', '')
        expect(tools.map((tool) => tool.id)).toEqual(tools.map((_tool, line) => `${stem}:${line}`))
        expect(new Set(tools.map((tool) => tool.source?.apiCall)).size).toBe(calls)
        expect(new Set(tools.map((tool) => tool.name)).size).toBe(names)
      },
    )

    it('imports the three databases of the folder together without id clashes', async () => {
      const { importToolsFromPath } = await import('../../../src/library/importers/index.ts')
      const { tools, files } = await importToolsFromPath(dataPath(API_DIR))
      expect(tools).toHaveLength(936 + 696 + 94)
      expect(files.map((file) => file.format)).toEqual(['gorilla', 'gorilla', 'gorilla'])
    })

    it('finds the gold API of every TorchHub training query by line', async () => {
      const { tools } = await importToolsFromFile(dataPath(API_DIR, 'torchhub_api.jsonl'))
      const lines = readFileSync(dataPath(API_DIR, 'torchhub_api.jsonl'), 'utf8').split('\n')
      const train = readFileSync(
        dataPath('gorilla/gorilla/data/apibench/torchhub_train.json'),
        'utf8',
      )
      for (const query of train
        .trim()
        .split('\n')
        .map((line) => JSON.parse(line) as { api_data: unknown })) {
        const line = lines.findIndex(
          (text) =>
            text !== '' && JSON.stringify(JSON.parse(text)) === JSON.stringify(query.api_data),
        )
        expect(line).toBeGreaterThanOrEqual(0)
        expect(tools[line].source?.apiCall).toBe((query.api_data as { api_call: string }).api_call)
      }
    })

    it('keeps descriptions and typed arguments (spot check)', async () => {
      const { tools } = await importToolsFromFile(dataPath(API_DIR, 'huggingface_api.jsonl'))
      expect(tools[0]).toMatchObject({
        name: 'YituTech/conv-bert-base',
        source: {
          apiCall: "AutoModel.from_pretrained('YituTech/conv-bert-base')",
          apiArguments: 'N/A',
        },
        parameters: { properties: {} },
      })
      expect(tools[100].parameters.properties).toEqual({ image: {}, question: {} })
    })
  },
)
