import { mkdtemp, readdir, readFile, writeFile } from 'node:fs/promises'
import type { AddressInfo } from 'node:net'
import { tmpdir } from 'node:os'
import { join, relative as relativePath } from 'node:path'
import { serve } from '@hono/node-server'
import { beforeEach, describe, expect, it } from 'vitest'
import { createTestApp } from '../server/test-service.ts'
import { runCli } from './run-cli.ts'
import { indexDirEntries } from '../helpers/index-dir-entries.ts'

const fixture = (name: string) => new URL(`../fixtures/formats/${name}`, import.meta.url).pathname

let indexDir: string
beforeEach(async () => {
  indexDir = await mkdtemp(join(tmpdir(), 'toolsel-cli-libraries-'))
})

const local = (...argv: string[]) => runCli([...argv, '--index-dir', indexDir])

describe('toolsel libraries (saved indexes)', () => {
  it('lists, shows and deletes saved indexes; the default is refused; unknown names get a guess', async () => {
    expect((await local('libraries', 'list')).stdout).toBe(
      `No libraries in ${indexDir}/. Build one: toolsel index <tool file> --name <library>.\n`,
    )
    expect((await local('index', fixture('postman-collection.json'), '--name', 'shop')).code).toBe(
      0,
    )
    expect(
      (await local('index', fixture('functions.json'), '--name', 'fns', '--on-duplicate', 'rename'))
        .code,
    ).toBe(0)
    const listed = await local('libraries', 'list')
    expect(listed.stdout.split('\n')[0]).toBe('NAME  TOOLS  RETRIEVERS  EXAMPLES  BUILT')
    expect(listed.stdout).toMatch(/^shop {2}7 {6}bm25 {8}0 {9}\d{4}-/m)
    const json = JSON.parse((await local('libraries', 'list', '--json')).stdout)
    expect(json.libraries.map((entry: { name: string }) => entry.name)).toEqual(['fns', 'shop'])
    expect(json.libraries[1]).toMatchObject({
      name: 'shop',
      toolCount: 7,
      retrievers: ['bm25'],
      isDefault: false,
      source: { format: 'postman' },
      dir: join(indexDir, 'shop'),
    })
    const shown = JSON.parse((await local('libraries', 'show', 'shop', '--json')).stdout)
    expect(shown).toEqual(json.libraries[1])
    expect((await local('libraries', 'show', 'shop')).stdout).toContain('tools:        7\n')

    const unknown = await local('libraries', 'delete', 'shp')
    expect(unknown.code).toBe(1)
    expect(unknown.stderr).toContain('No library "shp" is saved in')
    expect(unknown.stderr).toContain('(did you mean "shop"?); saved: fns, shop.')

    const refused = await runCli([
      'libraries',
      'delete',
      'shop',
      '--index-dir',
      indexDir,
      '--config',
      await configWithDefault('shop'),
    ])
    expect(refused.code).toBe(2)
    expect(refused.stderr).toContain('is the default library (library.default, TOOLSEL_LIBRARY)')

    const deleted = await local('libraries', 'delete', 'shop')
    expect(deleted).toMatchObject({
      code: 0,
      stdout: `Deleted library "shop" from ${indexDir}/.\n`,
    })
    // Nothing left behind: no half-deleted directory, no temporary one.
    expect(await indexDirEntries(indexDir)).toEqual(['fns'])
  })

  it('says what it takes: an action, one name, a known action', async () => {
    expect((await runCli(['libraries'])).stderr).toContain('Name an action: toolsel libraries list')
    expect((await runCli(['libraries', 'remove', 'x'])).stderr).toContain('Unknown action "remove"')
    expect((await runCli(['libraries', 'show'])).stderr).toContain('takes one library name')
    expect((await runCli(['library', 'list'])).stderr).toContain('Did you mean "libraries"')
  })

  it('a --library that names a missing path says so; a missing name says how to build it', async () => {
    const path = join(indexDir, 'tools', 'missing.json')
    const missing = await local('select', 'send an sms', '--library', path)
    expect(missing.code).toBe(1)
    expect(missing.stderr).toBe(
      `error [UNKNOWN_LIBRARY]: Library "${path}" not found: no such tool file or directory, and no index directory there. Check the path, or name a saved library (the names in ${indexDir}/: toolsel libraries list).\n`,
    )
    const named = await local('select', 'send an sms', '--library', 'mytools')
    expect(named.stderr).toContain('Build it with: toolsel index <file> --name mytools.')
  })

  it('a missing name under a relative --index-dir names the directory it resolved to', async () => {
    // Was: 'not an index in indexes/', which does not show that an MCP client started the
    // server in a directory of its own (Claude Desktop: /), where indexes/ is another one.
    const relative = relativePath(process.cwd(), indexDir)
    const named = await runCli([
      'select',
      'send an sms',
      '--library',
      'mytools',
      '--index-dir',
      relative,
    ])
    expect(named.code).toBe(1)
    expect(named.stderr).toContain(
      `Library "mytools" not found: it is not an index in ${relative}/ (${indexDir}, from the current directory), an index directory, or a tool file.`,
    )
  })

  it('toolsel index of the same tools again writes nothing; --rebuild and other tools do', async () => {
    const file = fixture('postman-collection.json')
    await local('index', file, '--name', 'shop')
    const built = JSON.parse((await local('libraries', 'show', 'shop', '--json')).stdout)
    const again = await local('index', file, '--name', 'shop')
    expect(again.code).toBe(0)
    expect(again.stderr).toContain(
      `Unchanged: ${join(indexDir, 'shop')} already holds these 7 tools`,
    )
    const kept = JSON.parse((await local('libraries', 'show', 'shop', '--json')).stdout)
    expect(kept.createdAt).toBe(built.createdAt)
    const rebuilt = await local('index', file, '--name', 'shop', '--rebuild')
    expect(rebuilt).toMatchObject({ code: 0 })
    expect(rebuilt.stderr).not.toContain('Unchanged')
    // The progress goes to the command's stderr (captured here), a line per 10% off a terminal.
    expect(rebuilt.stderr).toMatch(/^Indexing shop: 7\/7 \(100%\) [\d.]+s bm25$/m)
    expect(rebuilt.stderr).toContain(
      `Indexing shop: 7 tools written to ${join(indexDir, 'shop')} (retrievers: bm25) in `,
    )
    const regex = await local('index', file, '--name', 'shop', '--retriever', 'bm25,regex')
    expect(regex.stderr).not.toContain('Unchanged')
    const shown = JSON.parse((await local('libraries', 'show', 'shop', '--json')).stdout)
    expect(shown.retrievers).toEqual(['bm25', 'regex'])
  })
})

describe('toolsel index: the unchanged check loads the saved files', () => {
  it('rebuilds the same tools over an index whose files no longer load (its manifest intact)', async () => {
    const file = fixture('postman-collection.json')
    expect((await local('index', file, '--name', 'shop')).code).toBe(0)
    const dir = join(indexDir, 'shop')
    for (const damage of ['tools.jsonl', 'bm25.bin']) {
      // A file cut short behind the manifest's back (not a commit: the manifest stays).
      await writeFile(join(dir, damage), '{')
      const again = await local('index', file, '--name', 'shop')
      expect(again.code, again.stderr).toBe(0)
      expect(again.stderr, damage).not.toContain('Unchanged')
      expect(again.stderr).toContain(`${dir} records these 7 tools but does not load (`)
      expect(again.stderr).toContain(`Indexing shop: 7 tools written to ${dir}`)
      // Whole again: the next run of the same tools writes nothing.
      expect((await local('select', 'list the products', '--library', 'shop')).code).toBe(0)
      expect((await local('index', file, '--name', 'shop')).stderr).toContain('Unchanged: ')
    }
  })
})

describe('toolsel index: the unchanged check compares how each part is built', () => {
  it('rebuilds the same tools after a change of any build setting; query-time settings change nothing', async () => {
    const file = fixture('postman-collection.json')
    const index = async (...extra: string[]) => {
      const run = await local(
        'index',
        file,
        '--name',
        'shop',
        '--retriever',
        'bm25,dense',
        '--embedder',
        'hashing:64',
        ...extra,
      )
      expect(run.code, run.stderr).toBe(0)
      return run.stderr.includes('Unchanged: ') ? 'unchanged' : 'built'
    }
    const config = async (settings: object) => ['--config', await configFile(settings)]
    expect(await index()).toBe('built')
    expect(await index()).toBe('unchanged')
    const changes: Array<[string, string[]]> = [
      ['dense index kind', ['--dense-index', 'flat']],
      ['HNSW parameter', await config({ retrieve: { dense: { hnsw: { m: 8 } } } })],
      ['dense text', await config({ retrieve: { dense: { text: 'short' } } })],
      ['dense model', ['--embedder', 'hashing:32']],
      ['BM25 k1', await config({ retrieve: { bm25: { k1: 1.5 } } })],
      ['BM25 field weight', await config({ retrieve: { bm25: { fieldWeights: { name: 2 } } } })],
      ['BM25 examples per tool', await config({ retrieve: { bm25: { examplesPerTool: 4 } } })],
    ]
    for (const [setting, flags] of changes) {
      expect(await index(...flags), setting).toBe('built')
      expect(await index(...flags), setting).toBe('unchanged')
      expect(await index(), `${setting} back`).toBe('built')
    }
    // Settings read at query time are no reason to rebuild.
    for (const settings of [
      { retrieve: { dense: { hnsw: { efSearch: 64 }, minScore: 0.2 } } },
      { retrieve: { bm25: { tau: 1, expandHeadVerbs: false } } },
    ])
      expect(await index(...(await config(settings))), JSON.stringify(settings)).toBe('unchanged')
    const manifest = JSON.parse(await readFile(join(indexDir, 'shop', 'manifest.json'), 'utf8'))
    expect(manifest.build).toMatchObject({
      version: 1,
      parts: {
        bm25: { k1: 1.2, b: 0.75, examplesPerTool: 32 },
        dense: { embedder: 'hashing:64', index: 'hnsw', m: 32, text: 'full' },
      },
    })
  })

  it('an index saved without build settings (before round 26) still loads, and rebuilds once', async () => {
    const file = fixture('postman-collection.json')
    expect((await local('index', file, '--name', 'shop')).code).toBe(0)
    const path = join(indexDir, 'shop', 'manifest.json')
    const { build: _build, ...older } = JSON.parse(await readFile(path, 'utf8'))
    await writeFile(path, JSON.stringify(older))
    const selected = await local('select', 'add an item to the cart', '--library', 'shop')
    expect(selected.code, selected.stderr).toBe(0)
    expect((await local('index', file, '--name', 'shop')).stderr).not.toContain('Unchanged')
    expect((await local('index', file, '--name', 'shop')).stderr).toContain('Unchanged')
  })

  it("an index saved before the tokenizer probe (round 35) loads and stays unchanged; another tokenizer's is refused and rebuilt", async () => {
    const file = fixture('postman-collection.json')
    expect((await local('index', file, '--name', 'shop')).code).toBe(0)
    const path = join(indexDir, 'shop', 'manifest.json')
    const saved = JSON.parse(await readFile(path, 'utf8'))
    const probe = saved.retrievers.bm25.tokenizerCoreProbe
    expect(probe).toMatch(/^sha256:[0-9a-f]{16}$/)
    const withProbe = async (value: string | undefined) => {
      const manifest = JSON.parse(await readFile(path, 'utf8'))
      for (const part of [manifest.retrievers.bm25, manifest.build.parts.bm25])
        part.tokenizerCoreProbe = value
      await writeFile(path, JSON.stringify(manifest))
    }
    await withProbe(undefined)
    const selected = await local('select', 'add an item to the cart', '--library', 'shop')
    expect(selected.code, selected.stderr).toBe(0)
    expect((await local('index', file, '--name', 'shop')).stderr).toContain('Unchanged')

    await withProbe('sha256:0123456789abcdef')
    const refused = await local('select', 'add an item to the cart', '--library', 'shop')
    expect(refused.code).not.toBe(0)
    expect(refused.stderr).toContain('INDEX_MISMATCH')
    expect(refused.stderr).toContain(`tokenizer probe sha256:0123456789abcdef vs ${probe}`)
    expect(refused.stderr).toContain(`Rebuild it with: toolsel index ${file} --name shop.`)
    expect((await local('index', file, '--name', 'shop')).stderr).not.toContain('Unchanged')
    expect(JSON.parse(await readFile(path, 'utf8')).retrievers.bm25.tokenizerCoreProbe).toBe(probe)
    expect((await local('select', 'add an item to the cart', '--library', 'shop')).code).toBe(0)
  })
})

describe('toolsel libraries --server (a running service)', () => {
  it('lists, shows and deletes through the HTTP API with the admin key; says what a key needs', async () => {
    const { app } = await createTestApp({ config: { auth: { adminKey: 'admin-secret-key-123' } } })
    const server = serve({ fetch: app.fetch, port: 0, hostname: '127.0.0.1' })
    await new Promise((resolve) => server.once('listening', resolve))
    const url = `http://127.0.0.1:${(server.address() as AddressInfo).port}`
    try {
      const remote = (key: string | undefined, ...argv: string[]) =>
        runCli([...argv, '--server', url, ...(key ? ['--api-key', key] : [])])
      const keyless = await remote(undefined, 'libraries', 'list')
      expect(keyless.code).toBe(1)
      expect(keyless.stderr).toContain('The service needs a key: set TOOLSEL_API_KEY')
      const listed = await remote('admin-secret-key-123', 'libraries', 'list', '--json')
      expect(JSON.parse(listed.stdout).libraries).toMatchObject([
        { name: 'sample', isDefault: true },
      ])
      const refused = await remote('admin-secret-key-123', 'libraries', 'delete', 'sample')
      expect(refused.code).toBe(2)
      expect(refused.stderr).toContain("is the default library and can't be deleted")
      const missing = await remote('admin-secret-key-123', 'libraries', 'show', 'nope')
      expect(missing.stderr).toContain('error [UNKNOWN_LIBRARY]')
      const both = await runCli(['libraries', 'list', '--server', url, '--index-dir', indexDir])
      expect(both.stderr).toContain('--server and --index-dir name two different places')
    } finally {
      await new Promise((resolve) => server.close(resolve))
    }
  })
})

describe('toolsel libraries --server with a key no Authorization header carries', () => {
  it('is an INVALID_INPUT naming TOOLSEL_API_KEY, not quoting it, before any request', async () => {
    // Round 55's client check threw a TypeError out of the command: INTERNAL and a stack trace.
    for (const key of ['h\u00e9llo-h\u00e9llo-h\u00e9llo-1', 'secret key-0123456789']) {
      const ways: { argv: string[]; env: Record<string, string> }[] = [
        { argv: [], env: { TOOLSEL_API_KEY: key } },
        { argv: ['--api-key', key], env: {} },
      ]
      for (const given of ways) {
        // Port 9 (discard): nothing is asked of it before the key is refused.
        const run = await runCli(
          ['libraries', 'list', '--server', 'http://127.0.0.1:9', ...given.argv],
          given.env,
        )
        expect(run.code).toBe(2)
        expect(run.stderr).toMatch(
          /^error \[INVALID_INPUT\]: The API key \(--api-key or TOOLSEL_API_KEY\)/,
        )
        expect(run.stderr).toContain('visible ASCII')
        expect(run.stderr).not.toContain(key)
        expect(run.stderr).not.toContain('    at ')
      }
    }
  })
})

function configWithDefault(name: string): Promise<string> {
  return configFile({ library: { default: name } })
}

async function configFile(settings: object): Promise<string> {
  const path = join(await mkdtemp(join(tmpdir(), 'toolsel-cli-config-')), 'config.json')
  await writeFile(path, JSON.stringify(settings))
  return path
}

describe('toolsel index: counts of one', () => {
  it('says "1 tool" for a one-tool file, not "1 tools"', async () => {
    const file = join(indexDir, 'one.json')
    const tool = { name: 'get_weather', description: 'The weather of a city', parameters: {} }
    await writeFile(file, JSON.stringify([{ type: 'function', function: tool }]))
    const built = await local('index', file, '--name', 'one')
    expect(built.code, built.stderr).toBe(0)
    expect(built.stderr).toContain('Imported 1 tool (openai) from ')
    expect(built.stderr).toContain(`Indexing one: 1 tool written to ${join(indexDir, 'one')} (`)
    const again = await local('index', file, '--name', 'one')
    expect(again.stderr).toContain(
      `Unchanged: ${join(indexDir, 'one')} already holds this 1 tool (`,
    )
  })
})
