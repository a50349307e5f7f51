/**
 * `McpContext.close`: several contexts on one service each follow its library changes until
 * closed; closing gives the registry its listener back, drops the cached views, and a closed
 * context no longer reacts to changes.
 */
import { describe, expect, it } from 'vitest'
import { createComponents } from '../../src/components.ts'
import { parseConfig } from '../../src/config/load-config.ts'
import { ToolLibrary } from '../../src/library/tool-library.ts'
import { createMemoryLogger } from '../../src/log.ts'
import { createMcpContext, type McpContext } from '../../src/mcp/mcp-context.ts'
import { createEstimateTokenCounter } from '../../src/mcp/tokens/token-counter.ts'
import type { ToolScope } from '../../src/mcp/tool-scope.ts'
import { ToolselService } from '../../src/service/toolsel-service.ts'
import { buildIndexedLibrary } from '../../src/store/library-lifecycle.ts'
import { SAMPLE_TOOLS } from '../helpers/sample-tools.ts'

const WEATHER_ONLY: ToolScope = { servers: ['weather'], tags: [] }

async function startService() {
  const config = parseConfig({ library: { default: 'sample', loadAll: false } })
  const logger = createMemoryLogger()
  const service = new ToolselService(config, logger, createComponents(config, logger))
  const edition = () => buildIndexedLibrary(new ToolLibrary('sample', SAMPLE_TOOLS), config)
  await service.start([await edition()])
  return { service, edition }
}

/** Caches a scoped view of the current `sample` in `context`. */
async function cacheView(context: McpContext): Promise<void> {
  const view = await context.views.view(context.service.library('sample'), WEATHER_ONLY)
  expect(view.library.size).toBeLessThan(SAMPLE_TOOLS.length)
  expect(context.views.viewsOf('sample')).toBe(1)
}

describe('McpContext.close', () => {
  it('gives the registry its listeners back; a closed context ignores library changes', async () => {
    const { service, edition } = await startService()
    const registry = service.libraries
    const before = registry.listenerCount
    const counter = createEstimateTokenCounter()
    const contexts = Array.from({ length: 5 }, () =>
      createMcpContext(service, { tokenCounter: counter }),
    )
    expect(registry.listenerCount).toBe(before + 5)
    for (const context of contexts) await cacheView(context)

    const [closed, alsoClosed, ...open] = contexts
    await closed.close()
    await alsoClosed.close()
    await closed.close() // again: nothing more to give back
    expect(registry.listenerCount).toBe(before + 3)
    expect(closed.views.viewsOf('sample')).toBe(0)

    // A view cached after close stays: the closed context no longer hears of the new edition.
    await cacheView(closed)
    registry.set(await edition())
    expect(closed.views.viewsOf('sample')).toBe(1)
    expect(alsoClosed.views.viewsOf('sample')).toBe(0)
    for (const context of open) expect(context.views.viewsOf('sample')).toBe(0)

    // The open ones still follow: a new view, then the delete drops it.
    await cacheView(open[0])
    registry.delete('sample')
    expect(open[0].views.viewsOf('sample')).toBe(0)
    expect(closed.views.viewsOf('sample')).toBe(1)

    for (const context of open) await context.close()
    expect(registry.listenerCount).toBe(before)
    // The counter was given, not made: closing the contexts leaves it working.
    expect(await counter.count('four words of text')).toBeGreaterThan(0)
  })

  it('counts with the estimate after close, without starting a tokenizer', async () => {
    const { service } = await startService()
    const context = createMcpContext(service)
    await context.close()
    const counter = await context.tokens.counter
    expect(counter).toMatchObject({ exact: false, name: createEstimateTokenCounter().name })
  })
})
