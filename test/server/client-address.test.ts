/**
 * clientAddresses (server.trustedProxies): which peers are trusted (CIDRs, IPv4-mapped IPv6),
 * the same answers once remembered and after the memory of them is cleared. The walk of the
 * forwarding headers is tested over real HTTP in rate-limit.test.ts.
 */
import { describe, expect, it } from 'vitest'
import {
  clientAddresses,
  trustedProxiesError,
  trustedProxiesWarning,
  trustedProxyError,
} from '../../src/server/client-address.ts'
import { runCli } from '../cli/run-cli.ts'

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

  it('refuses entries that together trust every address of a family, though no one of them does', () => {
    // Before round 43 each entry was checked alone: each of these lists made every client a proxy.
    const allButLastIpv4 = Array.from({ length: 32 }, (_, k) => {
      const first = 2 ** 32 - 2 ** (32 - k)
      return `${[24, 16, 8, 0].map((shift) => Math.floor(first / 2 ** shift) % 256).join('.')}/${k + 1}`
    })
    // Every IPv6 address but ::ffff:0:0/96 (IPv4 as a dual-stack server sees it), in 96 CIDRs.
    const mapped = 0xffffn << 32n
    const allButIpv4AsIpv6 = [
      ...cidrs(0n, mapped - 1n),
      ...cidrs(mapped + (1n << 32n), (1n << 128n) - 1n),
    ]
    for (const [entries, family] of [
      [['0.0.0.0/1', '128.0.0.0/1'], 'IPv4'],
      [
        ['10.0.0.0/8', '0.0.0.0/2', '64.0.0.0/2', '128.0.0.0/2', '192.0.0.0/3', '224.0.0.0/3'],
        'IPv4',
      ],
      // Bits past the prefix are ignored, as the proxy check ignores them.
      [['0.255.0.1/1', '200.1.2.3/1'], 'IPv4'],
      [[...allButLastIpv4, '255.255.255.255'], 'IPv4'],
      // IPv4 through the IPv6 addresses it has on a dual-stack server, and both ways mixed.
      [['::ffff:0:0/97', '::ffff:128.0.0.0/97'], 'IPv4'],
      [['0.0.0.0/1', '::ffff:128.0.0.0/97'], 'IPv4'],
      // All of IPv6 (so all of IPv4 too), the IPv4 part as IPv6 addresses or as IPv4 ones.
      [[...allButIpv4AsIpv6, '::ffff:0:0/97', '::ffff:128.0.0.0/97'], 'IPv4 and IPv6'],
      [[...allButIpv4AsIpv6, '0.0.0.0/1', '128.0.0.0/1'], 'IPv4 and IPv6'],
    ] as const) {
      expect(trustedProxiesError(entries), entries.join(',')).toMatch(
        new RegExp(`entries together trust every ${family} address`),
      )
      expect(() => clientAddresses(entries), entries.join(',')).toThrow(/together trust every/)
    }
    // Nearly everything (one address short), wide ranges, both halves of a smaller one: taken.
    for (const entries of [
      ['0.0.0.0/1', '128.0.0.0/2', '192.0.0.0/3'],
      allButLastIpv4,
      ['10.0.0.0/9', '10.128.0.0/9', 'fd00::/9', 'fd80::/9'],
      ['8000::/1', '4000::/2', '2000::/3', '::ffff:0:0/97'],
      ['10.0.0.0/8', '192.0.2.7', 'fd00::/8', 'fe80::1%eth0'],
      allButIpv4AsIpv6,
      [...allButIpv4AsIpv6, '::ffff:0:0/97', '128.0.0.0/2'],
    ]) {
      expect(trustedProxiesError(entries), entries.join(',')).toBeUndefined()
      expect(() => clientAddresses(entries), entries.join(',')).not.toThrow()
    }
    // The most entries allowed, all of IPv4 in 256 /8s: computed, refused; 255 of them taken.
    const every8 = Array.from({ length: 256 }, (_, index) => `${index}.0.0.0/8`)
    expect(trustedProxiesError(every8)).toMatch(/256 entries together trust every IPv4/)
    expect(trustedProxiesError(every8.slice(1))).toBeUndefined()
  })
})

describe('trustedProxiesWarning', () => {
  it('names the share of IPv4 or IPv6 a list trusts past half, but not all (refused), as the union', () => {
    // Taken without a word before round 44 (round 43 decided: no refusal, a warning).
    // Every IPv4 address but the last, in 32 CIDRs (0.0.0.0/1, 128.0.0.0/2, …, 255.255.255.254/32).
    const allButLastIpv4 = Array.from({ length: 32 }, (_, k) => {
      const first = 2 ** 32 - 2 ** (32 - k)
      return `${[24, 16, 8, 0].map((shift) => Math.floor(first / 2 ** shift) % 256).join('.')}/${k + 1}`
    })
    for (const [entries, said] of [
      [['0.0.0.0/1', '128.0.0.0/2'], '2 entries together trust 75.00% of IPv4 as proxies'],
      [['0.0.0.0/1', '128.0.0.0/2', '192.0.0.0/3'], '87.50% of IPv4'],
      // Overlapping entries count once: 0/1 holds 64/2 (so 62.5%, not 87.5%).
      [['0.0.0.0/1', '64.0.0.0/2', '128.0.0.0/3'], '62.50% of IPv4'],
      // Cut, not rounded: never "100.00%" for a list short of all.
      [allButLastIpv4, '32 entries together trust 99.99% of IPv4'],
      [['0.0.0.0/1', '200.0.0.0/5'], '53.12% of IPv4'],
      [['8000::/1', '4000::/2'], '75.00% of IPv6'],
      [['0.0.0.0/1', '128.0.0.0/2', '8000::/1', '4000::/2'], '75.00% of IPv4 and 75.00% of IPv6'],
      // IPv4 through the IPv6 addresses it has on a dual-stack server.
      [['::ffff:0:0/97', '::ffff:128.0.0.0/98'], '75.00% of IPv4'],
    ] as const) {
      const warning = trustedProxiesWarning(entries)
      expect(warning, entries.join(',')).toContain(said)
      expect(warning).toContain('Is a prefix mistyped (/1 for /16)?')
    }
    // Half or less, all (refused, not warned), wide but well under half: no warning.
    for (const entries of [
      ['0.0.0.0/1'],
      ['128.0.0.0/1', '128.0.0.0/2'],
      ['10.0.0.0/8', '192.0.2.7', 'fd00::/8', 'fe80::1%eth0'],
      ['2000::/3'],
      ['0.0.0.0/1', '128.0.0.0/1'],
      [],
    ]) {
      expect(trustedProxiesWarning(entries), entries.join(',')).toBeUndefined()
    }
  })

  it('is a start-up warning of toolsel serve', async () => {
    const wide = await runCli(['serve', '--print-config'], {
      TOOLSEL_TRUSTED_PROXIES: '10.0.0.0/8,0.0.0.0/1,128.0.0.0/2',
    })
    expect(wide.code).toBe(0)
    expect(wide.stderr).toContain(
      "server.trustedProxies: its 3 entries together trust 75.00% of IPv4 as proxies: a client at any of those addresses can write any address in the forwarding header (past the request rate and the connection limit). Is a prefix mistyped (/1 for /16)? List the proxies' own addresses or subnets (e.g. 10.0.0.0/8).",
    )
    const narrow = await runCli(['serve', '--print-config'], {
      TOOLSEL_TRUSTED_PROXIES: '10.0.0.0/8',
    })
    expect(narrow.code).toBe(0)
    expect(narrow.stderr).not.toContain('server.trustedProxies')
  })
})

/** The IPv6 CIDRs that together hold first..last (each as large as its start allows). */
function cidrs(first: bigint, last: bigint): string[] {
  const out: string[] = []
  while (first <= last) {
    let bits = 0n
    while (
      bits < 128n &&
      first % (1n << (bits + 1n)) === 0n &&
      first + (1n << (bits + 1n)) - 1n <= last
    )
      bits += 1n
    const hex = first.toString(16).padStart(32, '0')
    out.push(`${hex.match(/.{4}/g)!.join(':')}/${128n - bits}`)
    first += 1n << bits
  }
  return out
}
