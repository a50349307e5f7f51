/**
 * `createApp(...).close()`: what an app made for itself (its MCP context, its metrics'
 * subscription to selections) follows the service only until the app is closed, so apps made and
 * dropped on one long-lived service leave nothing behind; what `options` gave it stays its
 * owner's. What no app can stop (prom-client's process metrics) is made once per process.
 */
import perfHooks from 'node:perf_hooks'
import { describe, expect, it, vi } from 'vitest'
import { createMcpContext } from '../../src/mcp/mcp-context.ts'
import { createEstimateTokenCounter } from '../../src/mcp/tokens/token-counter.ts'
import { createApp, type ToolselApp } from '../../src/server/app.ts'
import { createTestApp, postJson } from './test-service.ts'

/** The count of selections the app's `GET /metrics` has observed. */
async function observedSelections(app: ToolselApp): Promise<number> {
  const text = await (await app.request('/metrics')).text()
  const line = text
    .split('\n')
    .find((row) => row.startsWith('toolsel_pipeline_stage_duration_seconds_count{stage="total"}'))
  return Number(line?.split(' ').at(-1) ?? 0)
}

describe('createApp(...).close()', () => {
  it('N apps on one service: the registry gets its listeners back once they are closed', async () => {
    const { app: first, service } = await createTestApp()
    await first.close()
    const registry = service.libraries
    const before = registry.listenerCount
    const apps = Array.from({ length: 6 }, () => createApp(service))
    // One MCP context (one registry listener) per app while it is open.
    expect(registry.listenerCount).toBe(before + 6)
    for (const app of apps.slice(0, 4)) await app.close()
    expect(registry.listenerCount).toBe(before + 2)
    await apps[0].close() // again: nothing more to give back
    expect(registry.listenerCount).toBe(before + 2)
    // The open ones still serve, MCP included.
    const initialize = await apps[5].request('/mcp', {
      ...postJson({
        jsonrpc: '2.0',
        id: 1,
        method: 'initialize',
        params: {
          protocolVersion: '2025-06-18',
          capabilities: {},
          clientInfo: { name: 'test', version: '0' },
        },
      }),
      headers: {
        'content-type': 'application/json',
        accept: 'application/json, text/event-stream',
      },
    })
    expect(initialize.status).toBe(200)
    for (const app of apps.slice(4)) await app.close()
    expect(registry.listenerCount).toBe(before)
  })

  it("a closed app's metrics no longer observe the service's selections", async () => {
    const { app: closed, service } = await createTestApp()
    const open = createApp(service)
    const select = () => service.select({ instruction: 'send an email to Ann', library: 'sample' })
    await select()
    expect(await observedSelections(closed)).toBe(1)
    expect(await observedSelections(open)).toBe(1)
    await closed.close()
    await select()
    // Before close() existed, every app made on the service kept observing (and holding) it.
    expect(await observedSelections(closed)).toBe(1)
    expect(await observedSelections(open)).toBe(2)
    await open.close()
  })

  it('leaves an MCP context it was given to its owner', async () => {
    const { app: first, service } = await createTestApp()
    await first.close()
    const before = service.libraries.listenerCount
    const mcp = createMcpContext(service, { tokenCounter: createEstimateTokenCounter() })
    const app = createApp(service, { mcp })
    expect(service.libraries.listenerCount).toBe(before + 1)
    await app.close()
    // Still open: the context still follows the service.
    expect(service.libraries.listenerCount).toBe(before + 1)
    await mcp.close()
    expect(service.libraries.listenerCount).toBe(before)
  })

  it("N apps in one process start one event-loop monitor and one GC observer (prom-client's, never stopped)", async () => {
    // prom-client require()s perf_hooks: the object node:perf_hooks' default export is.
    const monitors = vi.spyOn(perfHooks, 'monitorEventLoopDelay')
    const observe = vi.spyOn(perfHooks.PerformanceObserver.prototype, 'observe')
    try {
      const { app: first, service } = await createTestApp()
      const apps = [first, ...Array.from({ length: 5 }, () => createApp(service))]
      for (const app of apps) {
        const text = await (await app.request('/metrics')).text()
        // Every app's scrape still has the process's metrics and its own.
        expect(text).toMatch(/^nodejs_eventloop_lag_p99_seconds \S+$/m)
        expect(text).toMatch(/^# TYPE nodejs_gc_duration_seconds histogram$/m)
        expect(text).toMatch(/^process_resident_memory_bytes \d+$/m)
        expect(text).toMatch(/^toolsel_ready 1$/m)
        await app.close()
      }
      // Before: one of each per app (6), none of which app.close() could stop.
      expect(monitors.mock.calls.length).toBeLessThanOrEqual(1)
      const gcObservers = observe.mock.calls.filter(([options]) =>
        JSON.stringify(options).includes('"gc"'),
      )
      expect(gcObservers.length).toBeLessThanOrEqual(1)
    } finally {
      monitors.mockRestore()
      observe.mockRestore()
    }
  })
})
