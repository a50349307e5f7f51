import { readdir, readFile } from 'node:fs/promises'
import { describe, expect, it } from 'vitest'
import { ENV_VARS, OTHER_VARS, unknownEnvVarWarnings } from '../../src/config/env-vars.ts'
import { main } from '../../src/main.ts'

describe('environment variables', () => {
  it('README names every variable toolsel reads', async () => {
    const readme = await readFile(new URL('../../README.md', import.meta.url), 'utf8')
    const missing = Object.keys(ENV_VARS).filter((name) => !readme.includes(`\`${name}\``))
    expect(missing).toEqual([])
  })

  it('README names the TOOLSEL_ variables that are no setting and get no warning, the internal ones by prefix', async () => {
    const readme = await readFile(new URL('../../README.md', import.meta.url), 'utf8')
    const paragraph = readme.slice(readme.indexOf('Any other `TOOLSEL_` variable'))
    const named = paragraph.slice(0, paragraph.indexOf('gets a warning'))
    const unnamed = [...OTHER_VARS].filter(
      (name) =>
        !named.includes(`\`${name}\``) &&
        ![...named.matchAll(/`(TOOLSEL_\w+_)…`/g)].some(([, prefix]) => name.startsWith(prefix)),
    )
    expect(unnamed).toEqual([])
    expect(
      unknownEnvVarWarnings(Object.fromEntries([...OTHER_VARS].map((name) => [name, '1']))),
    ).toEqual([])
  })

  it("README lists each variable under the section of the key it sets, and in every key's own doc row", async () => {
    const readme = await readFile(new URL('../../README.md', import.meta.url), 'utf8')
    const list = readme.slice(readme.indexOf('environment variables (`src/config/env-vars.ts`'))
    const groups = [
      ...list
        .slice(0, list.indexOf('A bad value'))
        .matchAll(/((?:`[a-z]+`\/?)+):\s+((?:`TOOLSEL_\w+`(?:,\s+)?)+)/g),
    ]
    const placed: Record<string, string[]> = {}
    for (const [, sections, names] of groups) {
      for (const [, name] of names.matchAll(/`(TOOLSEL_\w+)`/g)) {
        placed[name] = [...sections.matchAll(/`([a-z]+)`/g)].map((match) => match[1])
      }
    }
    expect(Object.keys(placed).sort()).toEqual(Object.keys(ENV_VARS).sort())
    for (const [name, { path }] of Object.entries(ENV_VARS)) {
      expect({ name, section: path.split('.')[0] }).toEqual({
        name,
        section: expect.toBeOneOf(placed[name]),
      })
    }
    // docs/mcp.md's configuration tables: "Env `X`" in the row of the key X sets.
    const mcp = await readFile(new URL('../../docs/mcp.md', import.meta.url), 'utf8')
    const section = (heading: string) => mcp.slice(mcp.indexOf(heading)).split('\n\n')[1]
    for (const prefix of ['mcp', 'gateway']) {
      for (const row of section(`\`${prefix}\` section:`).split('\n')) {
        for (const [, name] of row.matchAll(/Env `(TOOLSEL_\w+)`/g)) {
          const key = row.match(/^\| `(\w+)`/)?.[1]
          expect({ name, path: `${prefix}.${key}` }).toEqual({ name, path: ENV_VARS[name]?.path })
        }
      }
    }
  })

  it("warns about no TOOLSEL_ variable the source reads by name (the tests' switches included)", async () => {
    const root = new URL('../../', import.meta.url)
    // test/setup: what a whole `npm test` reads, and so every command a test runs sees (was:
    // TOOLSEL_KEEP_TEST_TMP=1 npm test warned in each of them).
    const files = ['bin/toolsel.mjs']
    for (const dir of ['src/', 'test/setup/'])
      for (const name of await readdir(new URL(dir, root), { recursive: true }))
        if (/\.(ts|mjs)$/.test(name)) files.push(`${dir}${name}`)
    const read = new Set<string>()
    for (const file of files) {
      const text = await readFile(new URL(file, root), 'utf8')
      // By name: process.env.X, or a test switch through testSwitch('X') / testStopPoint('X').
      for (const [, name] of text.matchAll(
        /(?:process\.env\.|\btest(?:Switch|StopPoint)\(\s*')(TOOLSEL_\w+)/g,
      ))
        read.add(name)
    }
    expect(read.size).toBeGreaterThan(3)
    expect(read).toContain('TOOLSEL_KEEP_TEST_TMP')
    expect(unknownEnvVarWarnings(Object.fromEntries([...read].map((name) => [name, '1'])))).toEqual(
      [],
    )
  })

  it('warns about a TOOLSEL_ variable that is no setting, naming the closest one', () => {
    expect(
      unknownEnvVarWarnings({
        TOOLSEL_PROT: '9000',
        TOOLSEL_LIBARY: 'demo',
        TOOLSEL_SOMETHING_ELSE: '1',
        // Read elsewhere: the config file, bin/toolsel.mjs, the examples' clients.
        TOOLSEL_CONFIG: 'c.json',
        TOOLSEL_RUN_SOURCE: '1',
        TOOLSEL_URL: 'http://127.0.0.1:8080',
        TOOLSEL_API_KEY: 'k',
        TOOLSEL_PORT: '9000',
        PATH: '/bin',
      }),
    ).toEqual([
      'Environment variable TOOLSEL_LIBARY is not a toolsel setting and is ignored (did you mean TOOLSEL_LIBRARY?); README, "Command line", lists the variables.',
      'Environment variable TOOLSEL_PROT is not a toolsel setting and is ignored (did you mean TOOLSEL_PORT?); README, "Command line", lists the variables.',
      'Environment variable TOOLSEL_SOMETHING_ELSE is not a toolsel setting and is ignored; README, "Command line", lists the variables.',
    ])
  })

  it('a command prints the warning on stderr and runs', async () => {
    const stdout: string[] = []
    const stderr: string[] = []
    const code = await main(['select', '--print-config'], {
      stdout: (text) => stdout.push(text),
      stderr: (text) => stderr.push(text),
      env: { TOOLSEL_PROT: '9000' },
    })
    expect(code).toBe(0)
    expect(JSON.parse(stdout.join('')).server.port).toBe(8080)
    expect(stderr.join('')).toContain(
      'WARN Environment variable TOOLSEL_PROT is not a toolsel setting and is ignored (did you mean TOOLSEL_PORT?)',
    )
  })

  it('serve refuses a TOOLSEL_HOST that is no host name or IP address: INVALID_CONFIG, exit 2', async () => {
    const stderr: string[] = []
    const code = await main(['serve', '--library', 'none'], {
      stdout: () => {},
      stderr: (text) => stderr.push(text),
      env: { TOOLSEL_HOST: 'localhost:8080' },
    })
    expect(code).toBe(2)
    expect(stderr.join('')).toMatch(
      /error \[INVALID_CONFIG\]: Invalid config value at "server\.host" \(from environment variable TOOLSEL_HOST\): a host name/,
    )
  })
})
