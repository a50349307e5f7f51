/**
 * Open connections per client address. `server.maxConnections` bounds them all, so one address
 * holding every slot (idle connections renewed every `headersTimeoutMs`, ~100 new connections a
 * second at the defaults, no key needed) locked every other client out (bench/README round 27).
 * A connection from an address that already holds `perAddress` open ones is closed at once, as
 * Node closes one past `maxConnections`.
 * @module
 */
import type { Server } from 'node:http'
import type { Socket } from 'node:net'

/** Installs the limit on `server` (0: none). */
export function limitConnectionsPerAddress(server: Server, perAddress: number): void {
  if (perAddress === 0) return
  const open = new Map<string, number>()
  server.on('connection', (socket: Socket) => {
    const address = socket.remoteAddress ?? ''
    const count = open.get(address) ?? 0
    if (count >= perAddress) {
      socket.destroy()
      return
    }
    open.set(address, count + 1)
    socket.once('close', () => {
      const left = (open.get(address) ?? 1) - 1
      if (left === 0) open.delete(address)
      else open.set(address, left)
    })
  })
}
