/**
 * The connect pool (`gateway.connectConcurrency`): slots served first come, first served, a
 * release passing the slot to the next waiter, and close() ending every wait (the gateway
 * closing while upstreams queue for a slot).
 */
import { describe, expect, it } from 'vitest'
import { ConnectSlots } from '../../../src/mcp/gateway/connect-slots.ts'

describe('ConnectSlots', () => {
  it('serves waiters in order, each release passing the slot on once', async () => {
    const slots = new ConnectSlots(2)
    const first = await slots.acquire()
    const second = await slots.acquire()
    const order: number[] = []
    const third = slots.acquire().then((release) => (order.push(3), release))
    const fourth = slots.acquire().then((release) => (order.push(4), release))
    expect([slots.busy, slots.waiting]).toEqual([2, 2])
    first!()
    first!()
    await third
    expect(order).toEqual([3])
    expect([slots.busy, slots.waiting]).toEqual([2, 1])
    second!()
    await fourth
    expect(order).toEqual([3, 4])
    ;(await third)!()
    ;(await fourth)!()
    expect([slots.busy, slots.waiting]).toEqual([0, 0])
  })

  it('close() resolves every waiter without a slot, and every later acquire', async () => {
    const slots = new ConnectSlots(1)
    const holder = await slots.acquire()
    const waiters = [slots.acquire(), slots.acquire(), slots.acquire()]
    expect(slots.waiting).toBe(3)
    slots.close()
    expect(slots.waiting).toBe(0)
    expect(await Promise.all(waiters)).toEqual([undefined, undefined, undefined])
    expect(await slots.acquire()).toBeUndefined()
    // The holder's release after close frees its slot (no waiter to pass it to).
    holder!()
    expect(slots.busy).toBe(0)
  })
})
