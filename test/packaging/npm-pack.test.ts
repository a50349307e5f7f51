/**
 * What a user who installs the npm package gets. `npm pack` runs on a copy of this checkout's
 * sources (so it runs `prepare`, the build, as a publish would, without touching this checkout's
 * dist/), the tarball is unpacked where `npm install` puts a package, and then plain Node (no
 * tsx, no loader) runs the packaged CLI (serve, index, select, libraries, mcp --stdio, bench) and
 * imports `toolsel/client`, and tsc type-checks a consumer against the shipped declarations. No
 * network: the package's dependencies are links to this checkout's node_modules, only those
 * `npm install` brings (the non-dev packages of package-lock.json), so that code in dist/ that
 * needs a devDependency fails here as it would for a user.
 */
import { execFile } from 'node:child_process'
import {
  cp,
  mkdir,
  mkdtemp,
  readdir,
  readFile,
  rename,
  rm,
  stat,
  symlink,
  writeFile,
} from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { dirname, join } from 'node:path'
import { promisify } from 'node:util'
import { Client } from '@modelcontextprotocol/sdk/client/index.js'
import { StdioClientTransport } from '@modelcontextprotocol/sdk/client/stdio.js'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { ROOT, startServe } from '../helpers/start-serve.ts'

const run = promisify(execFile)
/** Data files the package ships besides bin/ and dist/ (package.json `files`). */
const SHIPPED_DATA = ['bench/results/default/report.html', 'test/fixtures/demo-queries.jsonl']
/** Without npm's own variables (`npm test` sets some) and without a loader in NODE_OPTIONS. */
const ENV = Object.fromEntries(
  Object.entries({ ...process.env, NODE_OPTIONS: '', npm_config_update_notifier: 'false' }).filter(
    ([key]) => !/^npm_(?!config_update_notifier$)/i.test(key),
  ),
)
let work: string
let app: string
let tarball: string

beforeAll(async () => {
  work = await mkdtemp(join(tmpdir(), 'toolsel-pack-'))
  const pkg = join(work, 'pkg')
  await mkdir(pkg)
  for (const entry of ['package.json', 'README.md', 'tsconfig.json', 'tsconfig.build.json']) {
    await cp(join(ROOT, entry), join(pkg, entry))
  }
  for (const dir of ['bin', 'src', 'scripts']) {
    await cp(join(ROOT, dir), join(pkg, dir), { recursive: true })
  }
  for (const file of SHIPPED_DATA) {
    await cp(join(ROOT, file), join(pkg, file), { recursive: true })
  }
  await symlink(join(ROOT, 'node_modules'), join(pkg, 'node_modules'), 'dir')
  await run('npm', ['pack', '--pack-destination', work], { cwd: pkg, env: ENV, timeout: 240_000 })
  tarball = join(
    work,
    (await readdir(work)).find((name) => name.endsWith('.tgz'))!,
  )

  app = join(work, 'app')
  const installed = join(app, 'node_modules', 'toolsel')
  await mkdir(installed, { recursive: true })
  await run('tar', ['-xzf', tarball, '-C', installed, '--strip-components=1'])
  // Besides the package's closure, the consumer's own: @types/node for tsc (`types: ['node']`)
  // and the SDK a README example imports.
  for (const name of new Set([...(await installedPackages()), '@types/node', 'openai'])) {
    await mkdir(dirname(join(app, 'node_modules', name)), { recursive: true })
    await symlink(join(ROOT, 'node_modules', name), join(app, 'node_modules', name), 'dir')
  }
  await writeFile(join(app, 'package.json'), '{ "private": true, "type": "module" }\n')
}, 300_000)

/**
 * The packages `npm install toolsel` puts in node_modules (top level): package-lock.json's entries
 * that are not dev-only, those of another platform (optional, absent here) left out.
 */
async function installedPackages(): Promise<string[]> {
  const lock = JSON.parse(await readFile(join(ROOT, 'package-lock.json'), 'utf8')) as {
    packages: Record<string, { dev?: boolean }>
  }
  const names: string[] = []
  for (const [path, entry] of Object.entries(lock.packages)) {
    const name = /^node_modules\/((?:@[^/]+\/)?[^/]+)$/.exec(path)?.[1]
    if (name === undefined || entry.dev) continue
    if (
      await stat(join(ROOT, path)).then(
        () => true,
        () => false,
      )
    )
      names.push(name)
  }
  return names
}

afterAll(async () => {
  if (work) await rm(work, { recursive: true, force: true })
})

// The tests run side by side (each mostly waits on its children: a server, the CLI, tsc): none
// writes what another reads. The second moves app/node_modules/undici away for a moment; only
// its own client (the `ca` option) loads undici: the CLI and tsc (its .d.ts only names it in a
// comment) do not.
describe('the npm package, installed from its tarball', { concurrent: true }, () => {
  it('ships the build (JavaScript and declarations) and the CLI, not the sources or tests', async () => {
    const { stdout } = await run('tar', ['-tzf', tarball])
    const files = stdout.split('\n').filter(Boolean)
    expect(files).toEqual(
      expect.arrayContaining([
        'package/package.json',
        'package/bin/toolsel.mjs',
        'package/dist/main.js',
        'package/dist/build-info.json',
        'package/dist/client/index.js',
        'package/dist/client/index.d.ts',
        'package/dist/library/demo/servers/weather.json',
      ]),
    )
    const outside = files.filter((file) => !/^package\/(dist|bin)\//.test(file))
    expect(outside.sort()).toEqual(
      ['README.md', 'package.json', ...SHIPPED_DATA].map((file) => `package/${file}`).sort(),
    )
  })

  it('runs its CLI and imports toolsel/client with plain node (ESM and require)', async () => {
    const serve = await startServe([], {
      bin: 'node_modules/toolsel/bin/toolsel.mjs',
      cwd: app,
      // Uploads imported in the import worker thread: its module is found in dist/ as .js.
      env: { TOOLSEL_IMPORT_WORKER_MIN_CHARS: '0' },
    })
    try {
      const put = await fetch(`${serve.url}/v1/libraries/parcels`, {
        method: 'PUT',
        headers: { 'content-type': 'application/json' },
        body: JSON.stringify([{ name: 'lookup_parcel', description: 'Track a parcel.' }]),
      })
      expect(put.status, await put.clone().text()).toBe(201)
      expect((await put.json()).import.tools).toBe(1)
      await writeFile(
        join(app, 'client.mjs'),
        [
          "import { ToolselClient, ToolselClientError } from 'toolsel/client'",
          'const client = new ToolselClient({ baseUrl: process.argv[2] })',
          "const { tools } = await client.select('What is the weather in Paris tomorrow, and email the forecast to Ann')",
          "console.log('selected', tools.map((tool) => tool.id).join(','))",
          "await client.getLibrary('nope').catch((error) => {",
          '  console.log(error instanceof ToolselClientError, error.code, error.status)',
          '})',
          "console.log('resolved', import.meta.resolve('toolsel/client'))",
          // `ca` loads dist/client/https-fetch.js and the undici package: a dependency, not dev.
          "import { rootCertificates } from 'node:tls'",
          "const ca = new ToolselClient({ baseUrl: 'https://127.0.0.1:2', ca: rootCertificates[0] })",
          "await ca.health().catch((error) => console.log('with ca', error.code, error.message))",
        ].join('\n'),
      )
      const esm = await run(process.execPath, ['client.mjs', serve.url], { cwd: app, env: ENV })
      expect(esm.stdout).toContain('selected weather.get_weather_forecast,mail.send_email')
      expect(esm.stdout).toContain('true UNKNOWN_LIBRARY 404')
      expect(esm.stdout).toContain('resolved file://')
      expect(esm.stdout).toContain('/node_modules/toolsel/dist/client/index.js')
      expect(esm.stdout).toMatch(
        /^with ca NETWORK GET https:\/\/127.0.0.1:2\/healthz failed: fetch failed: /m,
      )
      expect(serve.logs()).toContain('node_modules/toolsel/dist/library/demo')
      // The playground's report page falls back to the shipped baseline report.
      const report = await fetch(`${serve.url}/ui/report`)
      expect(report.status).toBe(200)
      expect(await report.text()).toContain('<svg')

      await writeFile(
        join(app, 'client.cjs'),
        "const { ToolselClient } = require('toolsel/client')\nconsole.log(typeof ToolselClient, require.resolve('toolsel/client'))\n",
      )
      // Without undici (dependencies not installed), ca says what is missing, not "is toolsel serving".
      const undici = join(app, 'node_modules', 'undici')
      await rename(undici, `${undici}.away`)
      try {
        const without = await run(process.execPath, ['client.mjs', serve.url], {
          cwd: app,
          env: ENV,
        })
        expect(without.stdout).toMatch(
          /^with ca NETWORK ToolselClient: the ca option needs the undici package, a dependency of toolsel, which could not be loaded \(Cannot find package 'undici'.*\): install toolsel's dependencies$/m,
        )
      } finally {
        await rename(`${undici}.away`, undici)
      }
      const cjs = await run(process.execPath, ['client.cjs'], { cwd: app, env: ENV })
      expect(cjs.stdout).toMatch(/^function .*node_modules\/toolsel\/dist\/client\/index\.js$/m)
    } finally {
      await serve.stop()
    }
  }, 120_000)

  it('indexes a tool file, selects from it, lists it and serves it over MCP stdio (README commands)', async () => {
    const toolsel = (...args: string[]) =>
      run(process.execPath, ['node_modules/toolsel/bin/toolsel.mjs', ...args], {
        cwd: app,
        env: { ...ENV, TOOLSEL_INDEX_DIR: '', TOOLSEL_LIBRARY: '' },
        timeout: 120_000,
      })
    await writeFile(
      join(app, 'tools.json'),
      JSON.stringify([
        { name: 'send_sms', description: 'Send a text message (SMS) to a phone number.' },
        { name: 'get_weather', description: 'Get the weather forecast for a city.' },
      ]),
    )
    const indexed = await toolsel('index', 'tools.json', '--name', 'mytools')
    expect(indexed.stderr).toContain('2 tools written to indexes/mytools')
    const selected = await toolsel(
      'select',
      "text my mom that I'm late",
      '--library',
      'mytools',
      '--json',
    )
    expect(JSON.parse(selected.stdout).tools.map((tool: { id: string }) => tool.id)).toEqual([
      'send_sms',
    ])
    expect((await toolsel('libraries', 'list')).stdout).toMatch(/^mytools\s+2\s+bm25\s/m)

    const client = new Client({ name: 'npm-pack-test', version: '1' })
    await client.connect(
      new StdioClientTransport({
        command: process.execPath,
        args: ['node_modules/toolsel/bin/toolsel.mjs', 'mcp', '--stdio', '--library', 'mytools'],
        cwd: app,
        env: { ...(ENV as Record<string, string>), TOOLSEL_INDEX_DIR: '' },
        stderr: 'ignore',
      }),
    )
    try {
      const { tools } = await client.listTools()
      expect(tools.map((tool) => tool.name)).toContain('search_tools')
      const found = await client.callTool({
        name: 'search_tools',
        arguments: { query: 'weather tomorrow', k: 1 },
      })
      expect(JSON.stringify(found.structuredContent)).toContain('get_weather')
    } finally {
      await client.close()
    }
  }, 180_000)

  it('runs the demo bench suite from the shipped queries', async () => {
    const out = join(work, 'bench-demo')
    const { stdout } = await run(
      process.execPath,
      [
        'node_modules/toolsel/bin/toolsel.mjs',
        'bench',
        '--suite',
        'demo',
        '--out',
        out,
        '--compact',
      ],
      { cwd: app, env: ENV, timeout: 120_000 },
    )
    expect(stdout).toMatch(/demo/)
    const summary = JSON.parse(await readFile(join(out, 'report.json'), 'utf8'))
    expect(JSON.stringify(summary)).toContain('demo-queries')
  }, 120_000)

  it('gives a TypeScript consumer the client types (tsc, strict, NodeNext), the README examples too', async () => {
    // The README's TypeScript examples as the package ships them, each a module of its own; one
    // that goes on from an earlier block gets its `toolsel` declared.
    const readme = await readFile(join(app, 'node_modules', 'toolsel', 'README.md'), 'utf8')
    const examples = [...readme.matchAll(/^```ts\n([\s\S]*?)^```/gm)].map(([, code], index) => {
      const declared = /\bconst toolsel\b/.test(code)
      const preamble = declared
        ? ''
        : "import type { ToolselClient as ReadmeClient } from 'toolsel/client'\ndeclare const toolsel: ReadmeClient\n"
      return { file: `readme-${index}.ts`, text: `${preamble}${code}export {}\n` }
    })
    expect(examples.length).toBeGreaterThanOrEqual(2)
    for (const { file, text } of examples) await writeFile(join(app, file), text)
    await writeFile(
      join(app, 'tsconfig.json'),
      JSON.stringify({
        compilerOptions: {
          target: 'ES2022',
          module: 'nodenext',
          moduleResolution: 'nodenext',
          strict: true,
          noEmit: true,
          skipLibCheck: true,
          types: ['node'],
        },
        files: ['consumer.ts', ...examples.map(({ file }) => file)],
      }),
    )
    // The @ts-expect-error lines fail the check if the types came out as `any`.
    await writeFile(
      join(app, 'consumer.ts'),
      [
        "import { ToolselClient, ToolselClientError, type SelectToolsResponse } from 'toolsel/client'",
        "const client = new ToolselClient({ baseUrl: 'http://127.0.0.1:8080', timeoutMs: 1000 })",
        "const answer: SelectToolsResponse = await client.select('email Ann')",
        'const id: string = answer.tools[0].id',
        '// @ts-expect-error: an instruction is a string',
        'await client.select(42)',
        '// @ts-expect-error: no such field',
        'console.log(answer.toolz)',
        "const code: ToolselClientError['code'] = 'UNKNOWN_LIBRARY'",
        '// @ts-expect-error: not an error code',
        "const wrong: ToolselClientError['code'] = 'NO_SUCH_CODE'",
        'console.log(id, code, wrong)',
        'export {}',
      ].join('\n'),
    )
    const tsc = join(ROOT, 'node_modules', 'typescript', 'bin', 'tsc')
    const result = await run(process.execPath, [tsc, '-p', app], { cwd: app, env: ENV }).then(
      () => 'ok',
      (error: { stdout: string }) => error.stdout,
    )
    expect(result).toBe('ok')
  }, 120_000)
})
