/**
 * clientAddresses (server.trustedProxies): which peers are trusted (CIDRs, IPv4-mapped IPv6),
 * the same answers once remembered and after the memory of them is cleared. The walk of the
 * forwarding headers is tested over real HTTP in rate-limit.test.ts.
 */
import { describe, expect, it } from 'vitest'
import { clientAddresses, trustedProxyError } from '../../src/server/client-address.ts'

describe('clientAddresses', () => {
  it('trusts the listed addresses and CIDRs only, the same every time, past the remembered 4,096', () => {
    const { isTrustedProxy } = clientAddresses(['10.0.0.0/8', '192.0.2.7', 'fd00::/8'])
    const cases: Array<[address: string, trusted: boolean]> = [
      ['10.1.2.3', true],
      ['::ffff:10.1.2.3', true],
      ['11.0.0.1', false],
      ['192.0.2.7', true],
      ['192.0.2.8', false],
      ['fd12::1', true],
      ['fe80::1%eth0', false],
      ['2001:db8::1', false],
      ['not an address', false],
      ['', false],
    ]
    for (let pass = 0; pass < 2; pass += 1) {
      for (const [address, trusted] of cases) expect(isTrustedProxy(address), address).toBe(trusted)
      // More addresses than are remembered: the memory is cleared, the answers stay.
      for (let index = 0; index < 5000; index += 1) {
        expect(isTrustedProxy(`172.16.${index >> 8}.${index & 255}`)).toBe(false)
      }
    }
    expect(clientAddresses([]).isTrustedProxy('10.1.2.3')).toBe(false)
  })

  it('refuses an entry that trusts every address of a family, which any client could then forge', () => {
    for (const entry of [
      '0.0.0.0/0',
      '192.0.2.7/0',
      '::/0',
      '2001:db8::/0',
      '::ffff:0:0/96',
      '::/80',
    ])
      expect(trustedProxyError(entry), entry).toMatch(/trusts every IPv(4|6)/)
    expect(() => clientAddresses(['10.0.0.0/8', '::/0'])).toThrow(/trusts every/)
    // Wide but not everything: taken as written.
    for (const entry of [
      '0.0.0.0/1',
      '10.0.0.0/8',
      '::ffff:10.0.0.0/104',
      'fc00::/7',
      '2000::/3',
      '::/97',
    ])
      expect(trustedProxyError(entry), entry).toBeUndefined()
  })
})
