/**
 * settledBy: the one bounded wait of the gateway's closes (McpGateway.close's grace and the wait
 * for a SIGKILLed process, processExit's wait for an upstream process to exit).
 */
import { describe, expect, it } from 'vitest'
import { settledBy } from '../../../src/mcp/gateway/settled-by.ts'

const after = (ms: number, fail = false) =>
  new Promise((resolve, reject) =>
    setTimeout(() => (fail ? reject(new Error('x')) : resolve(1)), ms),
  )

describe('settledBy', () => {
  it('says settled for a promise that resolves or rejects in time, late for one that does not', async () => {
    expect(await settledBy(after(10), 1000)).toBe('settled')
    expect(await settledBy(after(10, true), 1000)).toBe('settled')
    const started = Date.now()
    expect(await settledBy(new Promise(() => undefined), 50)).toBe('late')
    expect(Date.now() - started).toBeLessThan(1000)
  })

  it('answers at once for a time already past, settled only if it already has', async () => {
    expect(await settledBy(new Promise(() => undefined), -5)).toBe('late')
    expect(await settledBy(Promise.resolve(), 0)).toBe('settled')
  })
})
