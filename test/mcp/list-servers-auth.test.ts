/**
 * `list_servers` with API keys (round 26, sec12): a key limited to libraries other than the
 * gateway library could list every upstream server (name, target, status, last error), though
 * `call_tool` and the searches refuse it that library. It now answers FORBIDDEN as they do.
 * The same server holds the gateway case of a key's default library (round 34).
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { call, dataOf, errorOf, startToolsel, type Harness } from './fixtures/toolsel-harness.ts'
import { startWeatherUpstream, type WeatherUpstream } from './fixtures/weather-upstream.ts'

const ADMIN = 'admin-key-0123456789abcdef'
const DEMO_ONLY = 'demo-only-0123456789abcdef'
const GATEWAY_TOO = 'gateway-too-0123456789abcdef'

describe('list_servers with a key limited to libraries', () => {
  let harness: Harness
  let weather: WeatherUpstream

  beforeAll(async () => {
    weather = await startWeatherUpstream()
    harness = await startToolsel({
      log: { level: 'silent' },
      auth: {
        adminKey: ADMIN,
        readKeys: [
          { key: DEMO_ONLY, name: 'demo-reader', libraries: ['demo'] },
          { key: GATEWAY_TOO, name: 'agent', libraries: ['demo', 'gateway'] },
        ],
      },
      gateway: { servers: { weather: { url: weather.url, tags: ['public'] } } },
    })
  }, 60_000)
  afterAll(async () => {
    await harness?.close()
    await weather?.close()
  })

  const connect = (key: string) => harness.connect('/mcp', { authorization: `Bearer ${key}` })

  it('is FORBIDDEN without the gateway library, and lists the servers with it', async () => {
    const refused = errorOf(await call(await connect(DEMO_ONLY), 'list_servers'))
    expect(refused.code).toBe('FORBIDDEN')
    expect(refused.message).toContain('"gateway"')
    expect(JSON.stringify(refused)).not.toContain(weather.url)
    for (const key of [GATEWAY_TOO, ADMIN]) {
      const listed = dataOf<{ servers: Array<{ name: string }> }>(
        await call(await connect(key), 'list_servers'),
      )
      expect(listed.servers.map((server) => server.name)).toEqual(['weather'])
    }
  })

  it("a search naming no library uses the gateway library when the key may, else the key's first", async () => {
    const searched = async (key: string) =>
      dataOf<{ library: string }>(
        await call(await connect(key), 'search_tools', { query: 'weather forecast' }),
      ).library
    // hard20 (round 34): DEMO_ONLY's search naming no library answered FORBIDDEN ("gateway").
    expect(await searched(DEMO_ONLY)).toBe('demo')
    expect(await searched(GATEWAY_TOO)).toBe('gateway')
    expect(await searched(ADMIN)).toBe('gateway')
  })
})
