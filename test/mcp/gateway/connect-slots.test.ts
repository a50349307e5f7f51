/**
 * The connect pool (`gateway.connectConcurrency`): slots served first come, first served, a
 * release passing the slot to the next waiter, an attempt stepping out of the pool (at most
 * `size` out at once), and close() ending every wait (the gateway closing while upstreams queue
 * for a slot).
 */
import { describe, expect, it } from 'vitest'
import { ConnectSlots } from '../../../src/mcp/gateway/connect-slots.ts'

describe('ConnectSlots', () => {
  it('serves waiters in order, each release passing the slot on once', async () => {
    const slots = new ConnectSlots(2)
    const first = await slots.acquire()
    const second = await slots.acquire()
    const order: number[] = []
    const third = slots.acquire().then((slot) => (order.push(3), slot))
    const fourth = slots.acquire().then((slot) => (order.push(4), slot))
    expect([slots.busy, slots.waiting]).toEqual([2, 2])
    first!.release()
    first!.release()
    await third
    expect(order).toEqual([3])
    expect([slots.busy, slots.waiting]).toEqual([2, 1])
    second!.release()
    await fourth
    expect(order).toEqual([3, 4])
    ;(await third)!.release()
    ;(await fourth)!.release()
    expect([slots.busy, slots.waiting]).toEqual([0, 0])
  })

  it('lets an attempt step out, passing its slot on, at most size of them out at once', async () => {
    const slots = new ConnectSlots(1)
    const hung = (await slots.acquire())!
    const next = slots.acquire()
    expect(hung.stepOut()).toBe(true)
    expect(hung.stepOut()).toBe(false)
    const slow = (await next)!
    expect([slots.busy, slots.outside]).toEqual([1, 1])
    // One out already (the size): this one keeps its slot.
    expect(slow.stepOut()).toBe(false)
    const third = slots.acquire()
    hung.release()
    expect([slots.busy, slots.outside, slots.waiting]).toEqual([1, 0, 1])
    expect(slow.stepOut()).toBe(true)
    const last = (await third)!
    slow.release()
    last.release()
    expect([slots.busy, slots.outside, slots.waiting]).toEqual([0, 0, 0])
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
    holder!.release()
    expect(slots.busy).toBe(0)
  })
})
