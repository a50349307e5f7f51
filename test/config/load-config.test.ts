import { mkdtemp, writeFile } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { dirname, join } from 'node:path'
import { describe, expect, it } from 'vitest'
import { STAGE_IDS } from '../../src/component-id.ts'
import { PLANNERS, SELECTORS } from '../../src/components.ts'
import { resolveComponentPath } from '../../src/config/config-file-paths.ts'
import { loadConfig } from '../../src/config/load-config.ts'
import { bearerKey } from '../../src/server/auth/api-keys.ts'
import { readLearnedModelSync } from '../../src/learn/learned-model.ts'
import { defaultConfig, MAX_FALLBACK_ENTRIES } from '../../src/config/schema.ts'

async function configFile(content: unknown): Promise<string> {
  const dir = await mkdtemp(join(tmpdir(), 'toolsel-config-'))
  const file = join(dir, 'config.json')
  await writeFile(file, typeof content === 'string' ? content : JSON.stringify(content))
  return file
}

describe('loadConfig', () => {
  it('returns the defaults when nothing is set (K=15, tau=3 as in the paper)', async () => {
    const config = await loadConfig()
    expect(config).toEqual(defaultConfig())
    expect(config.retrieve.k).toBe(15)
    expect(config.retrieve.bm25.tau).toBe(3)
  })

  it('gives every parsed config its own nested default sections (no object shared between configs)', () => {
    const first = defaultConfig()
    const second = defaultConfig()
    first.retrieve.bm25.k1 = 9
    first.retrieve.dense.hnsw.efSearch = 7
    first.models.onnx.scoreBatchSize = 3
    expect(second.retrieve.bm25.k1).toBe(defaultConfig().retrieve.bm25.k1)
    expect(second.retrieve.dense.hnsw.efSearch).not.toBe(7)
    expect(second.models.onnx.scoreBatchSize).not.toBe(3)
    expect(second.retrieve.bm25).not.toBe(first.retrieve.bm25)
  })

  it('applies defaults < file < env < flags', async () => {
    const file = await configFile({ server: { port: 1000, host: '127.0.0.1' }, retrieve: { k: 5 } })
    const config = await loadConfig({
      file,
      env: { TOOLSEL_PORT: '2000', TOOLSEL_K: '7' },
      flags: { 'server.port': 3000 },
    })
    expect(config.server.port).toBe(3000)
    expect(config.server.host).toBe('127.0.0.1')
    expect(config.retrieve.k).toBe(7)
    expect(config.retrieve.bm25.k1).toBe(1.2)
  })

  it('sets the per-deployment model settings from the environment', async () => {
    const config = await loadConfig({
      env: {
        TOOLSEL_OPENAI_TIMEOUT_MS: '120000',
        TOOLSEL_OPENAI_MAX_RETRIES: '0',
        TOOLSEL_OPENAI_MAX_RETRIES_PER_REQUEST: '5',
        TOOLSEL_OPENAI_CHOICE_MODE: 'guided_choice',
        TOOLSEL_OPENAI_SEND_THINKING_SWITCH: 'false',
        TOOLSEL_ONNX_SCORE_BATCH_SIZE: '4',
      },
    })
    expect(config.models.openai).toMatchObject({
      timeoutMs: 120_000,
      maxRetries: 0,
      maxRetriesPerRequest: 5,
      choiceMode: 'guided_choice',
      sendThinkingSwitch: false,
    })
    expect(config.models.onnx.scoreBatchSize).toBe(4)
    expect((await loadConfig({ env: {} })).models.openai.maxRetriesPerRequest).toBe(2)
    await expect(
      loadConfig({ env: { TOOLSEL_OPENAI_MAX_RETRIES_PER_REQUEST: '101' } }),
    ).rejects.toMatchObject({ code: 'INVALID_CONFIG' })
    await expect(loadConfig({ env: { TOOLSEL_OPENAI_CHOICE_MODE: 'regex' } })).rejects.toThrow(
      /"models\.openai\.choiceMode" \(from environment variable TOOLSEL_OPENAI_CHOICE_MODE\)/,
    )
  })

  it('reads the file named by TOOLSEL_CONFIG', async () => {
    const file = await configFile({ plan: { planner: 'none' } })
    expect((await loadConfig({ env: { TOOLSEL_CONFIG: file } })).plan.planner).toBe('none')
  })

  it('names the environment variable holding a bad value', async () => {
    await expect(loadConfig({ env: { TOOLSEL_K: 'abc' } })).rejects.toMatchObject({
      code: 'INVALID_CONFIG',
      message: 'Environment variable TOOLSEL_K="abc" is not a valid integer (decimal digits).',
    })
    // A value of the right type that the schema refuses: named by its variable too, not only
    // its key (README: "A bad value is an error naming the variable").
    for (const [name, path] of [
      ['TOOLSEL_LOG_FORMAT', 'log.format'],
      ['TOOLSEL_PORT', 'server.port'],
      ['TOOLSEL_ACCESS_LOG', 'log.access'],
    ]) {
      const value = name === 'TOOLSEL_PORT' ? '70000' : 'xml'
      await expect(loadConfig({ env: { [name]: value } }), name).rejects.toMatchObject({
        message: expect.stringContaining(
          `Invalid config value at "${path}" (from environment variable ${name}): `,
        ),
      })
    }
  })

  it('takes decimal numbers only, an empty variable as unset, and quotes a bad value cut and escaped', async () => {
    // Number() read `0x10` as 16, `0b11` as 3 and `1e3` as 1000, and a value that is not what it
    // says (`9007199254740993` is 9007199254740992 as a double): each is refused now.
    for (const [name, value] of [
      ['TOOLSEL_PORT', '0x1f90'],
      ['TOOLSEL_OPENAI_TIMEOUT_MS', '0x10'],
      ['TOOLSEL_OPENAI_MAX_RETRIES', '0b11'],
      ['TOOLSEL_ONNX_SCORE_BATCH_SIZE', '1e3'],
      ['TOOLSEL_K', '9007199254740993'],
      ['TOOLSEL_TAU', '0x10'],
      ['TOOLSEL_TAU', 'Infinity'],
    ]) {
      const error = await loadConfig({ env: { [name]: value } }).catch((caught) => caught)
      expect(error.code, `${name}=${value}`).toBe('INVALID_CONFIG')
      expect(error.message).toMatch(
        new RegExp(`^Environment variable ${name}="${value}" is not a valid`),
      )
    }
    const config = await loadConfig({
      env: { TOOLSEL_OPENAI_TIMEOUT_MS: ' 45000 ', TOOLSEL_TAU: '2.5e0', TOOLSEL_K: '' },
    })
    expect(config.models.openai.timeoutMs).toBe(45_000)
    expect(config.retrieve.bm25.tau).toBe(2.5)
    expect(config.retrieve.k).toBe(defaultConfig().retrieve.k)
    // A 100,000-character value was quoted whole, its escape sequences raw.
    const long = await loadConfig({
      env: { TOOLSEL_PORT: `\u001b[2J${'9'.repeat(100_000)}` },
    }).catch((caught) => caught)
    expect(long.message).toBe(
      `Environment variable TOOLSEL_PORT="\\u001b[2J${'9'.repeat(60)}"… is not a valid integer (decimal digits).`,
    )
  })

  it('names the file and key of an unknown setting', async () => {
    const file = await configFile({ server: { prot: 1 } })
    await expect(loadConfig({ file })).rejects.toMatchObject({
      code: 'INVALID_CONFIG',
      message: `Unknown config key "server.prot" (from config file ${file}; did you mean "server.port"?).`,
    })
  })

  it('suggests the closest key of the section for a typo', async () => {
    const typo = async (content: unknown) => {
      const file = await configFile(content)
      const error = await loadConfig({ file }).catch((caught: unknown) => caught)
      return (error as Error).message.replace(file, 'c.json')
    }
    expect(await typo({ server: { prot: 1 } })).toBe(
      'Unknown config key "server.prot" (from config file c.json; did you mean "server.port"?).',
    )
    expect(await typo({ retreive: { k: 1 } })).toBe(
      'Unknown config key "retreive" (from config file c.json; did you mean "retrieve"?).',
    )
    expect(await typo({ mcp: { tokenizerdir: 'x' } })).toContain('did you mean "mcp.tokenizerDir"?')
    expect(await typo({ server: { x: 1 } })).toBe(
      'Unknown config key "server.x" (from config file c.json).',
    )
  })

  it('names the file of an unknown section, not "defaults"', async () => {
    // {"servr": {"port": 1}} was reported "Unknown config key "servr" (from defaults)."
    const file = await configFile({ servr: { port: 1 } })
    await expect(loadConfig({ file })).rejects.toMatchObject({
      code: 'INVALID_CONFIG',
      message: `Unknown config key "servr" (from config file ${file}; did you mean "server"?).`,
    })
    const empty = await configFile({ server: { tls: {} } })
    await expect(loadConfig({ file: empty })).rejects.toMatchObject({
      message: `Unknown config key "server.tls" (from config file ${empty}).`,
    })
    await expect(loadConfig({ file: empty, env: { TOOLSEL_PORT: '9000' } })).rejects.toMatchObject({
      message: `Unknown config key "server.tls" (from config file ${empty}).`,
    })
  })

  it('accepts registered retriever kinds only, naming the ones there are', async () => {
    const config = await loadConfig({ flags: { 'retrieve.retriever': 'hybrid' } })
    expect(config.retrieve.retriever).toBe('hybrid')
    await expect(loadConfig({ env: { TOOLSEL_RETRIEVER: 'splade' } })).rejects.toMatchObject({
      code: 'INVALID_CONFIG',
      message:
        'Invalid config value at "retrieve.retriever" (from environment variable TOOLSEL_RETRIEVER): no retriever kind "splade" (available: auto, bm25, dense, hybrid, regex).',
    })
  })

  it('refuses a short read key as a config error naming it, not a thrown ZodError', async () => {
    await expect(
      loadConfig({ env: { TOOLSEL_READ_KEYS: 'read-key-long-enough-1,short' } }),
    ).rejects.toMatchObject({
      code: 'INVALID_CONFIG',
      message:
        'Invalid config value at "auth.readKeys.1" (from environment variable TOOLSEL_READ_KEYS): API keys are 16 characters or more.',
    })
    const file = await configFile({ auth: { readKeys: [{ key: 'short', libraries: ['a'] }] } })
    await expect(loadConfig({ file })).rejects.toMatchObject({
      code: 'INVALID_CONFIG',
      message: expect.stringContaining('"auth.readKeys.0.key"'),
    })
  })

  it('refuses an API key no Authorization header can carry, never quoting it', async () => {
    // Before, each loaded and the server then answered every request 401: a key read from a
    // secrets file with its line break, one with a space, one past U+00FF or over 1,024
    // characters (bearerKey reads at most that many) could never be presented.
    const unsendable = 'API keys are visible ASCII characters only'
    const cases: Array<[Record<string, string>, string, string]> = [
      [{ TOOLSEL_ADMIN_KEY: 'admin-key-from-a-file\n' }, 'auth.adminKey', unsendable],
      [{ TOOLSEL_ADMIN_KEY: 'admin key with spaces' }, 'auth.adminKey', unsendable],
      [
        { TOOLSEL_READ_KEYS: 'read-key-long-enough-1,read-key-caf\u00e9-long-enough' },
        'auth.readKeys.1',
        unsendable,
      ],
      [
        { TOOLSEL_ADMIN_KEY: 'k'.repeat(1025) },
        'auth.adminKey',
        'API keys are at most 1,024 characters',
      ],
    ]
    for (const [env, path, message] of cases) {
      const error = await loadConfig({ env }).then(
        () => undefined,
        (thrown: unknown) => thrown as { code: string; message: string },
      )
      expect(error?.code).toBe('INVALID_CONFIG')
      expect(error?.message).toContain(`"${path}"`)
      expect(error?.message).toContain(message)
      expect(error?.message).not.toContain('from-a-file')
      expect(error?.message).not.toContain('kkkkkkkk')
    }
    const file = await configFile({
      auth: { readKeys: [{ key: 'read\tkey-long-enough', tags: ['a'] }] },
    })
    await expect(loadConfig({ file })).rejects.toMatchObject({
      code: 'INVALID_CONFIG',
      message: expect.stringContaining('"auth.readKeys.0.key"'),
    })
    // What a header does carry still loads: 1,024 visible ASCII characters (bearerKey reads them).
    const longest = 'k'.repeat(1024)
    const config = await loadConfig({
      env: { TOOLSEL_ADMIN_KEY: longest, TOOLSEL_READ_KEYS: 'read-key_~!#$%&*+./:=?@^|0123' },
    })
    expect(config.auth.adminKey).toBe(longest)
    expect(bearerKey(`Bearer ${longest}`)).toBe(longest)
    expect(bearerKey(`Bearer ${longest}k`)).toBeUndefined()
    expect(config.auth.readKeys[0].key).toBe('read-key_~!#$%&*+./:=?@^|0123')
  })

  it('refuses a model base URL fetch cannot request (user info, no http scheme), not quoting it', async () => {
    // Before, both loaded: the start-up key check only warned and every chat call fell back,
    // "Request cannot be constructed from a URL that includes credentials".
    for (const baseUrl of ['http://proxy:hunter2-secret@127.0.0.1:8000/v1', 'localhost:8000/v1']) {
      const error = await loadConfig({ env: { TOOLSEL_OPENAI_BASE_URL: baseUrl } }).then(
        () => undefined,
        (thrown: unknown) => thrown as { code: string; message: string },
      )
      expect(error?.code).toBe('INVALID_CONFIG')
      expect(error?.message).toMatch(
        /^Invalid config value at "models\.openai\.baseUrl" \(from environment variable TOOLSEL_OPENAI_BASE_URL\): an http:\/\/ or https:\/\/ URL without user info/,
      )
      expect(error?.message).not.toContain('hunter2')
    }
    const config = await loadConfig({
      env: { TOOLSEL_OPENAI_BASE_URL: 'https://api.example.com/v1' },
    })
    expect(config.models.openai.baseUrl).toBe('https://api.example.com/v1')
  })

  it('names the source of an out-of-range value', async () => {
    await expect(loadConfig({ flags: { 'retrieve.bm25.b': 2 } })).rejects.toMatchObject({
      code: 'INVALID_CONFIG',
      message: expect.stringMatching(
        /^Invalid config value at "retrieve\.bm25\.b" \(from command-line flag\)/,
      ),
    })
  })

  it('bounds each count setting by one schema limit, the same from a variable and from the file', async () => {
    // Up to 2^53 - 1 was taken: TOOLSEL_BODY_LIMIT_BYTES=9007199254740991 sized import workers'
    // heaps at 24x that; a k or a score batch of billions.
    for (const [name, path, largest] of [
      ['TOOLSEL_K', 'retrieve.k', 10_000],
      ['TOOLSEL_ONNX_SCORE_BATCH_SIZE', 'models.onnx.scoreBatchSize', 1024],
      ['TOOLSEL_BODY_LIMIT_BYTES', 'server.bodyLimitBytes', 512 * 1024 * 1024],
      ['TOOLSEL_READS_PER_MINUTE', 'server.readsPerMinute', 100_000_000],
      ['TOOLSEL_WRITES_PER_MINUTE', 'server.writesPerMinute', 100_000_000],
    ] as const) {
      const nested = path
        .split('.')
        .reduceRight((value: unknown, part) => ({ [part]: value }), largest + 1)
      const file = await configFile(nested)
      const fromFile = await loadConfig({ file }).catch((caught) => caught)
      const fromEnv = await loadConfig({ env: { [name]: String(largest + 1) } }).catch(
        (caught) => caught,
      )
      for (const [error, source] of [
        [fromFile, `config file ${file}`],
        [fromEnv, `environment variable ${name}`],
      ]) {
        expect(error.code, `${name} from ${source}`).toBe('INVALID_CONFIG')
        expect(error.message).toMatch(
          new RegExp(
            `^Invalid config value at "${path.replaceAll('.', '\\.')}" \\(from ${source}\\): .*${largest}`,
          ),
        )
      }
      const config = await loadConfig({ env: { [name]: String(largest) } })
      expect(path.split('.').reduce((value: any, part) => value[part], config)).toBe(largest)
    }
  })

  it('reads server.trustedProxies (addresses, CIDRs) and server.forwardedHeader, from variables too, and names a bad entry', async () => {
    const config = await loadConfig({
      env: {
        TOOLSEL_TRUSTED_PROXIES: '10.0.0.0/8, 192.0.2.7,fd00::/8',
        TOOLSEL_FORWARDED_HEADER: 'forwarded',
      },
    })
    expect(config.server).toMatchObject({
      trustedProxies: ['10.0.0.0/8', '192.0.2.7', 'fd00::/8'],
      forwardedHeader: 'forwarded',
    })
    const defaults = await loadConfig({ env: {} })
    expect(defaults.server).toMatchObject({
      trustedProxies: [],
      forwardedHeader: 'x-forwarded-for',
    })
    for (const [value, message] of [
      ['proxy.internal', /"proxy\.internal" is not an IP address or CIDR/],
      ['10.0.0.0/33', /"10\.0\.0\.0\/33" has no prefix length of 0-32/],
      ['fd00::/x', /has no prefix length of 0-128/],
      // A list that makes every client a proxy: any client names any address it likes, past the
      // request rate and the connection limit (round 42 attack, hard35).
      ['0.0.0.0/0', /"0\.0\.0\.0\/0" trusts every IPv4 address/],
      ['10.0.0.0/8,::/0', /"::\/0" trusts every IPv4 and IPv6 address/],
      ['::ffff:0:0/96', /"::ffff:0:0\/96" trusts every IPv4 address/],
      ['::/64', /"::\/64" trusts every IPv4 address/],
      // No one entry trusts everything, the two do (round 43, hard37).
      ['0.0.0.0/1,128.0.0.0/1', /its 2 entries together trust every IPv4 address/],
    ] as const) {
      await expect(
        loadConfig({ env: { TOOLSEL_TRUSTED_PROXIES: value } }),
        value,
      ).rejects.toMatchObject({
        code: 'INVALID_CONFIG',
        message: expect.stringMatching(message),
      })
    }
    const tooMany = Array.from({ length: 257 }, (_, index) => `10.0.${index >> 8}.${index & 255}`)
    await expect(
      loadConfig({ env: { TOOLSEL_TRUSTED_PROXIES: tooMany.join(',') } }),
    ).rejects.toMatchObject({ code: 'INVALID_CONFIG', message: expect.stringMatching(/256/) })
    await expect(
      loadConfig({ env: { TOOLSEL_FORWARDED_HEADER: 'x-real-ip' } }),
    ).rejects.toMatchObject({ code: 'INVALID_CONFIG' })
  })

  it('sets gateway.maxToolsPerServer and gateway.maxListChars from their variables, with the one schema bound', async () => {
    // Before round 41 neither had a variable (each was warned about as unknown, and ignored).
    const config = await loadConfig({
      env: {
        TOOLSEL_GATEWAY_MAX_TOOLS_PER_SERVER: '200000',
        TOOLSEL_GATEWAY_MAX_LIST_CHARS: '268435456',
      },
    })
    expect(config.gateway).toMatchObject({ maxToolsPerServer: 200_000, maxListChars: 268_435_456 })
    for (const [name, path, refused] of [
      ['TOOLSEL_GATEWAY_MAX_TOOLS_PER_SERVER', 'gateway.maxToolsPerServer', 0],
      ['TOOLSEL_GATEWAY_MAX_LIST_CHARS', 'gateway.maxListChars', 65_535],
    ] as const) {
      const file = await configFile({ gateway: { [path.split('.')[1]]: refused } })
      const fromFile = await loadConfig({ file }).catch((caught) => caught)
      const fromEnv = await loadConfig({ env: { [name]: String(refused) } }).catch(
        (caught) => caught,
      )
      expect([fromFile.code, fromEnv.code]).toEqual(['INVALID_CONFIG', 'INVALID_CONFIG'])
      expect(fromFile.message).toMatch(`Invalid config value at "${path}" (from config file`)
      expect(fromEnv.message).toMatch(
        `Invalid config value at "${path}" (from environment variable ${name})`,
      )
      // The same bound said the same way.
      expect(fromEnv.message.split('): ')[1]).toBe(fromFile.message.split('): ')[1])
    }
  })

  it('takes any safe integer as server.importWorkerMinChars: a threshold, not a size', async () => {
    // ed3ad53 bounded it at 512 MiB like the body limit; a value over every body ("never in a
    // worker", as tests and users write Number.MAX_SAFE_INTEGER) then refused to start.
    const largest = Number.MAX_SAFE_INTEGER
    const file = await configFile({ server: { importWorkerMinChars: largest } })
    expect((await loadConfig({ file })).server.importWorkerMinChars).toBe(largest)
    const config = await loadConfig({ env: { TOOLSEL_IMPORT_WORKER_MIN_CHARS: String(largest) } })
    expect(config.server.importWorkerMinChars).toBe(largest)
  })

  it('takes a host name or an IP address as server.host, nothing else', async () => {
    for (const host of [
      '127.0.0.1',
      '0.0.0.0',
      '::',
      '::1',
      'fe80::1%eth0',
      'localhost',
      'api.example.com',
      'my_service',
      'host.',
      '1password.example',
      'a.b1',
    ])
      expect((await loadConfig({ env: { TOOLSEL_HOST: host } })).server.host, host).toBe(host)
    // Each was taken and failed only at listen (or listened where the user did not mean).
    for (const host of [
      ' ',
      'localhost:8080',
      '[::1]',
      'http://localhost',
      'a b',
      'bad\u001bhost',
      'x'.repeat(100_000),
      '-lead.example',
      'a..b',
      // No IPv4 address, and no host name: taken before round 41 (127.0.0.256 as loopback).
      '127.0.0.256',
      '256.1.1.1',
      '127.1',
      '0x7f000001',
      'example.123',
    ]) {
      const error = await loadConfig({ env: { TOOLSEL_HOST: host } }).catch((caught) => caught)
      expect(error.code, JSON.stringify(host.slice(0, 20))).toBe('INVALID_CONFIG')
      expect(error.message).toMatch(
        /^Invalid config value at "server\.host" \(from environment variable TOOLSEL_HOST\): a host name .* or an IP address/,
      )
    }
    const file = await configFile({ server: { host: 'localhost:8080' } })
    await expect(loadConfig({ file })).rejects.toThrow(/server\.host.*a host name/)
  })

  it('reads a list variable of no items (spaces, commas) as unset: the file keeps its list', async () => {
    const file = await configFile({
      server: { allowedHosts: ['api.example.com'], corsOrigins: ['https://app.example'] },
    })
    for (const blank of [' ', ' , ', ',']) {
      const config = await loadConfig({
        file,
        env: {
          TOOLSEL_ALLOWED_HOSTS: blank,
          TOOLSEL_CORS_ORIGINS: blank,
          TOOLSEL_READ_KEYS: blank,
        },
      })
      // Was []: for allowedHosts, "the default" (any host, off loopback).
      expect(config.server.allowedHosts, JSON.stringify(blank)).toEqual(['api.example.com'])
      expect(config.server.corsOrigins).toEqual(['https://app.example'])
      expect(config.auth.readKeys).toEqual([])
    }
    const set = await loadConfig({
      file,
      env: { TOOLSEL_ALLOWED_HOSTS: ' a.example , ,b.example' },
    })
    expect(set.server.allowedHosts).toEqual(['a.example', 'b.example'])
  })

  it('refuses a duration past the longest timer Node keeps, in every *Ms setting', async () => {
    // Node fires a setTimeout longer than 2^31 - 1 ms after 1 ms: a gateway.callTimeoutMs meant as
    // "never" dropped a stdio upstream whose stdin backlog went unread at once.
    const file = await configFile({ gateway: { callTimeoutMs: 1e10 } })
    await expect(loadConfig({ file })).rejects.toMatchObject({
      code: 'INVALID_CONFIG',
      message: expect.stringMatching(
        /^Invalid config value at "gateway\.callTimeoutMs" \(from .*config\.json\): at most 2147483647 ms/,
      ),
    })
    const longest = await loadConfig({ flags: { 'server.requestTimeoutMs': 2 ** 31 - 1 } })
    expect(longest.server.requestTimeoutMs).toBe(2 ** 31 - 1)
    const durations = Object.entries(defaultConfig().server).filter(([key]) => key.endsWith('Ms'))
    expect(durations.length).toBeGreaterThan(5)
    for (const [key] of durations) {
      await expect(
        loadConfig({ flags: { [`server.${key}`]: 2 ** 31 } }),
        key,
      ).rejects.toMatchObject({
        code: 'INVALID_CONFIG',
      })
    }
  })

  it('refuses a config file that is not a JSON object', async () => {
    const file = await configFile('{\n  "server": {"port": 1},\n  nope\n}')
    await expect(loadConfig({ file })).rejects.toMatchObject({
      code: 'INVALID_CONFIG',
      // Where, as a line and column (V8 gives an offset at most).
      message: expect.stringContaining(`Config file ${file} is not valid JSON (line 3, column 3: `),
    })
    // YAML, or JSON that is no object: said as it is (both were "is not a JSON object (…)").
    const yaml = await configFile('server:\n  port: 8080\n')
    await expect(loadConfig({ file: yaml })).rejects.toMatchObject({
      message: expect.stringMatching(
        /is not valid JSON \(.*\); the config file is JSON, not YAML\.$/,
      ),
    })
    const array = await configFile('[1, 2]')
    await expect(loadConfig({ file: array })).rejects.toMatchObject({
      message: `Config file ${array} is not a JSON object: it holds an array; write the settings as {"server": {"port": 8080}, …}.`,
    })
  })

  it('says why a config file could not be read', async () => {
    const file = join(tmpdir(), 'toolsel-no-such-config.json')
    await expect(loadConfig({ file })).rejects.toMatchObject({
      code: 'INVALID_CONFIG',
      message: `Config file ${file} could not be read: no such file or directory.`,
    })
  })

  describe("relative model paths in a config file are read from the file's directory", () => {
    it('rewrites learned:, onnx: and llm:onnx: ids and mcp.tokenizerDir; absolute ones and other ids stay', async () => {
      const file = await configFile({
        plan: { planner: 'llm:onnx:models/planner', fallback: 'rule' },
        select: { selector: 'learned:model.json', fallback: 'onnx:/abs/selector' },
        mcp: { tokenizerDir: 'tok' },
      })
      const dir = dirname(file)
      const config = await loadConfig({ file })
      expect(config.plan.planner).toBe(`llm:onnx:${join(dir, 'models/planner')}`)
      expect(config.plan.fallback).toEqual(['rule'])
      expect(config.select.selector).toBe(`learned:${join(dir, 'model.json')}`)
      expect(config.select.fallback).toEqual(['onnx:/abs/selector'])
      expect(config.mcp.tokenizerDir).toBe(join(dir, 'tok'))
    })

    it('rewrites each entry of a fallback list, which is read as a list ("" as none)', async () => {
      const file = await configFile({
        plan: { fallback: ['onnx:models/small', 'rule'] },
        select: { fallback: '' },
      })
      const config = await loadConfig({ file })
      expect(config.plan.fallback).toEqual([`onnx:${join(dirname(file), 'models/small')}`, 'rule'])
      expect(config.select.fallback).toEqual([])
      const twice = await configFile({ select: { fallback: ['openai:b', 'llm:openai:b', 'top1'] } })
      await expect(loadConfig({ file: twice })).rejects.toMatchObject({
        code: 'INVALID_CONFIG',
        message: expect.stringContaining('"llm(openai:b)" is listed twice'),
      })
    })

    it('refuses a fallback of the other stage (a string or in a list), naming the valid ids', async () => {
      // Before round 43 `plan.fallback: ["top1"]` loaded, and a model planner failed to load
      // (UNKNOWN_COMPONENT) only once it was built, at the start or on the request naming it.
      for (const [section, fallback, wrong, valid] of [
        ['plan', 'top1', 'top1', 'rule, none, llm:onnx:<dir>'],
        ['plan', ['openai:b', 'learned'], 'learned', 'rule, none, llm:onnx:<dir>'],
        ['select', 'rule', 'rule', 'top1, learned, learned:<model.json>, llm:onnx:<dir>'],
        ['select', ['openai:b', 'none'], 'none', 'top1, learned'],
        ['select', ['openai:', 'top1'], 'openai:', 'top1, learned'],
        ['plan', 'magic', 'magic', 'rule, none'],
      ] as const) {
        const file = await configFile({ [section]: { fallback } })
        const error = await loadConfig({ file }).catch((caught: unknown) => caught)
        const stage = section === 'plan' ? 'planner' : 'selector'
        expect(error).toMatchObject({
          code: 'INVALID_CONFIG',
          details: { path: `${section}.fallback` },
          message: expect.stringContaining(
            `"${wrong}" is no ${stage}; a ${stage} fallback is one of: ${valid}`,
          ),
        })
      }
      // The ids each stage may have are what components.ts builds (STAGE_IDS is their copy).
      expect([...STAGE_IDS.planner.backends].sort()).toEqual(Object.keys(PLANNERS).sort())
      expect([...STAGE_IDS.selector.backends].sort()).toEqual(Object.keys(SELECTORS).sort())
      const fine = await configFile({
        plan: { fallback: ['llm:openai:b', 'onnx:/m', 'none'] },
        select: { fallback: ['openai:b', 'learned:m.json'] },
      })
      expect((await loadConfig({ file: fine })).select.fallback).toHaveLength(2)
    })

    it('refuses a fallback list longer than MAX_FALLBACK_ENTRIES', async () => {
      // Round 43: 10,000 entries took 3.9 s to load (each compared with every other).
      const long = Array.from({ length: 10_000 }, (_, index) => `openai:m${index}`)
      const file = await configFile({ plan: { fallback: long } })
      const error = await loadConfig({ file }).catch((caught: unknown) => caught)
      expect(error).toMatchObject({
        code: 'INVALID_CONFIG',
        details: { path: 'plan.fallback' },
        message: expect.stringContaining(
          `10000 entries; a fallback list holds at most ${MAX_FALLBACK_ENTRIES}`,
        ),
      })
      const most = await configFile({
        select: { fallback: [...long.slice(0, MAX_FALLBACK_ENTRIES - 1), 'top1'] },
      })
      expect((await loadConfig({ file: most })).select.fallback).toHaveLength(MAX_FALLBACK_ENTRIES)
    })

    it('ends a fallback list problem with one period (it was "..": the problem had its own)', async () => {
      for (const [fallback, end] of [
        [['openai:b', 'llm:openai:b'], 'each entry is tried once.'],
        [['rule', 'openai:b'], 'end the list with it.'],
      ] as const) {
        const file = await configFile({ plan: { fallback } })
        const error = await loadConfig({ file }).catch((caught: unknown) => caught)
        expect(error).toMatchObject({ code: 'INVALID_CONFIG' })
        expect((error as Error).message.endsWith(` ${end}`), (error as Error).message).toBe(true)
      }
    })

    it('keeps a flag or environment value relative to the current directory', async () => {
      const file = await configFile({ select: { selector: 'learned:model.json' } })
      const flag = await loadConfig({ file, flags: { 'select.selector': 'learned:mine.json' } })
      expect(flag.select.selector).toBe('learned:mine.json')
      const env = await loadConfig({ file, env: { TOOLSEL_SELECTOR: 'learned:env.json' } })
      expect(env.select.selector).toBe('learned:env.json')
    })

    it('writes a path below the current directory relative to it, as short as the user wrote it', () => {
      const cwd = join(tmpdir(), 'work')
      expect(resolveComponentPath('learned:m.json', join(cwd, 'conf'), cwd)).toBe(
        `learned:${join('conf', 'm.json')}`,
      )
      expect(resolveComponentPath('learned:m.json', cwd, cwd)).toBe('learned:m.json')
      expect(resolveComponentPath('learned:../m.json', cwd, cwd)).toBe(
        `learned:${join(tmpdir(), 'm.json')}`,
      )
      expect(resolveComponentPath('llm:openai:qwen', cwd, cwd)).toBe('llm:openai:qwen')
      expect(resolveComponentPath('learned', cwd, cwd)).toBe('learned')
    })

    it('serves the model named by a config file in another directory (toolsel select --config)', async () => {
      const file = await configFile({ select: { selector: 'learned:missing-model.json' } })
      const config = await loadConfig({ file })
      expect(() => readLearnedModelSync(config.select.selector.slice('learned:'.length))).toThrow(
        join(dirname(file), 'missing-model.json'),
      )
    })
  })
})
