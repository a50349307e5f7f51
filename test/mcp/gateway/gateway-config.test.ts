import { existsSync, mkdtempSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { describe, expect, it } from 'vitest'
import { parseConfig } from '../../../src/config/load-config.ts'
import { readGatewayFile } from '../../../src/mcp/gateway/read-gateway-file.ts'
import { runCli } from '../../cli/run-cli.ts'
import { useUpstreamConnections } from '../../helpers/upstream-connections.ts'

const dir = mkdtempSync(join(tmpdir(), 'toolsel-gateway-config-'))
const write = (name: string, value: unknown) => {
  const file = join(dir, name)
  writeFileSync(file, typeof value === 'string' ? value : JSON.stringify(value))
  return file
}

describe('gateway config', () => {
  it('accepts stdio and HTTP servers and fills in the defaults', () => {
    const { gateway } = parseConfig({
      gateway: {
        servers: {
          github: { command: 'npx', args: ['-y', '@modelcontextprotocol/server-github'] },
          linear: { url: 'https://mcp.linear.app/mcp', headers: { Authorization: 'Bearer x' } },
        },
      },
    })
    expect(gateway.servers.github).toEqual({
      command: 'npx',
      args: ['-y', '@modelcontextprotocol/server-github'],
      env: {},
      tags: [],
      enabled: true,
    })
    expect(gateway).toMatchObject({ library: 'gateway', default: true, syncIntervalMs: 300_000 })
  })

  it('refuses a gateway.library that is no library name, naming the key, before anything starts', async () => {
    // Was: accepted; serve listened, loaded its libraries, then exited with 'error [INVALID_INPUT]:
    // Library name "my gateway" is invalid…', naming no setting.
    for (const library of ['my gateway', '', '../x', 'x'.repeat(65)])
      expect(() => parseConfig({ gateway: { library } })).toThrow(
        /gateway\.library.*a library name is 1-64 letters/,
      )
    expect(parseConfig({ gateway: { library: 'mcp.tools-1' } }).gateway.library).toBe('mcp.tools-1')
    const file = write('bad-library.json', { gateway: { library: 'my gateway' } })
    const { code, stderr } = await runCli(['serve', '--config', file, '--print-config'])
    expect(code).toBe(2)
    expect(stderr).toContain('Invalid config value at "gateway.library"')
  })

  it('names the key at fault in a stdio or HTTP entry, and an entry that is both', () => {
    // Was: 'expected {"command", …} for a stdio server or {"url", …}', naming no key.
    const error = (server: unknown) => () => parseConfig({ gateway: { servers: { x: server } } })
    expect(error({ command: 'npx', env: { PORT: 8080 } })).toThrow(
      'Invalid config value at "gateway.servers.x" (from defaults): at "env.PORT": Invalid input: expected string, received number (a stdio server:',
    )
    expect(error({ command: 'npx', args: '-y server' })).toThrow(/at "args": .*expected array/)
    expect(error({ url: 'https://h/mcp', headers: { 'X-Retries': 3 } })).toThrow(
      /at "headers\.X-Retries": .*expected string.*\(an HTTP server/,
    )
    expect(error({ command: 'npx', url: 'https://h/mcp' })).toThrow(
      /both "command" and "url": a server is one or the other/,
    )
  })

  it('rejects a server that is neither stdio nor HTTP, saying what is expected', () => {
    expect(() => parseConfig({ gateway: { servers: { x: { cmd: 'node' } } } })).toThrow(
      /gateway\.servers\.x.*"command".*"url"/,
    )
  })

  it('names a misspelt server key and the file it came from (serve and mcp)', async () => {
    // Was: '… (from command-line flag): expected {"command", …}', naming neither.
    const file = write('misspelt.json', { mcpServers: { notes: { comand: 'node' } } })
    for (const command of ['serve', 'mcp']) {
      const argv = [command, '--gateway-config', file, '--print-config']
      const { code, stderr } = await runCli(command === 'mcp' ? [...argv, '--stdio'] : argv)
      expect(code).toBe(2)
      expect(stderr).toContain(
        `Invalid config value at "gateway.servers.notes" (from gateway config ${file}): unknown key "comand": expected {"command"`,
      )
    }
  })

  it('refuses a header value HTTP can\'t send (README\'s "Bearer …" as written), not echoing it', async () => {
    // Was: the server connected and went down with "Cannot convert argument to a ByteString
    // because the character at index 7 has a value of 8230…", retried forever.
    for (const value of ['Bearer …', 'Bearer secret-x\r\nX-Other: y']) {
      const file = write('headers.json', {
        gateway: {
          servers: {
            linear: { url: 'https://mcp.linear.app/mcp', headers: { Authorization: value } },
          },
        },
      })
      const { code, stderr } = await runCli(['serve', '--config', file, '--print-config'])
      expect(code).toBe(2)
      expect(stderr).toContain(
        `Invalid config value at "gateway.servers.linear.headers.Authorization" (from config file ${file}): a header value is Latin-1 text without line breaks`,
      )
      expect(stderr).not.toContain('secret-x')
    }
    const latin1 = parseConfig({
      gateway: {
        servers: { x: { url: 'https://x.example/mcp', headers: { 'X-Name': 'café\tok' } } },
      },
    })
    expect(latin1.gateway.servers.x).toMatchObject({ headers: { 'X-Name': 'café\tok' } })
  })

  it('refuses a header name that is no RFC 9110 token, naming its key up to the bad character', async () => {
    // Was: accepted; the server then went down at its first request with fetch's "Headers.append:
    // ... is an invalid header name", retried forever; a whole "Authorization: Bearer …" line
    // given as the name would be echoed in a path.
    const cases: Array<[string, string, string]> = [
      ['Authorization: Bearer secret-x', 'Authorization…', 'character 14 is ":" (a whole'],
      ['X Api Key', 'X…', 'character 2 is a space'],
      ['Clé', 'Cl…', 'character 3 is "é"'],
      ['X-Key\n', 'X-Key…', 'character 6 is control character U+000A'],
      ['', '…', 'this one is empty'],
    ]
    for (const [name, shown, reason] of cases) {
      const file = write('header-names.json', {
        gateway: {
          servers: { linear: { url: 'https://mcp.linear.app/mcp', headers: { [name]: 'v' } } },
        },
      })
      const { code, stderr } = await runCli(['serve', '--config', file, '--print-config'])
      expect(code).toBe(2)
      expect(stderr).toContain(
        `Invalid config value at "gateway.servers.linear.headers.${shown}" (from config file ${file}): a header name is an RFC 9110 token: letters, digits and !#$%&'*+-.^_\`|~ only; ${reason}`,
      )
      expect(stderr).not.toContain('secret-x')
    }
    const tokens = parseConfig({
      gateway: {
        servers: {
          x: { url: 'https://x.example/mcp', headers: { "X-A!#$%&'*+-.^_`|~1": 'v' } },
        },
      },
    })
    expect(Object.keys((tokens.gateway.servers.x as { headers: object }).headers)).toEqual([
      "X-A!#$%&'*+-.^_`|~1",
    ])
  })

  it('rejects server names with dots: ids are server.tool', () => {
    expect(() =>
      parseConfig({ gateway: { servers: { 'my.server': { command: 'node' } } } }),
    ).toThrow(/letters, digits/)
  })

  it('says that a server name is at most 64 characters when one is longer', () => {
    const servers = (name: string) => ({ gateway: { servers: { [name]: { command: 'node' } } } })
    expect(Object.keys(parseConfig(servers('s'.repeat(64))).gateway.servers)).toEqual([
      's'.repeat(64),
    ])
    // Was: "server names use letters, digits, "_" and "-" only", which a 65-letter name does.
    expect(() => parseConfig(servers('s'.repeat(65)))).toThrow(
      /a server name is 1-64 letters, digits, "_" or "-", starting with a letter or digit \(no dots/,
    )
  })

  it('reads a client config in the mcpServers shape, dropping the transport type', async () => {
    const file = write('claude.json', {
      mcpServers: {
        files: { type: 'stdio', command: 'node', args: ['files.js'] },
        remote: { type: 'http', url: 'https://example.com/mcp' },
      },
    })
    const layer = await readGatewayFile(file)
    expect(layer).toEqual({
      servers: {
        files: { command: 'node', args: ['files.js'] },
        remote: { url: 'https://example.com/mcp' },
      },
    })
    expect(() => parseConfig({ gateway: layer })).not.toThrow()
  })

  it('reads a gateway section as it is, and names the file when it is not JSON', async () => {
    const section = { servers: { a: { command: 'node' } }, syncIntervalMs: 0 }
    expect(await readGatewayFile(write('gateway.json', section))).toEqual(section)
    const bad = write('bad.json', '{\n  "mcpServers": {\n    "a": {"command": "node",}\n  }\n}')
    await expect(readGatewayFile(bad)).rejects.toMatchObject({
      code: 'INVALID_CONFIG',
      // Where, as a line and column (V8 gives an offset at most).
      message: expect.stringContaining(`Gateway config ${bad} is not valid JSON (line 3, column `),
    })
    // Said as the config file says it (readConfigObject), not as "could not be read" (which is
    // what a missing file gets, below): a YAML file, or JSON that holds no object.
    const yaml = write('gateway.yaml', 'mcpServers:\n  a:\n    command: node\n')
    const yamlError = await readGatewayFile(yaml).catch((error: Error) => error)
    expect((yamlError as Error).message).toMatch(
      /^Gateway config .* is not valid JSON \(.*\); the gateway config is JSON, not YAML\.$/,
    )
    const array = write('array.json', [{ command: 'node' }])
    await expect(readGatewayFile(array)).rejects.toMatchObject({
      code: 'INVALID_CONFIG',
      message: `Gateway config ${array} is not a JSON object: it holds an array; write the servers as {"mcpServers": {"files": {"command": "npx", …}}}.`,
    })
    const missing = join(dir, 'missing.json')
    await expect(readGatewayFile(missing)).rejects.toMatchObject({
      message: `Gateway config ${missing} could not be read: no such file or directory.`,
    })
  })

  it('names what it expected when the file is neither a client config nor a gateway section', async () => {
    const unrelated = write('unrelated.json', { foo: 1 })
    await expect(readGatewayFile(unrelated)).rejects.toMatchObject({
      code: 'INVALID_CONFIG',
      message: expect.stringContaining('has neither "mcpServers"'),
    })
    const whole = write('toolsel.json', { gateway: { servers: { a: { command: 'node' } } } })
    await expect(readGatewayFile(whole)).rejects.toMatchObject({
      message: expect.stringContaining('is given with --config'),
    })
  })
})

describe('--gateway-config without upstream servers', () => {
  it('warns that there is no gateway (serve and mcp), and stays quiet with a server', async () => {
    const empty = write('empty-clients.json', { mcpServers: {} })
    const disabled = write('disabled.json', {
      servers: { notes: { command: 'node', enabled: false } },
    })
    const one = write('one.json', { mcpServers: { notes: { command: 'node' } } })
    for (const command of ['serve', 'mcp']) {
      const started = await runCli([command, '--gateway-config', empty, '--print-config'])
      expect(started.code).toBe(0)
      // It started with no upstreams and said nothing.
      expect(started.stderr).toContain(
        `Gateway config ${empty} lists no servers: running without a gateway (no "gateway" library, call_tool or list_servers).`,
      )
    }
    const off = await runCli(['serve', '--gateway-config', disabled, '--print-config'])
    expect(off.stderr).toContain('disables all 1 of its servers')
    const quiet = await runCli(['serve', '--gateway-config', one, '--print-config'])
    expect(quiet.stderr).not.toContain('running without a gateway')
  })
})

// Round 30 (gw3): a gateway file is often generated or copied from the internet (an
// `mcpServers` block from a README): read as input that may be hostile, not as the operator's own.
describe('a gateway file as untrusted input', () => {
  const upstreamConnection = useUpstreamConnections()

  const SECRET = 'SECRET-0123456789'
  const refused = async (file: string) => {
    const { code, stderr } = await runCli(['serve', '--gateway-config', file, '--print-config'])
    expect(code).toBe(2)
    return stderr
  }

  it('--print-config shows no env or header value, URL credential or credential flag value', async () => {
    const file = write('secrets.json', {
      mcpServers: {
        local: {
          command: 'node',
          args: ['server.js', '--token', `${SECRET}-A`, `--api-key=${SECRET}-B`, '--port', '3000'],
          env: { GITHUB_TOKEN: `${SECRET}-C` },
        },
        remote: {
          url: `https://ann:${SECRET}-D@mcp.example.com/mcp?key=${SECRET}-E`,
          headers: { Authorization: `Bearer ${SECRET}-F` },
        },
      },
    })
    const { code, stdout } = await runCli(['serve', '--gateway-config', file, '--print-config'])
    expect(code).toBe(0)
    expect(stdout).not.toContain(SECRET)
    const { servers } = (JSON.parse(stdout) as { gateway: { servers: Record<string, object> } })
      .gateway
    expect(servers.local).toMatchObject({
      args: ['server.js', '--token', '***', '--api-key=***', '--port', '3000'],
      env: { GITHUB_TOKEN: '***' },
    })
    expect(servers.remote).toMatchObject({
      url: 'https://mcp.example.com/mcp?***',
      headers: { Authorization: '***' },
    })
  })

  it('refuses a server name given twice, naming it and where (JSON keeps only the last)', async () => {
    const file = write(
      'twice.json',
      '{"mcpServers": {\n  "files": {"command": "node", "args": ["reviewed.js"]},\n  "files": {"command": "node", "args": ["other.js"]}\n}}',
    )
    expect(await refused(file)).toContain(
      `Gateway config ${file} has "mcpServers.files" twice (the second at line 3, column 3): JSON keeps only the last`,
    )
  })

  it('shows a refused server name escaped and cut, not whole', async () => {
    const name = `a\u001b[31m${'k'.repeat(100_000)}`
    const stderr = await refused(
      write('long-name.json', { mcpServers: { [name]: { command: 'node' } } }),
    )
    // Was: the whole 100,000-character name in the error line.
    expect(stderr.length).toBeLessThan(400)
    expect(stderr).not.toContain('\u001b')
    expect(stderr).toContain(`"gateway.servers.a\\x1b[31m${'k'.repeat(58)}…"`)
  })

  it('refuses more than 1,000 servers (each one a process or connection, all started at once)', async () => {
    const servers = Object.fromEntries(
      Array.from({ length: 1001 }, (_, i) => [`s${i}`, { command: 'node' }]),
    )
    expect(await refused(write('many.json', { mcpServers: servers }))).toContain(
      '"gateway.servers" (from gateway config',
    )
    expect(await refused(write('many.json', { mcpServers: servers }))).toContain(
      '1,001 servers listed; at most 1,000.',
    )
  })

  it('refuses URLs other than http: and https:, without echoing them', async () => {
    for (const url of [
      'file:///etc/passwd',
      'data:application/json,{}',
      'ftp://x.example/mcp',
      'javascript:alert(1)',
      `ws://ann:${SECRET}@x.example/mcp`,
    ]) {
      const stderr = await refused(write('scheme.json', { mcpServers: { a: { url } } }))
      expect(stderr).toContain('"gateway.servers.a.url" (from gateway config /tmp')
      expect(stderr).toContain('an http: or https: URL is expected')
      expect(stderr).not.toContain(SECRET)
    }
  })

  it('spawns the command without a shell: metacharacters are part of its name or arguments', async () => {
    const marker = join(dir, 'shell-ran')
    const upstream = upstreamConnection('sh', {
      servers: { sh: { command: `touch ${marker}; node`, args: [`$(touch ${marker})`] } },
      reconnectInitialMs: 60_000,
    })
    await upstream.connect()
    expect(upstream.state()).toMatchObject({
      status: 'down',
      lastError: expect.stringContaining('ENOENT'),
    })
    expect(existsSync(marker)).toBe(false)
  })
})
