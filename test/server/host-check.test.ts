/**
 * Which `server.host` is this machine only (its Host header names default to the loopback
 * names). Before round 41 `127.0.0.256` (an octet over 255: no IPv4 address) was loopback too.
 */
import { describe, expect, it } from 'vitest'
import { effectiveAllowedHosts, isLoopbackAddress } from '../../src/server/middleware/host-check.ts'

describe('isLoopbackAddress', () => {
  it('takes localhost, ::1 and the IPv4 addresses of 127.0.0.0/8', () => {
    for (const host of ['localhost', '::1', '[::1]', '127.0.0.1', '127.0.0.2', '127.255.255.255'])
      expect(isLoopbackAddress(host), host).toBe(true)
  })

  it('takes no other address, nor an address with an octet over 255', () => {
    for (const host of [
      '127.0.0.256',
      '127.300.0.1',
      '127.0.0.01',
      '127.1',
      '128.0.0.1',
      '0.0.0.0',
      '::',
      'example.com',
    ])
      expect(isLoopbackAddress(host), host).toBe(false)
    expect(effectiveAllowedHosts([], '127.0.0.256')).toBeUndefined()
    expect(effectiveAllowedHosts([], '127.0.0.9')).toEqual(
      new Set(['localhost', '127.0.0.1', '[::1]']),
    )
  })
})
