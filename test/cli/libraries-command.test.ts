import { mkdtemp, readdir, writeFile } from 'node:fs/promises'
import type { AddressInfo } from 'node:net'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { serve } from '@hono/node-server'
import { beforeEach, describe, expect, it } from 'vitest'
import { createTestApp } from '../server/test-service.ts'
import { runCli } from './run-cli.ts'

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
    expect(await readdir(indexDir)).toEqual(['fns'])
  })

  it('says what it takes: an action, one name, a known action', async () => {
    expect((await runCli(['libraries'])).stderr).toContain('Name an action: toolsel libraries list')
    expect((await runCli(['libraries', 'remove', 'x'])).stderr).toContain('Unknown action "remove"')
    expect((await runCli(['libraries', 'show'])).stderr).toContain('takes one library name')
    expect((await runCli(['library', 'list'])).stderr).toContain('Did you mean "libraries"')
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
    const regex = await local('index', file, '--name', 'shop', '--retriever', 'bm25,regex')
    expect(regex.stderr).not.toContain('Unchanged')
    const shown = JSON.parse((await local('libraries', 'show', 'shop', '--json')).stdout)
    expect(shown.retrievers).toEqual(['bm25', 'regex'])
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

async function configWithDefault(name: string): Promise<string> {
  const path = join(await mkdtemp(join(tmpdir(), 'toolsel-cli-config-')), 'config.json')
  await writeFile(path, JSON.stringify({ library: { default: name } }))
  return path
}
