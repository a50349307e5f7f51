/**
 * What grouping a client's address costs (`addressGroup`, src/server/connection-limits.ts): the
 * rate limit (`server.readsPerMinute` / `writesPerMinute`) groups the address of every request it
 * counts, and the connection limit that of every new connection. Per address shape (IPv4, an IPv4
 * client of a dual-stack server as IPv4-mapped IPv6, IPv6), nanoseconds per call over `--calls`
 * calls, the least of `--passes` passes; with `--before DIR` (a checkout with `src/`, e.g.
 * /work/ci-base) that checkout's `addressGroup` in the same passes, the two alternating.
 *
 *   node --import tsx bench/address-group-cost.ts [--calls 100000] [--passes 9] [--before DIR]
 * @module
 */
import { join, resolve } from 'node:path'
import { pathToFileURL } from 'node:url'
import { benchArgs, usageError } from './bench-args.ts'
import { loadAverage } from './lib/measure.ts'

const { values } = benchArgs(import.meta.url, {
  options: {
    calls: { type: 'string', default: '100000' },
    passes: { type: 'string', default: '9' },
    before: { type: 'string' },
  },
})
const calls = Number(values.calls)
const passes = Number(values.passes)
if (!Number.isInteger(calls) || calls < 1 || !Number.isInteger(passes) || passes < 1) {
  usageError(import.meta.url, '--calls and --passes take positive whole numbers.')
}
// What it measures only once the flags are good: --help and a bad flag answer without it.
type Group = (address: string) => string
const ways: Array<[string, Group]> = [
  ['this checkout', (await import('../src/server/connection-limits.ts')).addressGroup],
]
if (values.before !== undefined) {
  const url = pathToFileURL(join(resolve(values.before), 'src/server/connection-limits.ts')).href
  ways.push([values.before, ((await import(url)) as { addressGroup: Group }).addressGroup])
}
const addresses = ['203.0.113.9', '::ffff:203.0.113.9', '2001:db8:0:1::5']
for (const address of addresses) {
  const groups = new Set(ways.map(([, group]) => group(address)))
  if (groups.size !== 1) throw new Error(`The ways group ${address} differently: ${[...groups]}`)
}
const least = new Map(ways.map(([name]) => [name, addresses.map(() => Infinity)]))
for (let pass = 0; pass < passes; pass += 1) {
  for (let turn = 0; turn < ways.length; turn += 1) {
    const [name, group] = ways[pass % 2 === 0 ? turn : ways.length - 1 - turn]
    addresses.forEach((address, at) => {
      const started = process.hrtime.bigint()
      for (let call = 0; call < calls; call += 1) group(address)
      const nanos = Number(process.hrtime.bigint() - started) / calls
      least.get(name)![at] = Math.min(least.get(name)![at], nanos)
    })
  }
}
console.log(`ns per call, least of ${passes} passes of ${calls}; load average ${loadAverage()}\n`)
console.log(`| addressGroup of | ${ways.map(([name]) => name).join(' | ')} |`)
console.log(`| :-- | ${ways.map(() => '--:').join(' | ')} |`)
addresses.forEach((address, at) => {
  const cells = ways.map(([name]) => least.get(name)![at].toFixed(0))
  console.log(`| \`${address}\` | ${cells.join(' | ')} |`)
})
